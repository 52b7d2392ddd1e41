package expectations_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// cluster is a lookup over a fixed set of pods; a key in failing fails.
type cluster struct {
	pods    map[string]*corev1.Pod
	failing map[string]bool
	calls   []string
}

func (c *cluster) lookup(podKey string) (*corev1.Pod, error) {
	c.calls = append(c.calls, podKey)
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
		name          string
		setup         func(tr *expectations.Tracker)
		pods          map[string]*corev1.Pod
		failing       map[string]bool
		observed      int
		err           string
		adds, dels    int
		pendingCreate []string
		pendingDelete []string
	}{
		{"a created pod settles its creation, a missing one waits",
			func(tr *expectations.Tracker) {
				tr.AddCreationKey(rsKey, "ns/a")
				tr.AddCreationKey(rsKey, "ns/b")
			},
			map[string]*corev1.Pod{"ns/a": running}, nil,
			1, "", 1, 0, []string{"ns/b"}, nil},
		{"a terminating pod still counts as created",
			func(tr *expectations.Tracker) { tr.AddCreationKey(rsKey, "ns/a") },
			map[string]*corev1.Pod{"ns/a": terminating}, nil,
			1, "", 0, 0, nil, nil},
		{"a pod gone or terminating settles its deletion (R-11.2), a running one waits",
			func(tr *expectations.Tracker) {
				tr.ExpectDeletions(rsKey, []string{"ns/gone", "ns/terminating", "ns/running"})
			},
			map[string]*corev1.Pod{"ns/terminating": terminating, "ns/running": running}, nil,
			2, "", 0, 1, nil, []string{"ns/running"}},
		{"counted creations are left to the events",
			func(tr *expectations.Tracker) { tr.ExpectCreations(rsKey, 2) },
			map[string]*corev1.Pod{"ns/a": running}, nil,
			0, "", 2, 0, nil, nil},
		{"a failed lookup leaves its pod pending and the others are still looked up",
			func(tr *expectations.Tracker) {
				tr.AddCreationKey(rsKey, "ns/a")
				tr.AddCreationKey(rsKey, "ns/b")
				tr.AddDeletionKey(rsKey, "ns/c")
			},
			map[string]*corev1.Pod{"ns/b": running}, map[string]bool{"ns/a": true, "ns/c": true},
			1, "expectations: looking up pod ns/a: connection refused\nexpectations: looking up pod ns/c: connection refused",
			1, 1, []string{"ns/a"}, []string{"ns/c"}},
		{"no record: nothing to look up",
			func(*expectations.Tracker) {},
			nil, nil,
			0, "", 0, 0, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tr expectations.Tracker
			c.setup(&tr)
			cl := &cluster{pods: c.pods, failing: c.failing}
			observed, err := tr.Observe(rsKey, cl.lookup)
			if c.err == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, c.err)
			}
			assert.Equal(t, c.observed, observed)
			adds, dels, _ := tr.Pending(rsKey)
			assert.Equal(t, []int{c.adds, c.dels}, []int{adds, dels}, "counters")
			creations, deletions := tr.PendingKeys(rsKey)
			assert.Equal(t, c.pendingCreate, creations)
			assert.Equal(t, c.pendingDelete, deletions)
		})
	}
}

func TestObserveNilLookup(t *testing.T) {
	var tr expectations.Tracker
	tr.AddCreationKey(rsKey, "ns/a")
	_, err := tr.Observe(rsKey, nil)
	require.EqualError(t, err, "expectations: Observe needs a lookup")
	adds, _, _ := tr.Pending(rsKey)
	assert.Equal(t, 1, adds)
}

// TestObserveLookupMayUseTracker: the lookup runs without the Tracker's
// lock, so it may call the Tracker (here it records another pod).
func TestObserveLookupMayUseTracker(t *testing.T) {
	var tr expectations.Tracker
	tr.AddCreationKey(rsKey, "ns/a")
	_, err := tr.Observe(rsKey, func(podKey string) (*corev1.Pod, error) {
		tr.AddCreationKey(rsKey, "ns/b")
		return &corev1.Pod{}, nil
	})
	require.NoError(t, err)
	creations, _ := tr.PendingKeys(rsKey)
	assert.Equal(t, []string{"ns/b"}, creations)
}
