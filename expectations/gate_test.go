package expectations_test

import (
	"errors"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/rv"
)

var (
	gatePods = expectations.PodsResource
	gateRS   = schema.GroupResource{Group: "apps", Resource: "replicasets"}
	gateCM   = schema.GroupResource{Resource: "configmaps"} // never given a cache
)

// versions is a set of settable cache versions, safe for concurrent use.
type versions struct {
	mu sync.Mutex
	v  map[schema.GroupResource]string
}

func (c *versions) set(gr schema.GroupResource, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v == nil {
		c.v = map[schema.GroupResource]string{}
	}
	c.v[gr] = v
}

func (c *versions) get(gr schema.GroupResource) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.v[gr]
}

// caches returns GateOptions.Caches for pods and replicasets over c.
func (c *versions) caches() map[schema.GroupResource]func() string {
	return map[schema.GroupResource]func() string{
		gatePods: func() string { return c.get(gatePods) },
		gateRS:   func() string { return c.get(gateRS) },
	}
}

type gateOp func(g *expectations.Gate)

func wrote(uid types.UID, gr schema.GroupResource, v string) gateOp {
	return func(g *expectations.Gate) { g.Wrote(rsKey, uid, gr, v) }
}

// TestWroteNewestWins pins how a write record keeps versions.
func TestWroteNewestWins(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ops   []gateOp
		gr    schema.GroupResource
		want  string
		found bool
	}{
		{"R-10.9 nothing written", nil, gatePods, "", false},
		{"R-10.9 a newer write replaces an older one", []gateOp{wrote("u1", gatePods, "10"), wrote("u1", gatePods, "12")}, gatePods, "12", true},
		{"R-10.9 an older write is ignored", []gateOp{wrote("u1", gatePods, "12"), wrote("u1", gatePods, "10")}, gatePods, "12", true},
		{"R-10.9 an equal write changes nothing", []gateOp{wrote("u1", gatePods, "12"), wrote("u1", gatePods, "12")}, gatePods, "12", true},
		{"R-10.9 numbers compare by value, not as text", []gateOp{wrote("u1", gatePods, "9"), wrote("u1", gatePods, "10")}, gatePods, "10", true},
		{"R-10.9 an unparseable write replaces (the comparison fails)", []gateOp{wrote("u1", gatePods, "12"), wrote("u1", gatePods, "x")}, gatePods, "x", true},
		{"R-10.9 a parseable write replaces an unparseable one", []gateOp{wrote("u1", gatePods, "x"), wrote("u1", gatePods, "3")}, gatePods, "3", true},
		{"R-10.9 resources are kept apart", []gateOp{wrote("u1", gatePods, "12"), wrote("u1", gateRS, "5")}, gatePods, "12", true},
		{"R-10.9 another UID replaces the whole record", []gateOp{wrote("u1", gatePods, "12"), wrote("u2", gateRS, "5")}, gatePods, "", false},
		{"R-10.9 another UID starts from its own write", []gateOp{wrote("u1", gatePods, "12"), wrote("u2", gatePods, "5")}, gatePods, "5", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr expectations.Gate // the zero Gate records
			for _, op := range tc.ops {
				op(&tr)
			}
			got, ok := tr.Written(rsKey, tc.gr)
			assert.Equal(t, tc.found, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestReady pins the gate's verdicts.
func TestReady(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ops       []gateOp
		pods, rs  string // cache versions
		wantStale *expectations.StaleCacheError
	}{
		{name: "R-10.9 nothing recorded: ready", pods: "1", rs: "1"},
		{name: "R-10.9 cache behind: deferred", ops: []gateOp{wrote("u1", gatePods, "12")}, pods: "11",
			wantStale: &expectations.StaleCacheError{Key: rsKey, Resource: gatePods, Written: "12", Read: "11"}},
		{name: "R-10.9 cache equal: ready", ops: []gateOp{wrote("u1", gatePods, "12")}, pods: "12"},
		{name: "R-10.9 cache ahead: ready", ops: []gateOp{wrote("u1", gatePods, "12")}, pods: "100"},
		{name: "R-10.9 a cache that tracks no version (\"\") does not block", ops: []gateOp{wrote("u1", gatePods, "12")}, pods: ""},
		{name: "R-10.9 an unregistered resource does not block", ops: []gateOp{wrote("u1", gateCM, "12")}},
		{name: "R-10.9 a comparison error does not block (bad write)", ops: []gateOp{wrote("u1", gatePods, "x")}, pods: "1"},
		{name: "R-10.9 a comparison error does not block (bad cache)", ops: []gateOp{wrote("u1", gatePods, "12")}, pods: "007"},
		{name: "R-10.9 every resource is checked", ops: []gateOp{wrote("u1", gatePods, "12"), wrote("u1", gateRS, "14")}, pods: "12", rs: "13",
			wantStale: &expectations.StaleCacheError{Key: rsKey, Resource: gateRS, Written: "14", Read: "13"}},
		{name: "R-10.9 several behind: the first in group/resource order", ops: []gateOp{wrote("u1", gateRS, "14"), wrote("u1", gatePods, "12")}, pods: "1", rs: "1",
			wantStale: &expectations.StaleCacheError{Key: rsKey, Resource: gatePods, Written: "12", Read: "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c versions
			c.set(gatePods, tc.pods)
			c.set(gateRS, tc.rs)
			var deferred []*expectations.StaleCacheError
			tr := expectations.NewGate(expectations.GateOptions{Caches: c.caches(),
				Deferred: func(key string, err *expectations.StaleCacheError) {
					assert.Equal(t, rsKey, key)
					deferred = append(deferred, err)
				},
			})
			for _, op := range tc.ops {
				op(tr)
			}
			before := written(tr)
			err := tr.Ready(rsKey)
			if tc.wantStale == nil {
				require.NoError(t, err)
				assert.Empty(t, deferred, "no deferral reported")
				assert.Empty(t, written(tr), "R-10.9: a ready owner's record is cleared")
				return
			}
			var stale *expectations.StaleCacheError
			require.ErrorAs(t, err, &stale)
			assert.Equal(t, tc.wantStale, stale)
			assert.Contains(t, err.Error(), "expectations: ")
			require.Len(t, deferred, 1, "GateOptions.Deferred once per deferral")
			assert.Same(t, stale, deferred[0])
			assert.Equal(t, before, written(tr), "R-10.9: a deferred owner's record is kept")
		})
	}
}

// written returns rsKey's gate record as a map, for the resources the tests use.
func written(tr *expectations.Gate) map[schema.GroupResource]string {
	out := map[schema.GroupResource]string{}
	for _, gr := range []schema.GroupResource{gatePods, gateRS, gateCM} {
		if v, ok := tr.Written(rsKey, gr); ok {
			out[gr] = v
		}
	}
	return out
}

// TestReadyThenCaughtUp: a deferral lasts until the cache reaches the write.
func TestReadyThenCaughtUp(t *testing.T) {
	var c versions
	tr := expectations.NewGate(expectations.GateOptions{Caches: c.caches()})
	tr.Wrote(rsKey, "u1", gatePods, "20")
	c.set(gatePods, "19")
	require.Error(t, tr.Ready(rsKey))
	require.Error(t, tr.Ready(rsKey), "still behind")
	c.set(gatePods, "20")
	require.NoError(t, tr.Ready(rsKey))
	c.set(gatePods, "1") // a cache going backwards no longer matters: the record is gone
	require.NoError(t, tr.Ready(rsKey))
}

// TestClear pins the clearing rules.
func TestClear(t *testing.T) {
	for _, tc := range []struct {
		name    string
		uid     types.UID
		cleared bool
	}{
		{"R-10.9 an owner deletion clears the record of its UID", "u1", true},
		{"R-10.9 an owner deletion leaves another UID's record", "u2", false},
		{"R-10.9 a NotFound owner clears whatever the UID (\"\")", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tr expectations.Gate
			tr.Wrote(rsKey, "u1", gatePods, "5")
			tr.Clear(rsKey, tc.uid)
			_, ok := tr.Written(rsKey, gatePods)
			assert.Equal(t, !tc.cleared, ok)
		})
	}
	t.Run("R-10.9 Delete leaves the gate record", func(t *testing.T) {
		g := expectations.NewGate(expectations.GateOptions{})
		tr := expectations.New(expectations.Options{Gate: g})
		tr.ExpectCreations(rsKey, 1)
		g.Wrote(rsKey, "u1", gatePods, "5")
		tr.Delete(rsKey)
		v, ok := g.Written(rsKey, gatePods)
		assert.True(t, ok)
		assert.Equal(t, "5", v)
	})
	t.Run("other keys are untouched", func(t *testing.T) {
		var tr expectations.Gate
		tr.Wrote(rsKey, "u1", gatePods, "5")
		tr.Wrote("other/db", "u1", gatePods, "6")
		tr.Clear(rsKey, "")
		_, ok := tr.Written("other/db", gatePods)
		assert.True(t, ok)
	})
}

// TestNewGateCopiesCaches: changing the caller's map after NewGate changes
// nothing.
func TestNewGateCopiesCaches(t *testing.T) {
	m := map[schema.GroupResource]func() string{gatePods: func() string { return "1" }}
	tr := expectations.NewGate(expectations.GateOptions{Caches: m})
	delete(m, gatePods)
	tr.Wrote(rsKey, "u1", gatePods, "5")
	require.Error(t, tr.Ready(rsKey), "the Gate kept its own copy of Caches")
}

// TestReadyAllocatesNothingWhenEmpty pins the cost promise of Ready.
func TestReadyAllocatesNothingWhenEmpty(t *testing.T) {
	var c versions
	tr := expectations.NewGate(expectations.GateOptions{Caches: c.caches()})
	tr.Wrote("other/db", "u1", gatePods, "5")
	allocs := testing.AllocsPerRun(100, func() {
		if tr.Ready(rsKey) != nil {
			t.Fatal("not ready")
		}
	})
	assert.Zero(t, allocs)
}

// TestReadyKeepsAWriteMadeWhileComparing: a Wrote that lands after Ready read
// the record, while it compares, survives Ready's clearing (upstream's store
// forbids this interleaving; this one allows it).
func TestReadyKeepsAWriteMadeWhileComparing(t *testing.T) {
	inCache := make(chan struct{})
	written := make(chan struct{})
	tr := expectations.NewGate(expectations.GateOptions{Caches: map[schema.GroupResource]func() string{
		gatePods: func() string {
			close(inCache)
			<-written
			return "10"
		},
	}})
	tr.Wrote(rsKey, "u1", gatePods, "10")
	done := make(chan error)
	go func() { done <- tr.Ready(rsKey) }()
	<-inCache
	tr.Wrote(rsKey, "u1", gatePods, "11")
	close(written)
	require.NoError(t, <-done, "Ready compared the record it read (10 <= 10)")
	v, ok := tr.Written(rsKey, gatePods)
	assert.True(t, ok, "the write made during Ready was kept")
	assert.Equal(t, "11", v)
}

// TestGateConcurrent runs Wrote, Ready, Clear and Written on
// overlapping keys from many goroutines (run it with -race), then checks that
// caches ahead of every write leave nothing recorded.
func TestGateConcurrent(t *testing.T) {
	var pods, rs atomic.Int64
	tr := expectations.NewGate(expectations.GateOptions{Caches: map[schema.GroupResource]func() string{
		gatePods: func() string { return fmt.Sprint(pods.Load()) },
		gateRS:   func() string { return fmt.Sprint(rs.Load()) },
	}})
	keys := []string{"a/x", "a/y", "b/x", "b/y"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				key := keys[(g+i)%len(keys)]
				switch i % 5 {
				case 0, 1:
					tr.Wrote(key, types.UID(fmt.Sprint("u", i%2)), gatePods, fmt.Sprint(1+i))
				case 2:
					tr.Wrote(key, "u0", gateRS, fmt.Sprint(1+i))
				case 3:
					pods.Add(1)
					rs.Add(1)
					var stale *expectations.StaleCacheError
					if err := tr.Ready(key); err != nil && !errors.As(err, &stale) {
						t.Errorf("Ready: %v", err)
					}
				case 4:
					if i%3 == 0 {
						tr.Clear(key, "u1")
					}
					tr.Written(key, gatePods)
				}
			}
		}()
	}
	wg.Wait()
	pods.Store(1 << 30)
	rs.Store(1 << 30)
	for _, key := range keys {
		require.NoError(t, tr.Ready(key), key)
		for _, gr := range []schema.GroupResource{gatePods, gateRS} {
			_, ok := tr.Written(key, gr)
			assert.False(t, ok, "%s %s still recorded", key, gr)
		}
	}
}

