package expectations_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// benchTracker is what the benchmarks drive. The side-by-side comparison with
// the real upstream UIDTrackingControllerExpectations lives in the
// conformance module (test/conformance, make bench-upstream).
type benchTracker interface {
	ExpectCreations(key string, adds int)
	ExpectDeletions(key string, podKeys []string)
	Raise(key string, adds, dels int)
	CreationObserved(key string)
	DeletionObserved(key, podKey string)
	Satisfied(key string) bool
}

var (
	_ benchTracker = (*expectations.Tracker)(nil)
)

var benchImpls = []struct {
	name string
	new  func() benchTracker
}{
	{"impl=tracker", func() benchTracker { return expectations.New(expectations.Options{}) }},
}

const cyclePods = 10

// BenchmarkCycle measures one key's full round: expect cyclePods creations
// (or deletions), observe each, then check Satisfied.
func BenchmarkCycle(b *testing.B) {
	podKeys := make([]string, cyclePods)
	for i := range podKeys {
		podKeys[i] = fmt.Sprintf("default/web-%05d", i)
	}
	for _, impl := range benchImpls {
		b.Run("creations/"+impl.name, func(b *testing.B) {
			tr := impl.new()
			b.ReportAllocs()
			for b.Loop() {
				tr.ExpectCreations(rsKey, cyclePods)
				for range cyclePods {
					tr.CreationObserved(rsKey)
				}
				if !tr.Satisfied(rsKey) {
					b.Fatal("not satisfied after every creation was observed")
				}
			}
		})
		b.Run("deletions/"+impl.name, func(b *testing.B) {
			tr := impl.new()
			b.ReportAllocs()
			for b.Loop() {
				tr.ExpectDeletions(rsKey, podKeys)
				for _, pk := range podKeys {
					tr.DeletionObserved(rsKey, pk)
				}
				if !tr.Satisfied(rsKey) {
					b.Fatal("not satisfied after every deletion was observed")
				}
			}
		})
	}
}

// BenchmarkParallel measures informer handlers and workers hammering the
// tracker at once: every iteration observes one event for a key and then asks
// whether that key is satisfied. "pending" records never
// become fulfilled, so Satisfied reads the clock every time; "fulfilled" records are satisfied without it. "creations"
// observes pod adds; "deletions" observes pod deletes (after the first pass
// over a key's pods they are repeats, as the update events of terminating
// pods are). Compare with BenchmarkParallelControl before reading the ratios.
func BenchmarkParallel(b *testing.B) {
	for _, nkeys := range []int{1, 100, 10_000} {
		keys := make([]string, nkeys)
		podKeys := make([][]string, nkeys)
		for i := range keys {
			keys[i] = fmt.Sprintf("ns-%d/rs-%d", i%37, i)
			podKeys[i] = make([]string, 8)
			for j := range podKeys[i] {
				podKeys[i][j] = fmt.Sprintf("ns-%d/rs-%d-%05d", i%37, i, j)
			}
		}
		setup := func(tr benchTracker, pending bool) {
			for i, k := range keys {
				tr.ExpectDeletions(k, podKeys[i])
				if pending {
					tr.Raise(k, math.MaxInt/2, 0) // never fulfilled during the run
				}
			}
		}
		for _, state := range []string{"pending", "fulfilled"} {
			for _, workload := range []string{"creations", "deletions"} {
				for _, impl := range benchImpls {
					b.Run(fmt.Sprintf("%s/%s/keys=%d/%s", state, workload, nkeys, impl.name), func(b *testing.B) {
						tr := impl.new()
						setup(tr, state == "pending")
						b.ReportAllocs()
						b.ResetTimer()
						b.RunParallel(func(pb *testing.PB) {
							i := rand.IntN(nkeys)
							j := 0
							for pb.Next() {
								k := keys[i]
								if workload == "creations" {
									tr.CreationObserved(k)
								} else {
									tr.DeletionObserved(k, podKeys[i][j])
									j = (j + 1) & 7
								}
								_ = tr.Satisfied(k)
								if i++; i == nkeys {
									i = 0
								}
							}
						})
					})
				}
			}
		}
	}
}

