package reconcile_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// Issue 15: the consistency gate in Controller.Sync. A sync is
// deferred, before anything is read, while the pods' or the owners' cache
// is older than the controller's own last write of that resource for the
// owner; the writes are the pod creates and adoption patches (under pods)
// and the status writes (under Config.Resource), never releases or deletes.

// cacheVersion is a cache version the test sets; safe for concurrent use.
type cacheVersion struct {
	mu sync.Mutex
	v  string
}

func (c *cacheVersion) get() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.v
}

func (c *cacheVersion) set(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.v = v
}

// countingOwners counts the cache reads (Get) of a recOwners.
type countingOwners struct {
	*recOwners
	mu   sync.Mutex
	gets int
}

func (o *countingOwners) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	o.mu.Lock()
	o.gets++
	o.mu.Unlock()
	return o.recOwners.Get(namespace, name)
}

func (o *countingOwners) reads() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gets
}

// deferrals records Gate.Deferred calls.
type deferrals struct {
	mu    sync.Mutex
	calls []expectations.StaleCacheError
}

func (d *deferrals) hook(_ string, err *expectations.StaleCacheError) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, *err)
}

func (d *deferrals) n() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.calls)
}

// gateRig is a Controller of the ReplicaSet default/web (UID uid-web,
// resourceVersion 60 in the cache) over the recording fakes, with cache
// versions the test sets.
type gateRig struct {
	*recController
	owners           *countingOwners
	podsRV, ownersRV cacheVersion // what CacheVersions report
	deferred         deferrals
	rs               *appsv1.ReplicaSet
	statusWrites     int // the status writes' resourceVersions count up from 70
}

const gateKey = "default/web"

func newGateRig(t *testing.T, replicas int32, pods []*corev1.Pod, tune func(*reconcile.Config[*appsv1.ReplicaSet])) *gateRig {
	t.Helper()
	g := &gateRig{rs: recRS(replicas)}
	g.rs.ResourceVersion = "60"
	g.owners = &countingOwners{recOwners: newRecOwners(g.rs)}
	g.recController = newRecController(t, g.owners.recOwners, pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.Owners = g.owners
		cfg.Cluster.CachesSynced = alwaysSynced
		cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: g.podsRV.get, Owners: g.ownersRV.get}
		cfg.Hooks.Deferred = g.deferred.hook
		if tune != nil {
			tune(cfg)
		}
	})
	return g
}

// written makes the status writes return a new object, as the API server
// does after an update, with resourceVersions 70, 71, ...
func (g *gateRig) written() {
	g.status.ret = func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
		out := rs.DeepCopy()
		out.ResourceVersion = strconv.Itoa(70 + g.statusWrites)
		g.statusWrites++
		return out
	}
}

// reads is what a sync read: owner cache reads, pod listings, creates,
// status writes.
type gateReads struct{ owners, lists, creates, statuses int }

func (g *gateRig) reads() gateReads {
	g.pods.mu.Lock()
	lists := g.pods.calls
	g.pods.mu.Unlock()
	return gateReads{g.owners.reads(), lists, len(g.control.creates()), len(g.status.writes())}
}

func written(_ testing.TB, tr *expectations.Gate, resource schema.GroupResource) string {
	rv, ok := tr.Written(gateKey, resource)
	if !ok {
		return "none"
	}
	return rv
}

