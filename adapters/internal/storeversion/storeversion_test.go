package storeversion_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
)

// fixedStore is a store that tracks a version of its own.
type fixedStore struct {
	cache.Store
	version string
}

func (s fixedStore) LastStoreSyncResourceVersion() string { return s.version }

// Of reads the method when the store has it, whatever the client-go
// release: a store that tracks its version is read, not replaced.
func TestOfReadsAVersionedStore(t *testing.T) {
	store := fixedStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc), version: "42"}
	assert.True(t, storeversion.Tracked(store))
	f := storeversion.Of(store)
	require.NotNil(t, f)
	assert.Equal(t, "42", f())
}

// client-go's own store: from v0.36 it tracks its version (a bookmark moves
// it); before, it has no such method and Of answers "" (no gate). Each
// client-go release runs one branch: `make unit` the floor's, `make compat`
// the newest's.
func TestOfClientGoStore(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	f := storeversion.Of(store)
	require.NotNil(t, f)
	assert.Empty(t, f(), "nothing applied yet")
	b, ok := store.(interface{ Bookmark(string) })
	if !storeversion.Tracked(store) {
		assert.False(t, ok, "a store without a version has no bookmarks either")
		assert.Empty(t, f())
		return
	}
	require.True(t, ok)
	b.Bookmark("7")
	assert.Equal(t, "7", f())
}

// A nil store gives a nil func: no cache to hold a sync back.
func TestOfNil(t *testing.T) {
	assert.Nil(t, storeversion.Of(nil))
	assert.False(t, storeversion.Tracked(nil))
}

// The fast path is pinned to the client-go release: a binary built at
// v0.36 or newer (`make compat`, v0.37.2) must track the stores' versions,
// one built before (the floor of adapters/go.mod, v0.33, `make unit`) must
// not. A client-go that drops or renames LastStoreSyncResourceVersion, or
// turns AtomicFIFO off by default, fails here rather than silently turning
// the consistency gate off.
func TestActiveAtThisClientGo(t *testing.T) {
	minor, ok := storeversion.ClientGoMinor()
	require.True(t, ok, "the test binary names its k8s.io/client-go version")
	want := minor >= storeversion.TrackedFrom
	assert.Equal(t, want, storeversion.Active(), "client-go v0.%d: the stores track their version: %v", minor, want)
	assert.Equal(t, want, storeversion.Tracked(cache.NewStore(cache.MetaNamespaceKeyFunc)), "client-go v0.%d", minor)
}

// ErrUntracked refuses exactly where the stores track no version: before
// client-go v0.36 it names the release, with AtomicFIFO off the gate, and
// it says nothing where versions are tracked.
func TestErrUntracked(t *testing.T) {
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	err := storeversion.ErrUntracked(store)
	switch {
	case !storeversion.Tracked(store):
		assert.ErrorContains(t, err, "needs client-go v0.36 or newer")
	case !storeversion.Active():
		assert.ErrorContains(t, err, "AtomicFIFO feature gate")
	default:
		assert.NoError(t, err)
	}
	assert.Equal(t, storeversion.Active(), err == nil, "refused exactly when the versions are not tracked")
}

// With client-go's AtomicFIFO gate turned off through its environment
// variable, Active is false and ErrUntracked names the gate: a production
// profile is refused at construction rather than running without the
// versions it relies on. Before client-go v0.36 the stores track nothing
// and the release is named instead. The environment is read once per
// process, so the check runs in a child process of this test binary.
func TestErrUntrackedWithAtomicFIFOOff(t *testing.T) {
	if os.Getenv("STOREVERSION_TEST_CHILD") == "1" {
		fmt.Printf("active=%t\n", storeversion.Active())
		fmt.Printf("err=%v\n", storeversion.ErrUntracked(cache.NewStore(cache.MetaNamespaceKeyFunc)))
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestErrUntrackedWithAtomicFIFOOff$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STOREVERSION_TEST_CHILD=1", "KUBE_FEATURE_AtomicFIFO=false")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "active=false", "KUBE_FEATURE_AtomicFIFO=false turns the stores' versions off")
	minor, ok := storeversion.ClientGoMinor()
	require.True(t, ok, "the test binary names its k8s.io/client-go version")
	if minor >= storeversion.TrackedFrom {
		assert.Contains(t, string(out), "needs client-go's AtomicFIFO feature gate, which is off")
	} else {
		assert.Contains(t, string(out), "needs client-go v0.36 or newer")
	}
}