// controlLocks are independent, cache-line padded mutexes for
// BenchmarkParallelControl.
var controlLocks [64]struct {
	mu sync.Mutex
	n  int
	_  [48]byte
}

// BenchmarkParallelControl is a yardstick for BenchmarkParallel: goroutines
// taking independent, padded mutexes, a perfectly shardable workload. Its
// ns/op should halve from -cpu 1 to -cpu 2. If it does not, the host gives
// the benchmark no real parallelism (other load, or vCPUs sharing a core), so
// lock contention — what separates the two designs under BenchmarkParallel —
// cannot show, and their ratio reflects single-core cost only.
func BenchmarkParallelControl(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(controlLocks))
		for pb.Next() {
			l := &controlLocks[i&(len(controlLocks)-1)]
			l.mu.Lock()
			l.n++
			l.mu.Unlock()
			i += 7
		}
	})
}

// BenchmarkHotPath pins the zero-allocation promise of the calls informer
// handlers and workers make most.
func BenchmarkHotPath(b *testing.B) {
	tr := expectations.New(expectations.Options{})
	tr.ExpectDeletions(rsKey, []string{"default/a"})
	tr.Raise(rsKey, math.MaxInt/2, 0)
	b.Run("CreationObserved", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tr.CreationObserved(rsKey)
		}
	})
	b.Run("CreationObservedKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tr.CreationObservedKey(rsKey, "default/b")
		}
	})
	b.Run("DeletionObserved", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tr.DeletionObserved(rsKey, "default/b")
		}
	})
	b.Run("Satisfied", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tr.Satisfied(rsKey)
		}
	})
	b.Run("Satisfied/EvidenceFirst", func(b *testing.B) {
		tr := expectations.New(expectations.Options{
			Policy: expectations.EvidenceFirst,
			Gate:   podsGate(func() string { return "1000" }),
		})
		tr.ExpectCreationKeys(rsKey, []string{"default/a"})
		tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "2000")
		b.ReportAllocs()
		for b.Loop() {
			tr.Satisfied(rsKey)
		}
	})
}

// TestHotPathDoesNotAllocate turns the benchmark's 0 allocs/op into a test.
func TestHotPathDoesNotAllocate(t *testing.T) {
	tr := expectations.New(expectations.Options{})
	tr.ExpectDeletions(rsKey, []string{"default/a", "default/b"})
	tr.Raise(rsKey, math.MaxInt/2, 0)
	tracking := expectations.New(expectations.Options{})
	tracking.ExpectCreationKeys(rsKey, []string{"default/a", "default/b"})
	evidence := expectations.New(expectations.Options{
		Policy: expectations.EvidenceFirst,
		Gate:   podsGate(func() string { return "1000" }),
	})
	evidence.ExpectCreations(rsKey, 1)
	evidence.Gate().Wrote(rsKey, "", expectations.PodsResource, "2000")
	calls := map[string]func(){
		"CreationObserved":              func() { tr.CreationObserved(rsKey) },
		"DeletionObserved":              func() { tr.DeletionObserved(rsKey, "default/a") },
		"Satisfied pending":             func() { tr.Satisfied(rsKey) },
		"Satisfied no record":           func() { tr.Satisfied("default/none") },
		"CreationObserved none":         func() { tr.CreationObserved("default/none") },
		"CreationObservedKey counted":   func() { tr.CreationObservedKey(rsKey, "default/a") },
		"CreationObservedKey tracked":   func() { tracking.CreationObservedKey(rsKey, "default/a") },
		"Satisfied EvidenceFirst":       func() { evidence.Satisfied(rsKey) },
		"Check EvidenceFirst":           func() { evidence.Check(rsKey) },
		"CreationObservedKey no record": func() { tr.CreationObservedKey("default/none", "default/a") },
	}
	for name, call := range calls {
		if allocs := testing.AllocsPerRun(100, call); allocs != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, allocs)
		}
	}
}
