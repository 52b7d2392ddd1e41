package perpod_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/expectations/perpod"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// modelRecord is the plain-Go model of one key: each expected pod with the
// time it was expected, per kind, and the round's hook state.
type modelRecord struct {
	creations, deletions map[string]time.Time
	since                time.Time
	expired, resolved    bool
}

// resolvedCall is one call of Hooks.Resolved.
type resolvedCall struct {
	key        string
	resolution expectations.Resolution
	pending    time.Duration
}

// hookLog records Hooks.Resolved calls.
type hookLog struct {
	mu    sync.Mutex
	calls []resolvedCall
}

func (h *hookLog) resolved(key string, r expectations.Resolution, pending time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, resolvedCall{key, r, pending})
}

func (h *hookLog) take() []resolvedCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	calls := h.calls
	h.calls = nil
	return calls
}

// trackerModel drives a Tracker and the model with the same random actions.
type trackerModel struct {
	tr                 *perpod.Tracker
	clk                *fakeclock.Clock
	hooks              *hookLog
	creation, deletion time.Duration // the effective expiries
	records            map[string]*modelRecord
	wantHooks          []resolvedCall // the calls Satisfied should have made since the last check
}

var (
	modelKeys     = []string{"ns/a/x", "ns/a/y", "ns/ab/x", ""}
	modelPrefixes = []string{"", "ns/a/", "ns/a", "ns/ab/", "zz"}
	modelPodKeys  = []string{"ns/p0", "ns/p1", "ns/p2", ""}
)

// drawExpiry draws an Options duration and returns it with the effective
// expiry the documentation promises: zero or negative is DefaultTTL.
func drawExpiry(t *rapid.T, label string) (option, effective time.Duration) {
	d := rapid.SampledFrom([]time.Duration{0, -time.Second, time.Second, 30 * time.Second, perpod.Never}).Draw(t, label)
	if d <= 0 {
		return d, expectations.DefaultTTL
	}
	return d, d
}

func newTrackerModel(t *rapid.T) *trackerModel {
	m := &trackerModel{clk: fakeclock.New(epoch), records: map[string]*modelRecord{}}
	opts := perpod.Options{Clock: m.clk}
	opts.CreationExpiry, m.creation = drawExpiry(t, "creationExpiry")
	opts.DeletionExpiry, m.deletion = drawExpiry(t, "deletionExpiry")
	if rapid.Bool().Draw(t, "hooks") {
		m.hooks = &hookLog{}
		opts.Hooks.Resolved = m.hooks.resolved
	}
	m.tr = perpod.New(opts)
	return m
}

func drawKey(t *rapid.T) string    { return rapid.SampledFrom(modelKeys).Draw(t, "key") }
func drawPodKey(t *rapid.T) string { return rapid.SampledFrom(modelPodKeys).Draw(t, "podKey") }

// prune drops the expected pods past their kind's expiry.
func (m *trackerModel) prune(r *modelRecord) {
	now := m.clk.Now()
	for podKey, at := range r.creations {
		if now.Sub(at) > m.creation {
			delete(r.creations, podKey)
			r.expired = true
		}
	}
	for podKey, at := range r.deletions {
		if now.Sub(at) > m.deletion {
			delete(r.deletions, podKey)
			r.expired = true
		}
	}
}

func (m *trackerModel) expect(key, podKey string, deletion bool) {
	r := m.records[key]
	if r == nil {
		r = &modelRecord{creations: map[string]time.Time{}, deletions: map[string]time.Time{}}
		m.records[key] = r
	}
	m.prune(r)
	if len(r.creations) == 0 && len(r.deletions) == 0 {
		*r = modelRecord{creations: r.creations, deletions: r.deletions, since: m.clk.Now()}
	}
	if deletion {
		r.deletions[podKey] = m.clk.Now()
	} else {
		r.creations[podKey] = m.clk.Now()
	}
}