// gateModel is the plain model of the gate: per key, one UID and the newest
// version per resource, as describes it.
type gateModel struct {
	uid      map[string]types.UID
	versions map[string]map[schema.GroupResource]string
}

func (m *gateModel) wrote(key string, uid types.UID, gr schema.GroupResource, v string) {
	if m.versions[key] == nil || m.uid[key] != uid {
		m.uid[key], m.versions[key] = uid, map[schema.GroupResource]string{}
	}
	old, ok := m.versions[key][gr]
	if ok {
		if c, err := rv.Compare(old, v); err == nil && c >= 0 {
			return
		}
	}
	m.versions[key][gr] = v
}

// stale returns the resources whose cache is behind key's writes.
func (m *gateModel) stale(key string, cache map[schema.GroupResource]string, registered map[schema.GroupResource]bool) []schema.GroupResource {
	var out []schema.GroupResource
	for gr, w := range m.versions[key] {
		read := cache[gr]
		if !registered[gr] || read == "" {
			continue
		}
		if c, err := rv.Compare(w, read); err == nil && c > 0 {
			out = append(out, gr)
		}
	}
	return out
}

// TestGateModel checks the Gate's Wrote, Ready, Clear and Written, and a
// Tracker's Delete beside it, against gateModel on random operation
// sequences.
func TestGateModel(t *testing.T) {
	keys := []string{"", "default/web", "other/db"}
	uids := []types.UID{"", "u1", "u2"}
	resources := []schema.GroupResource{gatePods, gateRS, gateCM}
	vs := []string{"", "0", "1", "5", "9", "10", "12", "100", "007", "x", "18446744073709551616"}
	rapid.Check(t, func(t *rapid.T) {
		registered := map[schema.GroupResource]bool{gatePods: true, gateRS: true}
		var c versions
		tr := expectations.NewGate(expectations.GateOptions{Caches: c.caches()})
		exp := expectations.New(expectations.Options{Gate: tr})
		m := &gateModel{uid: map[string]types.UID{}, versions: map[string]map[schema.GroupResource]string{}}
		cache := map[schema.GroupResource]string{}
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			key := rapid.SampledFrom(keys).Draw(t, "key")
			switch rapid.IntRange(0, 4).Draw(t, fmt.Sprint("op", step)) {
			case 0, 1:
				uid, gr, v := rapid.SampledFrom(uids).Draw(t, "uid"), rapid.SampledFrom(resources).Draw(t, "gr"), rapid.SampledFrom(vs).Draw(t, "v")
				tr.Wrote(key, uid, gr, v)
				m.wrote(key, uid, gr, v)
			case 2:
				gr, v := rapid.SampledFrom(resources[:2]).Draw(t, "cacheGR"), rapid.SampledFrom(vs).Draw(t, "cacheV")
				c.set(gr, v)
				cache[gr] = v
			case 3:
				want := m.stale(key, cache, registered)
				err := tr.Ready(key)
				if len(want) == 0 {
					if err != nil {
						t.Fatalf("Ready(%q) = %v, the model says ready", key, err)
					}
					delete(m.versions, key)
					delete(m.uid, key)
					break
				}
				var stale *expectations.StaleCacheError
				if !errors.As(err, &stale) {
					t.Fatalf("Ready(%q) = %v, the model says %v behind", key, err, want)
				}
				first := want[0]
				for _, gr := range want[1:] {
					if gr.Group < first.Group || (gr.Group == first.Group && gr.Resource < first.Resource) {
						first = gr
					}
				}
				want1 := expectations.StaleCacheError{Key: key, Resource: first, Written: m.versions[key][first], Read: cache[first]}
				if *stale != want1 {
					t.Fatalf("Ready(%q) = %+v, want %+v", key, *stale, want1)
				}
			case 4:
				if rapid.Bool().Draw(t, "delete") {
					exp.ExpectCreations(key, 1)
					exp.Delete(key) // expectations only: the gate record stays
					break
				}
				uid := rapid.SampledFrom(uids).Draw(t, "clearUID")
				tr.Clear(key, uid)
				if uid == "" || (m.versions[key] != nil && m.uid[key] == uid) {
					delete(m.versions, key)
					delete(m.uid, key)
				}
			}
			for _, k := range keys {
				for _, gr := range resources {
					got, ok := tr.Written(k, gr)
					want, wantOK := m.versions[k][gr]
					if got != want || ok != wantOK {
						t.Fatalf("Written(%q, %s) = %q, %v; model %q, %v (model %v)", k, gr, got, ok, want, wantOK, maps.Clone(m.versions[k]))
					}
				}
			}
		}
	})
}

