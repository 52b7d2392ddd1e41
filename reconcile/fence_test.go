package reconcile_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

var errLeaseLost = errors.New("lease lost")

// recFence allows the first k questions and refuses every later one (or,
// with reopen, only the (k+1)-th: a fence that opens again must not let a
// stopped call go on). It counts the questions.
type recFence struct {
	k      int64
	reopen bool
	asked  atomic.Int64
}

func (f *recFence) fence() error {
	n := f.asked.Add(1)
	if n <= f.k || (f.reopen && n > f.k+1) {
		return nil
	}
	return errLeaseLost
}

// a fence that refuses after k creates, anywhere in a slow-start
// batch, leaves exactly k creates made and exactly k creations expected.
func TestFenceCreates(t *testing.T) {
	cases := []struct {
		name        string
		n           int32
		k           int64
		reopen      bool
		slow        slowstart.Options
		track       bool
		wantBatches []int
	}{
		{name: "R-13.1 refused before the first create: nothing made", n: 10, k: 0},
		{name: "R-13.1 refused mid-batch (batch 3 = calls 3..6)", n: 10, k: 5, wantBatches: []int{1, 2, 4}},
		{name: "R-13.1 refused at a batch boundary", n: 10, k: 3, wantBatches: []int{1, 2}},
		{name: "R-13.1 refused in one wide batch", n: 20, k: 7, slow: slowstart.Options{InitialBatchSize: 20}, wantBatches: []int{20}},
		{name: "R-13.1 a fence that opens again does not restart the call", n: 10, k: 5, reopen: true, wantBatches: []int{1, 2, 4}},
		{name: "R-13.1 tracked creations: the refused keys are lowered", n: 10, k: 5, track: true, wantBatches: []int{1, 2, 4}},
		{name: "R-13.1 never refused: every create made", n: 6, k: 100, wantBatches: []int{1, 2, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(tc.n)
			pods := &recPods{}
			f := &recFence{k: tc.k, reopen: tc.reopen}
			m := &reconcile.Manager{Pods: pods, SlowStart: tc.slow, Fence: f.fence, TrackCreations: tc.track}
			if tc.track {
				m.NameGenerator = recSeqNames()
			}
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), nil, nil)
			made := min(int(tc.k), int(tc.n))
			assert.Len(t, pods.creates(), made, "create calls")
			assert.Len(t, out.Created, made, "Created")
			assert.Equal(t, tc.wantBatches, out.Batches, "Batches")
			recPending(t, m, "default/web", made, 0)
			if made == int(tc.n) {
				require.NoError(t, err)
				assert.Zero(t, out.Fenced)
				assert.Equal(t, int64(tc.n), f.asked.Load(), "asked once per create")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, reconcile.ErrFenced)
			assert.ErrorIs(t, err, errLeaseLost)
			assert.False(t, errors.Is(err, reconcile.ErrTerminal))
			assert.Equal(t, int(tc.n)-made, out.Fenced, "Fenced")
			assert.Equal(t, int(tc.n)-made, out.Skipped, "Skipped")
			assert.Equal(t, tc.k+1, f.asked.Load(), "not asked again after the refusal")
		})
	}
}

// deletes start at once; each asks the fence first, and after the
// first refusal none is made. The deletions not made are lowered by key.
func TestFenceDeletes(t *testing.T) {
	for _, k := range []int64{0, 1, 4, 7, 8} {
		rs := recRS(2)
		active := recOwned(rs, 10) // 8 victims
		pods := &recPods{}
		f := &recFence{k: k}
		m := &reconcile.Manager{Pods: pods, Fence: f.fence}
		out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
		made := min(int(k), 8)
		assert.Len(t, pods.deletes(), made, "k=%d: delete calls", k)
		assert.Len(t, out.Deleted, made, "k=%d", k)
		assert.Empty(t, out.DeleteFailed, "k=%d", k)
		assert.Equal(t, 8-made, out.Fenced, "k=%d", k)
		recPending(t, m, "default/web", 0, made)
		if made == 8 {
			assert.NoError(t, err, "k=%d", k)
			continue
		}
		assert.ErrorIs(t, err, reconcile.ErrFenced, "k=%d", k)
		assert.ErrorIs(t, err, errLeaseLost, "k=%d", k)
		// The keys still expected are exactly the deleted pods'.
		var deleted []string
		for _, p := range out.Deleted {
			deleted = append(deleted, reconcile.PodKey(p))
		}
		snap, _ := m.Tracker().Snapshot("default/web")
		assert.ElementsMatch(t, deleted, snap.DeletionKeys, "k=%d", k)
	}
}

