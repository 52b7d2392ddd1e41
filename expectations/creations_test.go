package expectations_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

func expectCreationKeys(podKeys ...string) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.ExpectCreationKeys(rsKey, podKeys) }
}
func creationObservedKey(podKey string) step {
	return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.CreationObservedKey(rsKey, podKey) }
}

func TestTrackedCreations(t *testing.T) {
	type want struct {
		adds, dels   int
		ok           bool
		satisfied    bool
		tracks       bool
		creationKeys []string
		deletionKeys []string
	}
	tests := []struct {
		name  string
		steps []step
		want  want
	}{
		{
			name:  "without a record nothing happens",
			steps: []step{creationObservedKey("default/a")},
			want:  want{satisfied: true},
		},
		{
			name:  "expects each distinct key once",
			steps: []step{expectCreationKeys("default/b", "default/a", "default/b")},
			want:  want{adds: 2, ok: true, tracks: true, creationKeys: []string{"default/a", "default/b"}},
		},
		{
			name:  "an expected key counts",
			steps: []step{expectCreationKeys("default/a", "default/b"), creationObservedKey("default/a")},
			want:  want{adds: 1, ok: true, tracks: true, creationKeys: []string{"default/b"}},
		},
		{
			name: "a duplicate add event counts once",
			steps: []step{expectCreationKeys("default/a", "default/b"),
				creationObservedKey("default/a"), creationObservedKey("default/a")},
			want: want{adds: 1, ok: true, tracks: true, creationKeys: []string{"default/b"}},
		},
		{
			name:  "a pod created by someone else does not count",
			steps: []step{expectCreationKeys("default/a"), creationObservedKey("default/stranger")},
			want:  want{adds: 1, ok: true, tracks: true, creationKeys: []string{"default/a"}},
		},
		{
			name: "a late add event from the previous round does not count",
			steps: []step{expectCreationKeys("default/a"), expectCreationKeys("default/b"),
				creationObservedKey("default/a")},
			want: want{adds: 1, ok: true, tracks: true, creationKeys: []string{"default/b"}},
		},
		{
			name: "all expected keys observed",
			steps: []step{expectCreationKeys("default/a", "default/b"),
				creationObservedKey("default/b"), creationObservedKey("default/a")},
			want: want{ok: true, satisfied: true, tracks: true},
		},
		{
			name:  "no keys give a satisfied round",
			steps: []step{expectCreations(3), expectCreationKeys()},
			want:  want{ok: true, satisfied: true, tracks: true},
		},
		{
			name:  "zeroes the deletion counter, keeps the deletion keys (R-2.2, R-3.5)",
			steps: []step{expectDeletions("default/x"), expectCreationKeys("default/a")},
			want:  want{adds: 1, ok: true, tracks: true, creationKeys: []string{"default/a"}, deletionKeys: []string{"default/x"}},
		},
		{
			name:  "count-only records count every key (R-2.4)",
			steps: []step{expectCreations(2), creationObservedKey("default/a"), creationObservedKey("default/a")},
			want:  want{ok: true, satisfied: true},
		},
		{
			name: "ExpectCreations returns to counting",
			steps: []step{expectCreationKeys("default/a"), expectCreations(2),
				creationObservedKey("default/stranger")},
			want: want{adds: 1, ok: true},
		},
		{
			name:  "Set returns to counting",
			steps: []step{expectCreationKeys("default/a"), set(1, 0), creationObservedKey("default/z")},
			want:  want{ok: true, satisfied: true},
		},
		{
			name: "ExpectDeletions forgets the creation keys but keeps tracking",
			steps: []step{expectCreationKeys("default/a"), expectDeletions("default/x"),
				creationObservedKey("default/a")},
			want: want{dels: 1, ok: true, tracks: true, deletionKeys: []string{"default/x"}},
		},
		{
			name:  "CreationObserved still counts on a tracking key",
			steps: []step{expectCreationKeys("default/a", "default/b"), creationObserved()},
			want:  want{adds: 1, ok: true, tracks: true, creationKeys: []string{"default/a", "default/b"}},
		},
		{
			name:  "Raise and Lower do not touch the keys",
			steps: []step{expectCreationKeys("default/a"), raise(1, 0), lower(2, 0), creationObservedKey("default/a")},
			want:  want{adds: -1, ok: true, satisfied: true, tracks: true},
		},
		{
			name:  "Delete forgets the keys",
			steps: []step{expectCreationKeys("default/a"), deleteKey(), set(1, 0), creationObservedKey("default/q")},
			want:  want{ok: true, satisfied: true},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, clk := newTracker(0)
			for _, s := range tc.steps {
				s(tr, clk)
			}
			assertCounters(t, tr, tc.want.adds, tc.want.dels, tc.want.ok, tc.want.satisfied)
			snap, _ := tr.Snapshot(rsKey)
			assert.Equal(t, tc.want.tracks, snap.TracksCreations, "TracksCreations")
			assert.Equal(t, tc.want.creationKeys, snap.CreationKeys, "CreationKeys")
			assert.Equal(t, tc.want.deletionKeys, snap.DeletionKeys, "DeletionKeys")
		})
	}
}

func TestExpectCreationKeysRestartsTheRound(t *testing.T) {
	tr, clk := newTracker(0)
	tr.ExpectDeletions(rsKey, []string{"default/x"})
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "10")
	clk.Step(4 * expectations.DefaultTTL)
	require.True(t, tr.Satisfied(rsKey), "expired")

	tr.ExpectCreationKeys(rsKey, []string{"default/a"})
	snap, ok := tr.Snapshot(rsKey)
	require.True(t, ok)
	assert.False(t, snap.Satisfied, "the TTL restarts")
	assert.Equal(t, clk.Now(), snap.Since)
	assert.Empty(t, snap.WriteRV, "write evidence is forgotten")
}

func TestExpectCreationKeysDoesNotKeepOrModifyPodKeys(t *testing.T) {
	tr, _ := newTracker(0)
	podKeys := []string{"default/b", "default/a"}
	orig := slices.Clone(podKeys)
	tr.ExpectCreationKeys(rsKey, podKeys)
	assert.Equal(t, orig, podKeys)

	podKeys[0] = "default/x"
	tr.CreationObservedKey(rsKey, "default/x")
	tr.CreationObservedKey(rsKey, "default/b")
	adds, _, _ := tr.Pending(rsKey)
	assert.Equal(t, 1, adds)
}