// Sync defers exactly when upstream's syncReplicaSet would — some
// recorded resource's cache version compares older than the write — and
// then returns the typed error without reading the owner, listing pods,
// checking expectations or writing anything. "" (a store that tracks no
// version), an unsupplied cache and a version that does not compare never
// defer; a sync that passes drops the record.
func TestGateDefersExactlyWhenACacheIsBehind(t *testing.T) {
	cases := []struct {
		name         string
		pods, owners string
		noPodsCache  bool // CacheVersions.Pods nil
		wantResource string
		wantWritten  string
		wantRead     string
		wantDeferred bool
	}{
		{name: "R-10.9 both caches at the writes: passes", pods: "102", owners: "70"},
		{name: "R-10.9 both caches past the writes: passes", pods: "500", owners: "900"},
		{name: "R-10.9 pods cache one behind the last create: deferred", pods: "101", owners: "70",
			wantDeferred: true, wantResource: "pods", wantWritten: "102", wantRead: "101"},
		{name: "R-10.9 owners cache behind the status write: deferred", pods: "102", owners: "69",
			wantDeferred: true, wantResource: "replicasets.apps", wantWritten: "70", wantRead: "69"},
		{name: "R-10.9 pods cache empty (no version tracked): passes", pods: "", owners: "70"},
		{name: "R-10.9 owners cache empty (no version tracked): passes", pods: "102", owners: ""},
		{name: "R-10.9 pods cache not comparable: passes", pods: "x7", owners: "70"},
		{name: "R-10.9 pods cache not supplied: passes", noPodsCache: true, owners: "70"},
		{name: "R-10.9 pods cache not supplied, owners behind: deferred", noPodsCache: true, owners: "1",
			wantDeferred: true, wantResource: "replicasets.apps", wantWritten: "70", wantRead: "1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateRig(t, 3, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				if tc.noPodsCache {
					cfg.Cluster.CacheVersions.Pods = nil
				}
			})
			g.written()
			tr := g.Tracker()
			// First sync: nothing recorded, so no gate; 3 creates (RVs
			// 100-102) and a status write (RV 70) are recorded.
			_, err := g.Sync(t.Context(), gateKey)
			require.NoError(t, err)
			require.Equal(t, "102", written(t, g.Gate(), expectations.PodsResource))
			require.Equal(t, "70", written(t, g.Gate(), rsResource))
			before := g.reads()
			pending, _, _ := tr.Pending(gateKey)

			g.podsRV.set(tc.pods)
			g.ownersRV.set(tc.owners)
			res, err := g.Sync(t.Context(), gateKey)
			after := g.reads()
			var stale *expectations.StaleCacheError
			if !tc.wantDeferred {
				require.NoError(t, err)
				assert.False(t, errors.As(err, &stale))
				assert.Equal(t, before.owners+1, after.owners, "the owner is read")
				assert.Equal(t, before.lists+1, after.lists, "the pods are listed")
				assert.Zero(t, g.deferred.n())
				assert.Equal(t, "none", written(t, g.Gate(), expectations.PodsResource), "R-10.9: caught up, the record is dropped")
				assert.Equal(t, "71", written(t, g.Gate(), rsResource), "only this sync's status write is recorded")
				return
			}
			require.Error(t, err)
			require.True(t, errors.As(err, &stale), "errors.As finds the typed error: %v", err)
			assert.False(t, errors.Is(err, reconcile.ErrTerminal), "retried, not dropped")
			assert.ErrorContains(t, err, "reconcile: owner default/web")
			assert.Equal(t, gateKey, stale.Key)
			assert.Equal(t, tc.wantResource, stale.Resource.String())
			assert.Equal(t, tc.wantWritten, stale.Written)
			assert.Equal(t, tc.wantRead, stale.Read)
			assert.Equal(t, reconcile.SyncResult{}, res)
			assert.Equal(t, before, after, "nothing read, nothing written")
			assert.Equal(t, []expectations.StaleCacheError{*stale}, g.deferred.calls, "Gate.Deferred: once per deferral")
			stillPending, _, _ := tr.Pending(gateKey)
			assert.Equal(t, pending, stillPending, "expectations untouched")
			assert.Equal(t, "102", written(t, g.Gate(), expectations.PodsResource), "the record is kept")
			assert.Equal(t, "70", written(t, g.Gate(), rsResource))

			// Once the caches catch up the sync runs.
			g.podsRV.set("102")
			g.ownersRV.set("70")
			_, err = g.Sync(t.Context(), gateKey)
			require.NoError(t, err)
			assert.Equal(t, before.owners+1, g.reads().owners)
		})
	}
}