// in a sync: a refusal at the claim step ends the sync before the
// manage step; one in the manage step, or just before the status write,
// means no status write; a nil fence is upstream's sync. The fence is asked
// at the status step only when there is a status to write.
func TestFenceSync(t *testing.T) {
	rs := recRS(3)
	orphan := podtest.New("orphan", podtest.Labels(map[string]string{"app": "web"}))
	cases := []struct {
		name        string
		pods        []*corev1.Pod
		k           int64 // questions allowed; < 0: no fence
		wantPatches int
		wantCreates int
		wantStatus  int
		wantErr     bool
	}{
		{name: "R-13.1 no fence: adopt, create 2, write status", pods: []*corev1.Pod{orphan}, k: -1, wantPatches: 1, wantCreates: 2, wantStatus: 1},
		{name: "R-13.1 refused before the adoption: nothing written", pods: []*corev1.Pod{orphan}, k: 0, wantErr: true},
		{name: "R-13.1 refused after the adoption: no create, no status", pods: []*corev1.Pod{orphan}, k: 1, wantPatches: 1, wantErr: true},
		{name: "R-13.1 refused mid-creates: no status", k: 2, wantCreates: 2, wantErr: true},
		{name: "R-13.1 refused just before the status write", k: 3, wantCreates: 3, wantErr: true},
		{name: "R-13.1 never refused", k: 4, wantCreates: 3, wantStatus: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &recFence{k: tc.k}
			c := newRecController(t, newRecOwners(rs), tc.pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				if tc.k >= 0 {
					cfg.Fence = f.fence
				}
			})
			// Every status step asks for a write, which the server
			// answers with the object as sent.
			c.status.ret = func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet { return rs }
			res, err := c.Sync(context.Background(), "default/web")
			assert.Len(t, c.patcher.recorded(), tc.wantPatches, "patches")
			assert.Len(t, c.control.creates(), tc.wantCreates, "creates")
			assert.Equal(t, tc.wantStatus, c.status.sentWrites(), "status writes")
			adds, _, _ := c.Tracker().Pending("default/web")
			assert.Equal(t, len(res.Outcome.Created), adds, "expected creations = creates made")
			if !tc.wantErr {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, reconcile.ErrFenced)
			assert.ErrorIs(t, err, errLeaseLost)
			assert.False(t, errors.Is(err, reconcile.ErrTerminal))
		})
	}
}

// as a property: whatever the batch sizes, the number of pods, the
// direction and the moment the fence closes, exactly the writes allowed
// before the refusal are made, none after, and the pending expectations
// equal what was made.
func TestFenceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "n")
		k := rapid.Int64Range(0, int64(n)+1).Draw(t, "k")
		f := &recFence{k: k, reopen: rapid.Bool().Draw(t, "reopen")}
		deleting := rapid.Bool().Draw(t, "deleting")
		m := &reconcile.Manager{
			Fence:          f.fence,
			TrackCreations: rapid.Bool().Draw(t, "track"),
			NameGenerator:  recSeqNames(),
			SlowStart: slowstart.Options{
				InitialBatchSize: rapid.IntRange(0, 8).Draw(t, "initial"),
				MaxBatchSize:     rapid.IntRange(0, 16).Draw(t, "max"),
			},
		}
		pods := &recPods{}
		m.Pods = pods
		var active []*corev1.Pod
		rs := recRS(int32(n))
		if deleting {
			rs = recRS(0)
			active = recOwned(rs, n)
		}
		out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
		want := min(int(k), n)
		if made := len(pods.creates()) + len(pods.deletes()); made != want {
			t.Fatalf("%d writes made, want %d (the fence allows %d of %d)", made, want, k, n)
		}
		adds, dels, _ := m.Tracker().Pending("default/web")
		if deleting && (dels != want || adds != 0) || !deleting && (adds != want || dels != 0) {
			t.Fatalf("pending adds %d dels %d after %d writes", adds, dels, want)
		}
		asked := f.asked.Load()
		switch {
		case want == n && err != nil:
			t.Fatalf("every write allowed, yet %v", err)
		case want < n && !errors.Is(err, reconcile.ErrFenced):
			t.Fatalf("refused, but the error %v is not ErrFenced", err)
		case want < n && (asked != k+1 || out.Fenced != n-want):
			t.Fatalf("refused after %d: asked %d times, Fenced %d", k, asked, out.Fenced)
		}
	})
}

// The refusal names the owner once and says which write it stopped.
func TestFenceErrorMessage(t *testing.T) {
	f := &recFence{k: 0}
	c := newRecController(t, newRecOwners(recRS(2)), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) { cfg.Fence = f.fence })
	_, err := c.Sync(context.Background(), "default/web")
	require.Error(t, err)
	assert.Equal(t, "reconcile: owner default/web: fenced before creating a pod, no further write made: lease lost", err.Error())
}
