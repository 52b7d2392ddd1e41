package perpod_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

const key = "ns/owner/workers"

// step is one call on a Tracker, or a clock step.
type step func(tr *perpod.Tracker, clk *fakeclock.Clock)

func create(podKey string) step {
	return func(tr *perpod.Tracker, _ *fakeclock.Clock) { tr.ExpectCreation(key, podKey) }
}
func remove(podKey string) step {
	return func(tr *perpod.Tracker, _ *fakeclock.Clock) { tr.ExpectDeletion(key, podKey) }
}
func created(podKey string) step {
	return func(tr *perpod.Tracker, _ *fakeclock.Clock) { tr.CreationObserved(key, podKey) }
}
func deleted(podKey string) step {
	return func(tr *perpod.Tracker, _ *fakeclock.Clock) { tr.DeletionObserved(key, podKey) }
}
func elapse(d time.Duration) step {
	return func(_ *perpod.Tracker, clk *fakeclock.Clock) { clk.Step(d) }
}

func TestTracker(t *testing.T) {
	cases := []struct {
		name                 string
		opts                 perpod.Options
		steps                []step
		satisfied            bool
		creations, deletions []string
	}{
		// both kinds wait under one key, each settled by its pod key.
		{"creations and deletions wait side by side", perpod.Options{},
			[]step{create("ns/a"), remove("ns/b")}, false, []string{"ns/a"}, []string{"ns/b"}},
		{"each pod settles only its own expectation", perpod.Options{},
			[]step{create("ns/a"), create("ns/b"), created("ns/a"), created("ns/a"), created("ns/z")}, false, []string{"ns/b"}, nil},
		{"a creation observation does not settle a deletion of the same pod", perpod.Options{},
			[]step{remove("ns/a"), created("ns/a")}, false, nil, []string{"ns/a"}},
		{"every pod observed: satisfied", perpod.Options{},
			[]step{create("ns/a"), remove("ns/b"), created("ns/a"), deleted("ns/b")}, true, nil, nil},
		// The probe of issue 41: there is no count to leave behind.
		{"three add events for one expected pod leave nothing pending", perpod.Options{},
			[]step{create("ns/a"), created("ns/a"), created("ns/a"), created("ns/a")}, true, nil, nil},
		{"an observation without a record changes nothing", perpod.Options{},
			[]step{created("ns/a"), deleted("ns/a")}, true, nil, nil},
		// one expiry per kind, from each pod's own Expect call.
		{"zero expiries: DefaultTTL, still waiting at the limit", perpod.Options{},
			[]step{create("ns/a"), elapse(expectations.DefaultTTL)}, false, []string{"ns/a"}, nil},
		{"zero expiries: DefaultTTL, strictly older expires", perpod.Options{},
			[]step{create("ns/a"), elapse(expectations.DefaultTTL + 1)}, true, nil, nil},
		{"a negative expiry is DefaultTTL, not an endless or instant wait", perpod.Options{CreationExpiry: -time.Second},
			[]step{create("ns/a"), elapse(time.Minute)}, false, []string{"ns/a"}, nil},
		{"creations expire on their own clock while deletions wait", perpod.Options{CreationExpiry: 30 * time.Second, DeletionExpiry: perpod.Never},
			[]step{create("ns/a"), remove("ns/b"), elapse(31 * time.Second)}, false, nil, []string{"ns/b"}},
		{"Never waits however long", perpod.Options{DeletionExpiry: perpod.Never},
			[]step{remove("ns/b"), elapse(1000 * time.Hour)}, false, nil, []string{"ns/b"}},
		{"each pod is timed from its own Expect call", perpod.Options{CreationExpiry: 30 * time.Second},
			[]step{create("ns/a"), elapse(20 * time.Second), create("ns/b"), elapse(11 * time.Second)}, false, []string{"ns/b"}, nil},
		{"a pod expected again is timed afresh", perpod.Options{CreationExpiry: 30 * time.Second},
			[]step{create("ns/a"), elapse(20 * time.Second), create("ns/a"), elapse(11 * time.Second)}, false, []string{"ns/a"}, nil},
		{"Delete forgets the key", perpod.Options{},
			[]step{create("ns/a"), func(tr *perpod.Tracker, _ *fakeclock.Clock) { tr.Delete(key) }}, true, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(epoch)
			c.opts.Clock = clk
			tr := perpod.New(c.opts)
			for _, s := range c.steps {
				s(tr, clk)
			}
			assert.Equal(t, c.satisfied, tr.Satisfied(key), "Satisfied")
			creations, deletions := tr.Pending(key)
			assert.Equal(t, c.creations, creations, "pending creations")
			assert.Equal(t, c.deletions, deletions, "pending deletions")
		})
	}
}