// Without CacheVersions (the zero value) the gate has nothing to compare:
// Sync never defers, as before issue 15, and the records do not pile up —
// each passing sync drops the last one, and deleting the owner drops the
// rest (Len 0).
func TestGateWithoutCacheVersionsNeverDefers(t *testing.T) {
	var d deferrals
	c := newRecController(t, newRecOwners(recRS(3)), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Hooks.Deferred = d.hook
	})
	c.status.ret = func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
		out := rs.DeepCopy()
		out.ResourceVersion = "70"
		return out
	}
	for i := range 3 {
		_, err := c.Sync(t.Context(), gateKey)
		require.NoError(t, err, "sync %d", i)
		c.owners.set(recRS(int32(3 + i + 1))) // scale up: more creates
	}
	assert.Zero(t, d.n())
	assert.Len(t, c.control.creates(), 3, "pending expectations hold the later rounds back, not the gate")
	assert.Equal(t, 1, c.Len())
	c.OwnerDeleted(recRS(0))
	assert.Zero(t, c.Len(), "no record leaks")
}

// DisableConsistencyGate never defers, however far behind the caches are;
// the writes are still recorded, for EvidenceFirst.
func TestGateDisabledNeverDefers(t *testing.T) {
	g := newGateRig(t, 3, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.DisableConsistencyGate = true
		cfg.Expectations.Exact = true
	})
	g.written()
	g.podsRV.set("1")
	g.ownersRV.set("1")
	for i := range 3 {
		_, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err, "sync %d", i)
	}
	assert.Zero(t, g.deferred.n())
	assert.Equal(t, 3, g.reads().owners)
	tr := g.Tracker()
	assert.Equal(t, "102", written(t, g.Gate(), expectations.PodsResource), "recorded though the gate is off")
	assert.Equal(t, "72", written(t, g.Gate(), rsResource))
	snap, _ := tr.Snapshot(gateKey)
	assert.Equal(t, "102", snap.WriteRV, "the creates feed EvidenceFirst")
	assert.Equal(t, expectations.WaitingForCache, snap.Resolution, "CacheVersions.Pods feeds EvidenceFirst")
}