func (m *trackerModel) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"ExpectCreation": func(t *rapid.T) {
			key, podKey := drawKey(t), drawPodKey(t)
			m.tr.ExpectCreation(key, podKey)
			m.expect(key, podKey, false)
		},
		"ExpectDeletion": func(t *rapid.T) {
			key, podKey := drawKey(t), drawPodKey(t)
			m.tr.ExpectDeletion(key, podKey)
			m.expect(key, podKey, true)
		},
		"CreationObserved": func(t *rapid.T) {
			key, podKey := drawKey(t), drawPodKey(t)
			m.tr.CreationObserved(key, podKey)
			if r := m.records[key]; r != nil {
				delete(r.creations, podKey)
			}
		},
		"DeletionObserved": func(t *rapid.T) {
			key, podKey := drawKey(t), drawPodKey(t)
			m.tr.DeletionObserved(key, podKey)
			if r := m.records[key]; r != nil {
				delete(r.deletions, podKey)
			}
		},
		"Observe": func(t *rapid.T) {
			key := drawKey(t)
			// Each pod of the cluster is running, terminating, absent or
			// unreadable.
			states := map[string]string{}
			for _, podKey := range modelPodKeys {
				states[podKey] = rapid.SampledFrom([]string{"running", "terminating", "absent", "error"}).Draw(t, "state "+podKey)
			}
			lookup := func(podKey string) (*corev1.Pod, error) {
				switch states[podKey] {
				case "running":
					return &corev1.Pod{}, nil
				case "terminating":
					return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: new(metav1.NewTime(epoch))}}, nil
				case "error":
					return nil, errors.New("unreachable")
				}
				return nil, nil
			}
			observed, err := m.tr.Observe(key, lookup)
			want, wantErr := 0, false
			if r := m.records[key]; r != nil {
				m.prune(r)
				for podKey := range r.creations {
					switch states[podKey] {
					case "running", "terminating":
						delete(r.creations, podKey)
						want++
					case "error":
						wantErr = true
					}
				}
				for podKey := range r.deletions {
					switch states[podKey] {
					case "absent", "terminating":
						delete(r.deletions, podKey)
						want++
					case "error":
						wantErr = true
					}
				}
			}
			if observed != want || (err != nil) != wantErr {
				t.Fatalf("Observe(%q) = %d, %v; want %d, error %v", key, observed, err, want, wantErr)
			}
		},
		"Satisfied": func(t *rapid.T) {
			// The check below calls Satisfied for every key; this action
			// only makes the hook's round end at a drawn moment.
			key := drawKey(t)
			got := m.tr.Satisfied(key)
			if want := m.satisfied(key); got != want {
				t.Fatalf("Satisfied(%q) = %v, want %v", key, got, want)
			}
		},
		"Delete": func(t *rapid.T) {
			key := drawKey(t)
			m.tr.Delete(key)
			delete(m.records, key)
		},
		"DeletePrefix": func(t *rapid.T) {
			prefix := rapid.SampledFrom(modelPrefixes).Draw(t, "prefix")
			want := 0
			for key := range m.records {
				if strings.HasPrefix(key, prefix) {
					delete(m.records, key)
					want++
				}
			}
			if got := m.tr.DeletePrefix(prefix); got != want {
				t.Fatalf("DeletePrefix(%q) = %d, want %d", prefix, got, want)
			}
		},
		"Step": func(t *rapid.T) {
			m.clk.Step(rapid.SampledFrom([]time.Duration{time.Second, 29 * time.Second, time.Minute, expectations.DefaultTTL}).Draw(t, "step"))
		},
		"": m.check,
	}
}

// satisfied is what Satisfied returns for key, and the hook call it makes.
func (m *trackerModel) satisfied(key string) bool {
	r := m.records[key]
	if r == nil {
		return true
	}
	m.prune(r)
	ok := len(r.creations) == 0 && len(r.deletions) == 0
	if ok && !r.resolved {
		r.resolved = true
		if m.hooks != nil {
			want := resolvedCall{key, expectations.Fulfilled, m.clk.Now().Sub(r.since)}
			if r.expired {
				want.resolution = expectations.Expired
			}
			m.wantHooks = append(m.wantHooks, want)
		}
	}
	return ok
}

// check compares every observable of every key with the model.
func (m *trackerModel) check(t *rapid.T) {
	for _, key := range modelKeys {
		if got, want := m.tr.Satisfied(key), m.satisfied(key); got != want {
			t.Fatalf("key %q: Satisfied = %v, want %v", key, got, want)
		}
		creations, deletions := m.tr.Pending(key)
		var wantCreations, wantDeletions []string
		if r := m.records[key]; r != nil {
			m.prune(r)
			wantCreations, wantDeletions = sortedKeys(r.creations), sortedKeys(r.deletions)
		}
		if !slices.Equal(creations, wantCreations) || !slices.Equal(deletions, wantDeletions) {
			t.Fatalf("key %q: Pending = %q, %q; want %q, %q", key, creations, deletions, wantCreations, wantDeletions)
		}
	}
	for _, prefix := range modelPrefixes {
		var want []string
		for key := range m.records {
			if strings.HasPrefix(key, prefix) {
				want = append(want, key)
			}
		}
		slices.Sort(want)
		if got := m.tr.KeysWithPrefix(prefix); !slices.Equal(got, want) {
			t.Fatalf("KeysWithPrefix(%q) = %q, want %q", prefix, got, want)
		}
	}
	if m.hooks != nil {
		if got := m.hooks.take(); !slices.Equal(got, m.wantHooks) {
			t.Fatalf("Hooks.Resolved calls = %+v, want %+v", got, m.wantHooks)
		}
	}
	m.wantHooks = nil
}

func sortedKeys(pods map[string]time.Time) []string {
	if len(pods) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(pods))
}

// TestTrackerModel checks the Tracker against the model: per-pod
// expectations of both kinds under one key, settled only by their own pod
// keys, by events or lookups, each timed from its own Expect call by its
// kind's expiry (zero and negative: DefaultTTL; Never: no limit), with
// hooks, prefixes and clock steps across the expiries.
func TestTrackerModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newTrackerModel(t)
		t.Repeat(m.actions())
	})
}