func TestTrackerZeroValue(t *testing.T) {
	var tr perpod.Tracker
	assert.True(t, tr.Satisfied(key))
	tr.ExpectCreation(key, "ns/a")
	assert.False(t, tr.Satisfied(key))
	tr.CreationObserved(key, "ns/a")
	assert.True(t, tr.Satisfied(key))
}

func TestPrefixes(t *testing.T) {
	var tr perpod.Tracker
	tr.ExpectCreation("ns/a/head", "ns/h")
	tr.ExpectCreation("ns/a/workers", "ns/w")
	tr.ExpectCreation("ns/ab/workers", "ns/x")
	assert.Equal(t, []string{"ns/a/head", "ns/a/workers"}, tr.KeysWithPrefix("ns/a/"))
	assert.Nil(t, tr.KeysWithPrefix("other/"))
	assert.Equal(t, 2, tr.DeletePrefix("ns/a/"), "the separator keeps owner ab")
	assert.Equal(t, []string{"ns/ab/workers"}, tr.KeysWithPrefix(""))
	assert.True(t, tr.Satisfied("ns/a/head"))
}

// TestHooksResolved: one call per round, Fulfilled or Expired.
func TestHooksResolved(t *testing.T) {
	clk := fakeclock.New(epoch)
	var calls []resolvedCall
	tr := perpod.New(perpod.Options{Clock: clk, CreationExpiry: time.Minute, Hooks: expectations.Hooks{
		Resolved: func(key string, r expectations.Resolution, pending time.Duration) {
			calls = append(calls, resolvedCall{key, r, pending})
		},
	}})
	tr.ExpectCreation(key, "ns/a")
	clk.Step(time.Second)
	tr.CreationObserved(key, "ns/a")
	tr.Satisfied(key)
	tr.Satisfied(key)
	tr.ExpectCreation(key, "ns/b")
	clk.Step(2 * time.Minute)
	tr.Satisfied(key)
	assert.Equal(t, []resolvedCall{
		{key, expectations.Fulfilled, time.Second},
		{key, expectations.Expired, 2 * time.Minute},
	}, calls)
}

// cluster is a lookup over a fixed set of pods; a key in failing fails.
type cluster struct {
	pods    map[string]*corev1.Pod
	failing map[string]bool
}

func (c *cluster) lookup(podKey string) (*corev1.Pod, error) {
	if c.failing[podKey] {
		return nil, errors.New("connection refused")
	}
	return c.pods[podKey], nil
}