// a sync that finds the owner gone drops the record whatever its
// UID; the owner's delete event drops only a record of the same UID; a
// write for a recreated owner (another UID) replaces the old record.
func TestGateRecordClearing(t *testing.T) {
	t.Run("R-10.9 NotFound clears a record of any UID", func(t *testing.T) {
		// The gate off, so that the sync reaches the owner read while the
		// caches are behind; with it on, a passing gate has already
		// cleared the record.
		g := newGateRig(t, 3, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.DisableConsistencyGate = true })
		_, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		g.Gate().Wrote(gateKey, "uid-someone-else", expectations.PodsResource, "200")
		require.Equal(t, "200", written(t, g.Gate(), expectations.PodsResource))
		g.owners.remove(g.rs)
		_, err = g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		assert.Equal(t, "none", written(t, g.Gate(), expectations.PodsResource))
		assert.Equal(t, "none", written(t, g.Gate(), rsResource))
		assert.Zero(t, g.Len())
	})
	t.Run("R-10.9 OwnerDeleted clears only the same UID", func(t *testing.T) {
		g := newGateRig(t, 3, nil, nil)
		_, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		other := g.rs.DeepCopy()
		other.UID = "uid-earlier"
		g.OwnerDeleted(other) // the late delete event of an earlier owner
		assert.Equal(t, "102", written(t, g.Gate(), expectations.PodsResource), "another UID's delete keeps the record")
		assert.Equal(t, 1, g.Len(), "Len counts the record")
		g.OwnerDeleted(g.rs)
		assert.Equal(t, "none", written(t, g.Gate(), expectations.PodsResource))
		assert.Equal(t, "none", written(t, g.Gate(), rsResource))
		assert.Zero(t, g.Len())
	})
	t.Run("R-10.9 OwnerUpdated to a new UID clears the old UID's record", func(t *testing.T) {
		g := newGateRig(t, 3, nil, nil)
		_, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		recreated := recRS(3)
		recreated.UID = "uid-web-2"
		g.OwnerUpdated(g.rs, recreated)
		assert.Equal(t, "none", written(t, g.Gate(), expectations.PodsResource))
		assert.Zero(t, g.Len())
	})
	t.Run("R-10.9 a recreated owner's write replaces the record", func(t *testing.T) {
		g := newGateRig(t, 3, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.DisableConsistencyGate = true })
		_, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		require.Equal(t, "60", written(t, g.Gate(), rsResource), "a skipped status write records the cached version")
		// Recreated under the same name, seen only through the cache: its
		// sync creates pods, and its skipped status write records its own
		// cached version.
		recreated := recRS(3)
		recreated.UID, recreated.ResourceVersion = "uid-web-2", "80"
		g.owners.set(recreated)
		g.Tracker().Delete(gateKey) // the old owner's round does not hold the new one back
		_, err = g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		assert.Equal(t, "105", written(t, g.Gate(), expectations.PodsResource), "the new owner's creates")
		assert.Equal(t, "80", written(t, g.Gate(), rsResource), "replaced, not merged: the old owner's status write (60) is gone")
		g.OwnerDeleted(g.rs) // the old owner's late delete event
		assert.Equal(t, "105", written(t, g.Gate(), expectations.PodsResource), "the new owner's record survives")
		g.OwnerDeleted(recreated)
		assert.Equal(t, "none", written(t, g.Gate(), expectations.PodsResource))
	})
}

