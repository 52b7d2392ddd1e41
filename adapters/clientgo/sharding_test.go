package clientgo_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/sharding"
)

// parsed returns the selector s as a list's restrictions carry it.
func parsed(t *testing.T, s string) string {
	t.Helper()
	sel, err := labels.Parse(s)
	require.NoError(t, err)
	return sel.String()
}

// ForShard adds the shard's bucket requirement to the pod informer's
// label selector, after the stamp's; Unsharded adds the label's absence.
// The stamp PodControl puts on pods does not change.
func TestOwnedPodsForShardAndUnsharded(t *testing.T) {
	s := sharding.Shard{Index: 3, Count: 16}
	owned, err := clientgo.NewOwnedPods(stamp, false)
	require.NoError(t, err)
	shardOwned, err := owned.ForShard(s)
	require.NoError(t, err)
	shardZero, err := clientgo.OwnedPods{}.ForShard(s)
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		owned     clientgo.OwnedPods
		want      string
		wantStamp map[string]string
	}{
		{name: "stamp, ForShard", owned: shardOwned, want: stampKey + "=rs-controller," + s.PodSelector(), wantStamp: stamp},
		{name: "zero, ForShard", owned: shardZero, want: s.PodSelector()},
		{name: "stamp, Unsharded", owned: owned.Unsharded(), want: stampKey + "=rs-controller," + sharding.UnstampedSelector(), wantStamp: stamp},
		{name: "zero, Unsharded", owned: clientgo.OwnedPods{}.Unsharded(), want: sharding.UnstampedSelector()},
		{name: "Unsharded after ForShard", owned: shardOwned.Unsharded(), want: stampKey + "=rs-controller," + sharding.UnstampedSelector(), wantStamp: stamp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := listRestrictions(t, tc.owned)
			assert.Equal(t, parsed(t, tc.want), r.Labels.String())
			assert.True(t, r.Fields.Empty())
			assert.Equal(t, tc.wantStamp, tc.owned.Labels(), "the stamp is unchanged")
		})
	}
	assert.Equal(t, stamp, owned.Labels())
	r := listRestrictions(t, owned)
	assert.Equal(t, stampKey+"=rs-controller", r.Labels.String(), "ForShard returns a new value; the receiver is unchanged")
}

func TestForShardRefusesAnInvalidShard(t *testing.T) {
	prod := mustProduction(t)
	for _, s := range []sharding.Shard{{}, {Index: 4, Count: 4}, {Index: -1, Count: 4}, {Index: 0, Count: sharding.Buckets + 1}} {
		t.Run(s.String(), func(t *testing.T) {
			_, err := clientgo.OwnedPods{}.ForShard(s)
			require.ErrorContains(t, err, "clientgo: OwnedPods.ForShard: sharding: ")
			_, err = prod.ForShard(s)
			require.ErrorContains(t, err, "clientgo: Production.ForShard: clientgo: OwnedPods.ForShard: sharding: ")
		})
	}
}

// A sharded Production's factory selects its stamped, unfinished pods of
// the shard; NewConfig takes it with that factory only: not the unsharded
// profile's, not another shard's, not the unstamped pods'. On client-go
// before v0.36 NewConfig refuses the profile whatever the factory
// (TestNewConfigWithProduction); the factory check comes first.
func TestProductionForShard(t *testing.T) {
	prod := mustProduction(t)
	s0, s1 := sharding.Shard{Index: 0, Count: 2}, sharding.Shard{Index: 1, Count: 2}
	p0, err := prod.ForShard(s0)
	require.NoError(t, err)
	p1, err := prod.ForShard(s1)
	require.NoError(t, err)
	p0again, err := prod.ForShard(s0)
	require.NoError(t, err)

	cl := fakecluster.New(1, fakecluster.Faults{})
	const refused = "clientgo: NewConfig: ConfigOptions.Production needs the pods' informer factory from the same Production's Factory"
	for _, tc := range []struct {
		name    string
		factory informers.SharedInformerFactory
		wantErr string
	}{
		{name: "its own factory", factory: p0.Factory(cl.Clientset, 0)},
		{name: "an equal profile's factory", factory: p0again.Factory(cl.Clientset, 0)},
		{name: "the unsharded profile's factory", factory: prod.Factory(cl.Clientset, 0), wantErr: refused},
		{name: "another shard's factory", factory: p1.Factory(cl.Clientset, 0), wantErr: refused},
		{name: "the unstamped pods' factory", factory: prod.Unsharded().Factory(cl.Clientset, 0), wantErr: refused},
		{name: "a plain factory", factory: plainFactory(cl.Clientset), wantErr: refused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apps := newWebApps()
			_, err := clientgo.NewConfig(cl.Clientset, tc.factory, apps.Kind(apps.Informer()), clientgo.ConfigOptions{Production: p0})
			switch {
			case tc.wantErr != "":
				require.ErrorContains(t, err, tc.wantErr)
			case !storesTracked():
				require.ErrorContains(t, err, "clientgo: NewConfig: ConfigOptions.Production needs client-go v0.36 or newer")
			default:
				require.NoError(t, err)
			}
		})
	}

	// The sharded profile's pod informer: the stamp, the shard and no
	// finished pods.
	r := factoryRestrictions(t, p0.Factory)
	assert.Equal(t, parsed(t, stampKey+"=rs-controller,"+s0.PodSelector()), r.Labels.String())
	assert.ElementsMatch(t, []string{"status.phase!=Succeeded", "status.phase!=Failed"}, strings.Split(r.Fields.String(), ","))
}

// factoryRestrictions returns the selectors of the first list the pod
// informer of a factory from newFactory sends.
func factoryRestrictions(t *testing.T, newFactory func(kubernetes.Interface, time.Duration, ...informers.SharedInformerOption) informers.SharedInformerFactory) k8stesting.ListRestrictions {
	t.Helper()
	cs := fake.NewClientset()
	var mu sync.Mutex
	var got []k8stesting.ListRestrictions
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, a.(k8stesting.ListAction).GetListRestrictions())
		return false, nil, nil
	})
	f := newFactory(cs, 0)
	inf := f.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, got)
	return got[0]
}
