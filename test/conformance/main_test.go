package conformance

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// The tally of every differential test in the package: cases run (one case
// is one input fed to both reconcilekit and the real upstream code and one
// comparison of their answers), disagreements (differential tests that
// failed) and documented cases (inputs on which the answers may differ for a
// named, documented reason; each is counted under its name).
var (
	cases         atomic.Int64
	disagreements atomic.Int64

	documentedMu sync.Mutex
	documented   = map[string]int64{}

	perTestMu sync.Mutex
	perTest   []string // "name=cases", in run order
)

// Named exceptions. Each is a deliberate, documented difference of the
// library from upstream, or an input on which upstream's own answer is not
// determined; the reason is in docs/conformance.md.
const (
	// podrank.ForDeletion on an input whose upstream comparator is not a
	// strict weak order: sort.Sort's result then depends on
	// pdqsort's pivot choices, so only the library's own guarantees are
	// checked (n distinct input pods).
	excNotStrictWeakOrder = "not-strict-weak-order"
	// slowstart.Run with a non-positive InitialBatchSize treats it as 1;
	// upstream's slowStartBatch makes no call (DESIGN.md, slowstart).
	excSlowStartInitial = "slowstart-initial-nonpositive"
	// status.Calculate stamps a new ReplicaFailure condition with the now
	// argument; upstream uses the wall clock (DESIGN.md, "Deterministic").
	excConditionTime = "replicafailure-ltt-from-now"
)

func addCases(n int) { cases.Add(int64(n)) }

func noteDocumented(name string) {
	documentedMu.Lock()
	documented[name]++
	documentedMu.Unlock()
}

// differential runs a rapid property as a subtest and counts it as a
// disagreement when it fails.
func differential(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	start := cases.Load() // the tests do not run in parallel
	t.Cleanup(func() {    // also after rapid's t.Fatal
		if t.Failed() {
			disagreements.Add(1)
		}
		perTestMu.Lock()
		perTest = append(perTest, fmt.Sprintf("%s=%d", strings.TrimPrefix(t.Name(), "Test"), cases.Load()-start))
		perTestMu.Unlock()
	})
	f(t)
}

func TestMain(m *testing.M) {
	flag.Parse()
	// Upstream logs through klog and reports some errors through
	// utilruntime.HandleError, whose default handlers log and sleep up to
	// 1ms between errors; neither is what is being compared.
	klog.SetLogger(logr.Discard())
	utilruntime.ErrorHandlers = nil
	code := m.Run()
	documentedMu.Lock()
	var k int64
	names := make([]string, 0, len(documented))
	for name, n := range documented {
		k += n
		names = append(names, fmt.Sprintf("%s=%d", name, n))
	}
	documentedMu.Unlock()
	sort.Strings(names)
	perTestMu.Lock()
	if len(perTest) > 0 {
		fmt.Printf("conformance: cases per test: %s\n", strings.Join(perTest, ", "))
	}
	perTestMu.Unlock()
	if len(names) > 0 {
		fmt.Printf("conformance: documented: %s\n", strings.Join(names, ", "))
	}
	fmt.Printf("conformance: %d cases, %d disagreements, %d documented\n", cases.Load(), disagreements.Load(), k)
	os.Exit(code)
}