// what is recorded. Every successful create, whatever the
// creation mode and policy; every adoption patch; the status write's
// server's answer under Config.Resource (the cached owner's version when
// the write was skipped, nothing for a failed write); never a
// release, a delete or a failed create.
func TestGateRecordsTheControllersWrites(t *testing.T) {
	t.Run("R-10.9 creates, whatever the mode", func(t *testing.T) {
		for _, mode := range []struct{ track, exact bool }{{false, false}, {true, false}, {false, true}} {
			g := newGateRig(t, 3, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.SetTrackCreations(mode.track)
				cfg.Expectations.Exact = mode.exact
			})
			_, err := g.Sync(t.Context(), gateKey)
			require.NoError(t, err)
			assert.Equal(t, "102", written(t, g.Gate(), expectations.PodsResource), "%+v", mode)
		}
	})
	t.Run("R-10.9 failed creates are not recorded", func(t *testing.T) {
		g := newGateRig(t, 3, nil, nil)
		g.control.CreateErr = func(_ context.Context, _ *corev1.Pod, call int) error {
			if call > 0 {
				return errRecQuota
			}
			return nil
		}
		_, err := g.Sync(t.Context(), gateKey)
		require.ErrorIs(t, err, errRecQuota)
		assert.Equal(t, "100", written(t, g.Gate(), expectations.PodsResource))
	})
	t.Run("R-10.9 adoption recorded, release not", func(t *testing.T) {
		rs := recRS(2)
		match := podtest.Labels(map[string]string{"app": "web"})
		pods := []*corev1.Pod{
			podtest.New("orphan", match, podtest.ResourceVersion("10")),
			podtest.New("mine", match, podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.ResourceVersion("11")),
			podtest.New("strayed", podtest.Labels(map[string]string{"app": "other"}),
				podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"), podtest.ResourceVersion("12")),
		}
		inner, next := &recPatcher{}, 300
		g := newGateRig(t, 2, pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
			cfg.Cluster.PodClient = withPatcher(cfg.Cluster.PodClient, patchFunc(func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
				out, err := inner.PatchPod(ctx, pod, data)
				if err == nil {
					out.ResourceVersion = strconv.Itoa(next) // the server's new version
					next += 100
				}
				return out, err
			}))
		})
		res, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		require.Len(t, res.Adopted, 1)
		require.Len(t, res.Released, 1)
		patches := inner.recorded()
		require.Len(t, patches, 2)
		require.Equal(t, []string{"default/orphan", "default/strayed"}, []string{patches[0].Pod, patches[1].Pod})
		assert.Equal(t, "300", written(t, g.Gate(), expectations.PodsResource), "the adoption's version (300), not the release's (400)")
		assert.Empty(t, g.control.creates(), "2 active pods: nothing created")
	})
	t.Run("R-10.9 deletes are not recorded", func(t *testing.T) {
		rs := recRS(1)
		mine := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
		match := podtest.Labels(map[string]string{"app": "web"})
		pods := []*corev1.Pod{podtest.New("a", mine, match), podtest.New("b", mine, match), podtest.New("c", mine, match)}
		g := newGateRig(t, 1, pods, nil)
		res, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		require.Len(t, res.Outcome.Deleted, 2)
		assert.Equal(t, "none", written(t, g.Gate(), expectations.PodsResource))
	})
	t.Run("R-10.9 status writes under Config.Resource", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			ret  func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet
			err  error
			want string
		}{
			{"written: the server's version", func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
				out := rs.DeepCopy()
				out.ResourceVersion = "77"
				return out
			}, nil, "77"},
			{"skipped: the cached owner's version", nil, nil, "60"},
			{"no resourceVersion: nothing recorded", func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
				out := rs.DeepCopy()
				out.ResourceVersion = ""
				return out
			}, nil, "none"},
			{"failed: nothing recorded", nil, errRecQuota, "none"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				g := newGateRig(t, 0, nil, nil)
				g.status.ret, g.status.err = tc.ret, tc.err
				_, err := g.Sync(t.Context(), gateKey)
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, tc.want, written(t, g.Gate(), rsResource))
			})
		}
	})
	t.Run("R-10.9 no Resource: status writes not recorded", func(t *testing.T) {
		g := newGateRig(t, 0, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
			cfg.Cluster.Resource = schema.GroupResource{}
			cfg.Cluster.CacheVersions.Owners = nil
		})
		g.written()
		_, err := g.Sync(t.Context(), gateKey)
		require.NoError(t, err)
		assert.Equal(t, "none", written(t, g.Gate(), rsResource))
		assert.Zero(t, g.Len(), "nothing recorded, nothing pending")
	})
}

// NewController: an owners' cache without the owners' resource, or with the
// pods' resource, is an error.
func TestGateConfig(t *testing.T) {
	full := func() reconcile.Config[*appsv1.ReplicaSet] {
		cfg := reconcile.ReplicaSets()
		cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = newRecOwners(), &recPodList{}, podClient{&recPods{}, &recPatcher{}}
		cfg.Cluster.CachesSynced = alwaysSynced
		(&recStatus{}).use(&cfg)
		return cfg
	}
	assert.Equal(t, "replicasets.apps", full().Cluster.Resource.String(), "ReplicaSets() sets Cluster.Resource")
	v := func() string { return "1" }
	for _, tc := range []struct {
		name string
		tune func(*reconcile.Config[*appsv1.ReplicaSet])
		want string
	}{
		{"owners' cache without Resource", func(c *reconcile.Config[*appsv1.ReplicaSet]) {
			c.Cluster.CacheVersions.Owners = v
			c.Cluster.Resource = schema.GroupResource{}
		}, "Config.Cluster.CacheVersions.Owners is set without Config.Cluster.Resource"},
		{"Resource is pods", func(c *reconcile.Config[*appsv1.ReplicaSet]) {
			c.Cluster.CacheVersions.Owners = v
			c.Cluster.Resource = expectations.PodsResource
		}, "Config.Cluster.Resource is pods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := full()
			tc.tune(&cfg)
			c, err := reconcile.NewController(cfg)
			assert.Nil(t, c)
			require.Error(t, err)
			assert.ErrorContains(t, err, "reconcile: NewController: "+tc.want)
		})
	}
	// Both versions with the owners' resource are accepted.
	cfg := full()
	cfg.Cluster.CacheVersions = reconcile.CacheVersions{Pods: v, Owners: v}
	_, err := reconcile.NewController(cfg)
	require.NoError(t, err)
}

