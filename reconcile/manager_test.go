package reconcile_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// TestManageReplicasProperty checks the bookkeeping of one ManageReplicas
// call on random pods, owners and faults: the burst is never exceeded,
// every expected operation is accounted for exactly once in the Outcome,
// the expectations left pending are exactly the operations that succeeded
// foreign pods are never deleted, and the inputs are not
// modified.
func TestManageReplicasProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rs := recRS(int32(rapid.IntRange(0, 40).Draw(t, "replicas")))
		burst := rapid.IntRange(-1, 30).Draw(t, "burst")
		track := rapid.Bool().Draw(t, "track")
		n := rapid.IntRange(0, 40).Draw(t, "pods")
		active := make([]*corev1.Pod, n)
		for i := range active {
			opts := []podtest.Option{podtest.Node("n" + strconv.Itoa(rapid.IntRange(0, 3).Draw(t, "node")))}
			switch rapid.IntRange(0, 5).Draw(t, "owner") {
			case 0:
				// orphan
			case 1:
				opts = append(opts, podtest.ControlledBy(recOwnerMeta("other"), "ReplicaSet", "apps/v1"))
			default:
				opts = append(opts, podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"))
			}
			if rapid.Bool().Draw(t, "ready") {
				opts = append(opts, podtest.Ready(podtest.Epoch.Add(time.Duration(rapid.IntRange(0, 1000).Draw(t, "readyAt"))*time.Second)))
			}
			active[i] = podtest.New("p"+strconv.Itoa(i), opts...)
		}
		if n > 0 && rapid.Bool().Draw(t, "duplicate") {
			active = append(active, active[0], nil)
		}
		before := recDeepCopies(active)
		const (
			ok = iota
			fail
			notFound
			nsTerminating
		)
		fault := rapid.SliceOfN(rapid.IntRange(ok, nsTerminating), 64, 64).Draw(t, "faults")
		pods := &recPods{
			CreateErr: func(_ context.Context, _ *corev1.Pod, call int) error {
				switch fault[call%64] {
				case fail, notFound:
					return errRecQuota
				case nsTerminating:
					return recNamespaceTerminating()
				}
				return nil
			},
			DeleteErr: func(_ context.Context, p *corev1.Pod) error {
				i, _ := strconv.Atoi(p.Name[1:])
				switch fault[i%64] {
				case fail:
					return errRecQuota
				case notFound:
					return recNotFound(p.Name)
				}
				return nil
			},
		}
		m := &reconcile.Manager{Pods: pods, BurstReplicas: burst, TrackCreations: track, NameGenerator: recSeqNames(),
			Clock: fakeclock.New(podtest.Epoch.Add(time.Hour))}
		effBurst := burst
		if effBurst <= 0 {
			effBurst = reconcile.DefaultBurstReplicas
		}
		// Two rounds on the same Manager: the second may retry names of the
		// first's failed tracked creates.
		for round := range 2 {
			createsBefore, deletesBefore := len(pods.creates()), len(pods.deletes())
			addsBefore, delsBefore, hadBefore := m.Tracker().Pending("default/web")
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, nil)
			creates, deletes := len(pods.creates())-createsBefore, pods.deletes()[deletesBefore:]
			assert.Equal(t, n-int(*rs.Spec.Replicas), out.Diff)
			assert.LessOrEqual(t, creates, effBurst, "creates ≤ burst")
			assert.LessOrEqual(t, len(deletes), effBurst, "deletes ≤ burst")
			adds, dels, has := m.Tracker().Pending("default/web")
			switch {
			case out.Diff == 0:
				assert.Equal(t, [3]any{addsBefore, delsBefore, hadBefore}, [3]any{adds, dels, has}, "R-9.4: expectations untouched")
				assert.NoError(t, err)
			case out.Diff < 0:
				assert.Equal(t, min(-out.Diff, effBurst), out.Expected)
				assert.Equal(t, out.Expected, len(out.Created)+out.NamespaceTerminating+out.AlreadyExisted+out.CreateFailed+out.Skipped)
				assert.Equal(t, creates, out.Expected-out.Skipped)
				assert.Equal(t, len(out.Created)+out.NamespaceTerminating+out.AlreadyExisted, adds, "pending adds = successes (R-9.2)")
				assert.Zero(t, dels)
				assert.Equal(t, out.CreateFailed > 0, err != nil)
				if round == 0 || !track {
					assert.Zero(t, out.Retried)
				}
			default:
				assert.Equal(t, min(out.Diff, effBurst), out.Expected)
				assert.Len(t, out.Victims, out.Expected)
				assert.Equal(t, out.Expected, len(out.NotOwned)+len(out.Deleted)+len(out.Gone)+len(out.DeleteFailed))
				assert.Len(t, deletes, out.Expected-len(out.NotOwned))
				for _, v := range out.NotOwned {
					assert.NotContains(t, deletes, reconcile.PodKey(v))
				}
				for _, k := range deletes {
					i, _ := strconv.Atoi(k[len("default/p"):])
					require.Less(t, i, n)
					if ref := active[i].OwnerReferences; len(ref) > 0 {
						assert.Equal(t, rs.UID, ref[0].UID, "foreign pod %s deleted", k)
					}
				}
				assert.Zero(t, adds)
				assert.Equal(t, len(out.Deleted), dels, "pending dels = successful deletes (R-9.3)")
				assert.Equal(t, len(out.DeleteFailed) > 0, err != nil)
			}
			if err != nil {
				assert.True(t, errors.Is(err, errRecQuota))
			}
		}
		assert.Equal(t, before, recDeepCopies(active), "inputs unchanged")
	})
}
