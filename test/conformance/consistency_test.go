package conformance

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/kubernetes/pkg/controller/util/consistency"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// settableVersion is an informer store's LastStoreSyncResourceVersion that
// the test sets; both sides read the same one.
type settableVersion struct{ v string }

func (s *settableVersion) LastStoreSyncResourceVersion() string { return s.v }

// upstreamWrites reads RealConsistencyStore's records through reflection
// (they are unexported): owner -> resource -> written version.
func upstreamWrites(store *consistency.RealConsistencyStore) map[types.NamespacedName]map[schema.GroupResource]string {
	out := map[types.NamespacedName]map[schema.GroupResource]string{}
	writes := reflect.ValueOf(store).Elem().FieldByName("writes")
	for it := writes.MapRange(); it.Next(); {
		owner := types.NamespacedName{Namespace: it.Key().Field(0).String(), Name: it.Key().Field(1).String()}
		versions := it.Value().Elem().FieldByName("versions")
		m := map[schema.GroupResource]string{}
		for vi := versions.MapRange(); vi.Next(); {
			gr := schema.GroupResource{Group: vi.Key().Field(0).String(), Resource: vi.Key().Field(1).String()}
			m[gr] = vi.Value().String()
		}
		out[owner] = m
	}
	return out
}

// TestGateMatchesRealConsistencyStore feeds the same random sequences of
// writes, clears, cache movements and checks to expectations.Gate
// (Wrote, Clear, Ready) and to upstream's
// RealConsistencyStore (WroteAt, Clear, EnsureReady), R-10.9. After every
// step the recorded versions agree; every check agrees on ready or not, and
// on the whole error when a single resource is behind (with several behind,
// upstream names one in map order, ours the first by group/resource). Each
// step is one case.
func TestGateMatchesRealConsistencyStore(t *testing.T) {
	owners := []types.NamespacedName{{Namespace: "ns", Name: "a"}, {Namespace: "ns", Name: "b"}, {Name: "c"}}
	uids := []types.UID{"", "u1", "u2"}
	pods := schema.GroupResource{Resource: "pods"}
	rs := schema.GroupResource{Group: "apps", Resource: "replicasets"}
	unregistered := schema.GroupResource{Resource: "configmaps"}
	resources := []schema.GroupResource{pods, rs, unregistered}
	versions := []string{"", "0", "1", "5", "9", "10", "12", "100", "007", "x", "18446744073709551616"}
	key := func(o types.NamespacedName) string {
		if o.Namespace == "" {
			return o.Name
		}
		return o.Namespace + "/" + o.Name
	}
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			podCache, rsCache := &settableVersion{}, &settableVersion{}
			up := consistency.NewConsistencyStore(map[schema.GroupResource]consistency.LastSyncRVGetter{pods: podCache, rs: rsCache})
			tr := expectations.NewGate(expectations.GateOptions{Caches: map[schema.GroupResource]func() string{
				pods: podCache.LastStoreSyncResourceVersion,
				rs:   rsCache.LastStoreSyncResourceVersion,
			}})
			steps := rapid.IntRange(1, 40).Draw(t, "steps")
			for step := range steps {
				o := rapid.SampledFrom(owners).Draw(t, "owner")
				switch op := rapid.IntRange(0, 4).Draw(t, fmt.Sprint("op", step)); op {
				case 0, 1:
					uid := rapid.SampledFrom(uids).Draw(t, "uid")
					gr := rapid.SampledFrom(resources).Draw(t, "resource")
					v := rapid.SampledFrom(versions).Draw(t, "version")
					up.WroteAt(o, uid, gr, v)
					tr.Wrote(key(o), uid, gr, v)
				case 2:
					uid := rapid.SampledFrom(uids).Draw(t, "clearUID")
					up.Clear(o, uid)
					tr.Clear(key(o), uid)
				case 3:
					v := rapid.SampledFrom(versions).Draw(t, "cacheVersion")
					if rapid.Bool().Draw(t, "podCache") {
						podCache.v = v
					} else {
						rsCache.v = v
					}
				case 4:
					behind := 0
					for gr, w := range upstreamWrites(up)[o] {
						if gr == unregistered {
							continue
						}
						read := podCache.v
						if gr == rs {
							read = rsCache.v
						}
						if c, err := resourceversion.CompareResourceVersion(w, read); read != "" && err == nil && c > 0 {
							behind++
						}
					}
					upErr := up.EnsureReady(o)
					ourErr := tr.Ready(key(o))
					if (upErr == nil) != (ourErr == nil) {
						t.Fatalf("step %d: EnsureReady(%v) = %v, Ready(%q) = %v", step, o, upErr, key(o), ourErr)
					}
					if upErr == nil || behind != 1 {
						break
					}
					var upStale *consistency.ConsistencyError
					var ourStale *expectations.StaleCacheError
					if !errors.As(upErr, &upStale) || !errors.As(ourErr, &ourStale) {
						t.Fatalf("step %d: error types: %T, %T", step, upErr, ourErr)
					}
					if upStale.GroupResource != ourStale.Resource || upStale.WroteRV != ourStale.Written || upStale.ReadRV != ourStale.Read {
						t.Fatalf("step %d: upstream %+v, ours %+v", step, *upStale, *ourStale)
					}
				}
				addCases(1)
				got := upstreamWrites(up)
				for _, o := range owners {
					for _, gr := range resources {
						want, wantOK := got[o][gr]
						have, ok := tr.Written(key(o), gr)
						if have != want || ok != wantOK {
							t.Fatalf("step %d: %v %s: upstream recorded %q (%v), ours %q (%v)", step, o, gr, want, wantOK, have, ok)
						}
					}
				}
			}
		})
	})
}