// gateModel is the property's model of the gate record: the newest
// resourceVersion of the controller's own writes since the last sync the
// gate let through, per resource (0: none). Pod writes come from the
// PodControl and PodPatcher goroutines of a sync.
type gateModel struct {
	mu           sync.Mutex
	pods, owners int64
}

func (m *gateModel) wrote(field *int64, rv string) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		panic("gateModel: resourceVersion " + rv)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	*field = max(*field, n)
}

func (m *gateModel) get() (pods, owners int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pods, m.owners
}

func (m *gateModel) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pods, m.owners = 0, 0
}

func rvString(n int64) string {
	if n == 0 {
		return "none"
	}
	return strconv.FormatInt(n, 10)
}

// on the simulated cluster (reconcile/internal/cluster), against a model of
// the record. Random schedules of syncs, pod event deliveries (the informer
// lags as far as the schedule lets it, often past the TTL), clock steps
// across the 5-minute TTL, replica changes, kubelet steps, failing creates,
// pods deleted behind the controller's back, an orphan to adopt, status
// writes that are made or skipped and an owner cache that lags them. After
// every sync:
//   - the sync was deferred exactly when the model says a cache is behind
//     one of the controller's writes since the last sync that passed;
//   - a deferred sync read and wrote nothing (no owner read, no listing, no
//     API call, no patch, no status write), and Gate.Deferred counted it;
//   - the Tracker's record equals the model: every create and adoption
//     under pods, every status write under replicasets, no release;
//   - the owner never has more live pods than max(desired, live before the
//     step) plus the pods adopted in the step — even when the expectations
//     expire while the cache is behind, which without the gate over-creates
//     (kubernetes#129795).
//
// Once the caches catch up, no sync is deferred and the owner converges.
func TestPropertyGateDefersExactlyWhenACacheIsBehind(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := cluster.New(cluster.Options{Seed: rapid.Uint64().Draw(t, "seed"), GracefulDeletion: rapid.Bool().Draw(t, "graceful"), Nodes: 2})
		labels := map[string]string{"app": "web"}
		rs := cluster.NewReplicaSet("default", "web", int32(rapid.IntRange(0, 10).Draw(t, "replicas")), labels)
		rs.ResourceVersion = "1"
		ownerRV, ownerCache := int64(1), int64(1) // the owners' API and cache, as versions
		var model gateModel

		owners := &countingOwners{recOwners: newRecOwners(rs)}
		var lists, statuses, patches, deferredHook int
		inner := &recPatcher{api: c.API}
		burst := rapid.IntRange(1, 4).Draw(t, "burst")
		cfg := reconcile.ReplicaSets()
		cfg.Cluster.Owners = owners
		cfg.Cluster.CachesSynced = alwaysSynced
		cfg.Cluster.Pods = podsFunc(func(ns string) ([]*corev1.Pod, error) {
			lists++
			return informerPods(c).List(ns)
		})
		cfg.Cluster.PodClient = podFuncs{
			Create: func(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
				p, err := c.Client.CreatePod(ctx, pod)
				if err == nil {
					model.wrote(&model.pods, p.ResourceVersion)
				}
				return p, err
			},
			Delete: c.Client.DeletePod,
			Patch: func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
				patches++ // claiming runs on the sync's goroutine
				p, err := inner.PatchPod(ctx, pod, data)
				if err == nil && cluster.ControllerOf(pod) == nil {
					model.wrote(&model.pods, p.ResourceVersion) // an adoption; a release records nothing
				}
				return p, err
			},
		}
		cfg.Status = func(cached *appsv1.ReplicaSet, _ reconcile.SyncResult) (*appsv1.ReplicaSet, bool) {
			statuses++
			if rapid.Bool().Draw(t, "statusChanged") {
				return cached.DeepCopy(), true
			}
			model.wrote(&model.owners, cached.ResourceVersion) // skipped: the cached owner's version
			return nil, false
		}
		cfg.Cluster.StatusWriter = statusFunc[*appsv1.ReplicaSet](func(_ context.Context, next *appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
			ownerRV++
			out := next.DeepCopy()
			out.ResourceVersion = strconv.FormatInt(ownerRV, 10)
			model.wrote(&model.owners, out.ResourceVersion)
			return out, nil
		})
		cfg.Cluster.CacheVersions = reconcile.CacheVersions{
			Pods:   c.Informer.LastSyncResourceVersion,
			Owners: func() string { return strconv.FormatInt(ownerCache, 10) },
		}
		cfg.Hooks.Deferred = func(string, *expectations.StaleCacheError) { deferredHook++ }
		cfg.Clock = c.Clock
		cfg.BurstReplicas = burst
		cfg.SetTrackCreations(rapid.Bool().Draw(t, "track"))
		ctrl, err := reconcile.NewController(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Informer.Handler = cluster.Handler{
			OnAdd:    func(p *corev1.Pod) { ctrl.PodAdded(p) },
			OnUpdate: func(o, p *corev1.Pod) { ctrl.PodUpdated(o, p) },
			OnDelete: func(p *corev1.Pod) { ctrl.PodDeleted(p) },
		}
		if _, err := c.API.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan", Labels: labels}}); err != nil {
			t.Fatal(err)
		}
		failEvery := rapid.IntRange(0, 4).Draw(t, "failEvery")
		c.Client.Faults.Create = func(call int, _ *corev1.Pod) cluster.Fault {
			if failEvery > 0 && call%failEvery == 0 {
				return cluster.FailBefore
			}
			return cluster.NoFault
		}
		live := func() int {
			pods, _ := c.API.List()
			n := 0
			for _, p := range pods {
				if ref := cluster.ControllerOf(p); ref != nil && ref.UID == rs.UID && podrank.IsActive(p) {
					n++
				}
			}
			return n
		}
		deferrals := 0
		// sync runs one sync and checks it against the model; it returns
		// the pods adopted and whether the gate deferred the sync.
		sync := func() (adopted int, deferred bool) {
			mp, mo := model.get()
			podsCache, _ := strconv.ParseInt(c.Informer.LastSyncResourceVersion(), 10, 64)
			want := (mp > 0 && podsCache < mp) || (mo > 0 && ownerCache < mo)
			if !want {
				model.clear() // the gate passes and drops the record
			}
			gets, listed, st, patched, calls := owners.reads(), lists, statuses, patches, c.Client.Stats()
			res, err := ctrl.Sync(t.Context(), gateKey)
			var stale *expectations.StaleCacheError
			deferred = errors.As(err, &stale)
			if deferred != want {
				t.Fatalf("deferred %v (%v), want %v: pods cache %d, owners cache %d, model record pods %s owners %s",
					deferred, err, want, podsCache, ownerCache, rvString(mp), rvString(mo))
			}
			if deferred {
				deferrals++
				if owners.reads() != gets || lists != listed || statuses != st || patches != patched || c.Client.Stats() != calls {
					t.Fatalf("a deferred sync read or wrote something")
				}
				if errors.Is(err, reconcile.ErrTerminal) {
					t.Fatalf("the gate's error is terminal: %v", err)
				}
			} else if err != nil && res.ManageErr == nil {
				t.Fatalf("sync: %v", err)
			}
			mp, mo = model.get()
			gotPods, gotOwners := written(nil, ctrl.Gate(), expectations.PodsResource), written(nil, ctrl.Gate(), rsResource)
			if gotPods != rvString(mp) || gotOwners != rvString(mo) {
				t.Fatalf("record pods %s owners %s, model pods %s owners %s", gotPods, gotOwners, rvString(mp), rvString(mo))
			}
			if deferredHook != deferrals {
				t.Fatalf("Gate.Deferred called %d times for %d deferrals", deferredHook, deferrals)
			}
			return len(res.Adopted), deferred
		}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			prev, adopted := live(), 0
			switch rapid.SampledFrom([]string{"sync", "sync", "deliver", "owners", "clock", "scale", "kubelet", "behindBack"}).Draw(t, "action") {
			case "sync":
				adopted, _ = sync()
			case "deliver":
				c.Informer.Deliver(rapid.IntRange(1, 8).Draw(t, "events"))
			case "owners":
				ownerCache = rapid.Int64Range(ownerCache, ownerRV).Draw(t, "ownerCache")
				rs.ResourceVersion = strconv.FormatInt(ownerCache, 10)
			case "clock":
				c.Clock.Step(rapid.SampledFrom([]time.Duration{time.Second, time.Minute, expectations.DefaultTTL + time.Second}).Draw(t, "step"))
			case "scale":
				r := int32(rapid.IntRange(0, 10).Draw(t, "to"))
				rs.Spec.Replicas = &r
			case "kubelet":
				c.Kubelet.Step()
			case "behindBack":
				pods, _ := c.API.List()
				if len(pods) > 0 {
					p := pods[rapid.IntRange(0, len(pods)-1).Draw(t, "victim")]
					_ = c.API.Delete(p.Namespace, p.Name)
				}
			}
			if n, bound := live(), max(int(*rs.Spec.Replicas), prev)+adopted; n > bound {
				t.Fatalf("%d live pods, more than max(desired %d, before %d) + %d adopted", n, *rs.Spec.Replicas, prev, adopted)
			}
		}
		// Drain: the caches catch up before every sync, so none is deferred.
		c.Client.Faults = cluster.Faults{}
		bound := 2*((10+burst-1)/burst) + 4
		for i := 0; ; i++ {
			c.Informer.DeliverAll()
			c.Kubelet.Step()
			c.Informer.DeliverAll()
			ownerCache = ownerRV
			rs.ResourceVersion = strconv.FormatInt(ownerCache, 10)
			if live() == int(*rs.Spec.Replicas) && ctrl.Tracker().Satisfied(gateKey) {
				return
			}
			if i == bound {
				t.Fatalf("no convergence after %d syncs: %d live, desired %d", bound, live(), *rs.Spec.Replicas)
			}
			if _, deferred := sync(); deferred {
				t.Fatalf("deferred although the caches caught up")
			}
		}
	})
}

// The Controller holds two values with their own lifetimes and wires them:
// its Tracker reads its evidence from its Gate, and forgetting an owner's
// expectations (Tracker.Delete) leaves the Gate's record.
func TestControllerWiresTheGate(t *testing.T) {
	g := newGateRig(t, 3, nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.DisableConsistencyGate = true })
	require.NotNil(t, g.Gate())
	assert.Same(t, g.Gate(), g.Tracker().Gate(), "the Tracker's evidence is the Controller's Gate")
	_, err := g.Sync(t.Context(), gateKey)
	require.NoError(t, err)
	g.Tracker().Delete(gateKey)
	assert.Equal(t, "102", written(t, g.Gate(), expectations.PodsResource), "Delete leaves the Gate's record")
	assert.Equal(t, 1, g.Len(), "Len counts the Gate's record")
}
