package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubernetes/pkg/controller"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// upstreamExpectations is the real v1.37.2 UIDTrackingControllerExpectations
// twice over, fed the same operations:
//
//   - prod is what kube-controller-manager builds (a plain store). Its
//     expiry reads the wall clock, which never reaches 5 minutes during a
//     test, so it gives the counters and key sets exactly as production
//     keeps them, also past the expiry;
//   - ttl is built the way upstream's own tests inject a clock: the counter
//     records live in a client-go expiration store with a TTLPolicy of
//     ExpectationsTimeout on a fake clock (an expired record reads as absent,
//     which SatisfiedExpectations also answers with true). It gives
//     SatisfiedExpectations on the fake clock, boundary included (expired is
//     strictly older than the TTL).
type upstreamExpectations struct {
	prod, ttl *controller.UIDTrackingControllerExpectations
}

func newUpstreamExpectations(clock *testingclock.FakeClock) upstreamExpectations {
	store := cache.NewFakeExpirationStore(controller.ExpKeyFunc, nil,
		&cache.TTLPolicy{TTL: controller.ExpectationsTimeout, Clock: clock}, clock)
	return upstreamExpectations{
		prod: controller.NewUIDTrackingControllerExpectations(controller.NewControllerExpectations()),
		ttl:  controller.NewUIDTrackingControllerExpectations(&controller.ControllerExpectations{Store: store}),
	}
}

func (u upstreamExpectations) each(f func(*controller.UIDTrackingControllerExpectations)) {
	f(u.prod)
	f(u.ttl)
}

// TestTrackerMatchesUIDTrackingControllerExpectations runs random operation
// sequences (negative arguments, duplicate and unknown pod keys, clock steps
// that land exactly on, just before and just after the 5-minute expiry) on
// an expectations.Tracker with the default policy and on upstream's
// UIDTrackingControllerExpectations, and after every step compares, for
// every key: Satisfied, the counters (Pending vs GetExpectations, existence
// included) and the pending deletion keys (Snapshot vs GetUIDs).
func TestTrackerMatchesUIDTrackingControllerExpectations(t *testing.T) {
	keys := []string{"ns/a", "ns/b", ""}
	podKeys := []string{"ns/p0", "ns/p1", "ns/p2", "/p3"}
	logger := logr.Discard()
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			clock := testingclock.NewFakeClock(base)
			tr := expectations.New(expectations.Options{Clock: clock})
			up := newUpstreamExpectations(clock)
			lastSet := map[string]time.Time{}
			key := rapid.SampledFrom(keys)
			count := rapid.IntRange(-2, 3)
			podKeyList := rapid.SliceOfN(rapid.SampledFrom(podKeys), 0, 5)

			steps := rapid.IntRange(1, 30).Draw(t, "steps")
			for step := 0; step < steps; step++ {
				k := key.Draw(t, "key")
				switch op := rapid.IntRange(0, 9).Draw(t, "op"); op {
				case 0:
					a, d := count.Draw(t, "adds"), count.Draw(t, "dels")
					tr.Set(k, a, d)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { _ = u.SetExpectations(logger, k, a, d) })
					lastSet[k] = clock.Now()
				case 1:
					a := count.Draw(t, "adds")
					tr.ExpectCreations(k, a)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { _ = u.ExpectCreations(logger, k, a) })
					lastSet[k] = clock.Now()
				case 2:
					pk := podKeyList.Draw(t, "podKeys")
					tr.ExpectDeletions(k, pk)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { _ = u.ExpectDeletions(logger, k, pk) })
					lastSet[k] = clock.Now()
				case 3:
					tr.CreationObserved(k)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { u.CreationObserved(logger, k) })
				case 4:
					pk := rapid.SampledFrom(podKeys).Draw(t, "podKey")
					tr.DeletionObserved(k, pk)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { u.DeletionObserved(logger, k, pk) })
				case 5:
					a, d := count.Draw(t, "adds"), count.Draw(t, "dels")
					tr.Raise(k, a, d)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { u.RaiseExpectations(logger, k, a, d) })
				case 6:
					a, d := count.Draw(t, "adds"), count.Draw(t, "dels")
					tr.Lower(k, a, d)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { u.LowerExpectations(logger, k, a, d) })
				case 7:
					tr.Delete(k)
					up.each(func(u *controller.UIDTrackingControllerExpectations) { u.DeleteExpectations(logger, k) })
				case 8:
					// Land on the expiry of k's round: exactly 5 minutes, or 1ns either side.
					if at, ok := lastSet[k]; ok {
						to := at.Add(controller.ExpectationsTimeout + time.Duration(rapid.IntRange(-1, 1).Draw(t, "expiryNudge")))
						if to.After(clock.Now()) {
							clock.SetTime(to)
						}
					}
				default:
					clock.Step(rapid.SampledFrom([]time.Duration{0, 1, time.Second, time.Minute, 4 * time.Minute, controller.ExpectationsTimeout}).Draw(t, "step"))
				}
				for _, k := range keys {
					addCases(1)
					got := tr.Satisfied(k)
					want := up.ttl.SatisfiedExpectations(logger, k)
					if got != want {
						t.Fatalf("step %d key %q at +%v: Satisfied = %v, upstream %v", step, k, clock.Now().Sub(base), got, want)
					}
					a, d, ok := tr.Pending(k)
					rec, exists, _ := up.prod.GetExpectations(k)
					var ua, ud int64
					if exists {
						ua, ud = rec.GetExpectations()
					}
					if ok != exists || int64(a) != ua || int64(d) != ud {
						t.Fatalf("step %d key %q: Pending = %d, %d, %v; upstream %d, %d, %v", step, k, a, d, ok, ua, ud, exists)
					}
					snap, _ := tr.Snapshot(k)
					wantKeys := up.prod.GetUIDs(k).List()
					if !slices.Equal(snap.DeletionKeys, wantKeys) && !(len(snap.DeletionKeys) == 0 && len(wantKeys) == 0) {
						t.Fatalf("step %d key %q: deletion keys %v, upstream %v", step, k, snap.DeletionKeys, wantKeys)
					}
				}
			}
		})
	})
}