func TestObserve(t *testing.T) {
	now := metav1.Now()
	terminating := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}
	running := &corev1.Pod{}
	cases := []struct {
		name                 string
		steps                []step
		pods                 map[string]*corev1.Pod
		failing              map[string]bool
		observed             int
		err                  string
		creations, deletions []string
	}{
		{"a created pod settles its creation, a missing one waits",
			[]step{create("ns/a"), create("ns/b")},
			map[string]*corev1.Pod{"ns/a": running}, nil,
			1, "", []string{"ns/b"}, nil},
		{"a terminating pod still counts as created",
			[]step{create("ns/a")},
			map[string]*corev1.Pod{"ns/a": terminating}, nil,
			1, "", nil, nil},
		// a terminating pod counts as deleted, as in the event handlers.
		{"a pod gone or terminating settles its deletion, a running one waits",
			[]step{remove("ns/gone"), remove("ns/terminating"), remove("ns/running")},
			map[string]*corev1.Pod{"ns/terminating": terminating, "ns/running": running}, nil,
			2, "", nil, []string{"ns/running"}},
		{"a failed lookup leaves its pod pending and the others are still looked up",
			[]step{create("ns/a"), create("ns/b"), remove("ns/c")},
			map[string]*corev1.Pod{"ns/b": running}, map[string]bool{"ns/a": true, "ns/c": true},
			1, "perpod: looking up pod ns/a: connection refused\nperpod: looking up pod ns/c: connection refused",
			[]string{"ns/a"}, []string{"ns/c"}},
		{"no record: nothing to look up", nil, nil, nil, 0, "", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tr perpod.Tracker
			for _, s := range c.steps {
				s(&tr, nil)
			}
			cl := &cluster{pods: c.pods, failing: c.failing}
			observed, err := tr.Observe(key, cl.lookup)
			if c.err == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, c.err)
			}
			assert.Equal(t, c.observed, observed)
			creations, deletions := tr.Pending(key)
			assert.Equal(t, c.creations, creations)
			assert.Equal(t, c.deletions, deletions)
		})
	}
}

func TestObserveNilLookup(t *testing.T) {
	var tr perpod.Tracker
	tr.ExpectCreation(key, "ns/a")
	_, err := tr.Observe(key, nil)
	require.EqualError(t, err, "perpod: Observe needs a lookup")
	assert.False(t, tr.Satisfied(key))
}

// TestObserveLookupMayUseTracker: the lookup runs without the Tracker's
// lock, so it may call the Tracker (here it expects another pod).
func TestObserveLookupMayUseTracker(t *testing.T) {
	var tr perpod.Tracker
	tr.ExpectCreation(key, "ns/a")
	_, err := tr.Observe(key, func(podKey string) (*corev1.Pod, error) {
		tr.ExpectCreation(key, "ns/b")
		return &corev1.Pod{}, nil
	})
	require.NoError(t, err)
	creations, _ := tr.Pending(key)
	assert.Equal(t, []string{"ns/b"}, creations)
}

// TestTrackerConcurrent runs every method from several goroutines under
// the race detector; the pods all end observed.
func TestTrackerConcurrent(t *testing.T) {
	var tr perpod.Tracker
	podKeys := []string{"ns/a", "ns/b", "ns/c", "ns/d"}
	var wg sync.WaitGroup
	for _, podKey := range podKeys {
		wg.Go(func() {
			tr.ExpectCreation(key, podKey)
			tr.Satisfied(key)
			tr.Pending(key)
			tr.KeysWithPrefix("ns/")
			tr.CreationObserved(key, podKey)
		})
	}
	wg.Wait()
	assert.True(t, tr.Satisfied(key))
}

// TestHotPathDoesNotAllocate: the calls event handlers and syncs make most
// allocate nothing.
func TestHotPathDoesNotAllocate(t *testing.T) {
	tr := perpod.New(perpod.Options{CreationExpiry: time.Minute, DeletionExpiry: perpod.Never})
	tr.ExpectCreation(key, "ns/a")
	tr.ExpectDeletion(key, "ns/b")
	calls := map[string]func(){
		"Satisfied pending":          func() { tr.Satisfied(key) },
		"Satisfied no record":        func() { tr.Satisfied("ns/none") },
		"CreationObserved unknown":   func() { tr.CreationObserved(key, "ns/z") },
		"DeletionObserved unknown":   func() { tr.DeletionObserved(key, "ns/z") },
		"CreationObserved no record": func() { tr.CreationObserved("ns/none", "ns/a") },
	}
	for name, call := range calls {
		if allocs := testing.AllocsPerRun(100, call); allocs != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, allocs)
		}
	}
}