func BenchmarkReady(b *testing.B) {
	cache := map[schema.GroupResource]func() string{gatePods: func() string { return "100" }}
	b.Run("nothing recorded", func(b *testing.B) {
		tr := expectations.NewGate(expectations.GateOptions{Caches: cache})
		b.ReportAllocs()
		for b.Loop() {
			_ = tr.Ready(rsKey)
		}
	})
	b.Run("recorded, ready", func(b *testing.B) {
		tr := expectations.NewGate(expectations.GateOptions{Caches: cache})
		b.ReportAllocs()
		for b.Loop() {
			tr.Wrote(rsKey, "u1", gatePods, "99")
			_ = tr.Ready(rsKey)
		}
	})
	b.Run("recorded, stale", func(b *testing.B) {
		tr := expectations.NewGate(expectations.GateOptions{Caches: cache})
		tr.Wrote(rsKey, "u1", gatePods, "101")
		b.ReportAllocs()
		for b.Loop() {
			_ = tr.Ready(rsKey)
		}
	})
}

// A Tracker built per call on one Gate and then dropped is not kept by the
// Gate: once collected, the next Tracker built on it forgets it (issue 32).
// The Trackers that are still held go on receiving the Gate's pod writes.
func TestGateDoesNotKeepDroppedTrackers(t *testing.T) {
	g := expectations.NewGate(expectations.GateOptions{})
	kept := expectations.New(expectations.Options{Gate: g})
	for range 1000 {
		perCall := expectations.New(expectations.Options{Gate: g})
		perCall.ExpectCreations("ns/a", 1)
	}
	runtime.GC()
	expectations.New(expectations.Options{Gate: g}) // attaching prunes
	assert.LessOrEqual(t, expectations.Attached(g), 3, "the kept Tracker, the last one built, and at most one more not yet collected")

	kept.ExpectCreations("ns/a", 1)
	g.Wrote("ns/a", "uid-a", expectations.PodsResource, "7")
	snap, ok := kept.Snapshot("ns/a")
	require.True(t, ok)
	assert.Equal(t, "7", snap.WriteRV, "a Tracker still held is still fed")
	runtime.KeepAlive(kept)
}
