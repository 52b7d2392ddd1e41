package podrank_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

func TestCompare(t *testing.T) {
	at := func(d time.Duration) time.Time { return now.Add(-d) } // d before Now
	withNow := podrank.Options{Now: now}
	cases := []struct {
		name         string
		a, b         *corev1.Pod
		rankA, rankB int
		opts         podrank.Options
		want         int
	}{
		//
		{name: "R-6.1 unscheduled before scheduled", a: pt.New("a"), b: pt.New("b", pt.Node("n1")), want: -1},
		{name: "R-6.1 outranks phase", a: pt.New("a"), b: pt.New("b", pt.Node("n1"), pt.Phase(corev1.PodPending)), want: -1},
		{name: "R-6.1 two different nodes fall through", a: pt.New("a", pt.Node("n2"), pt.Phase(corev1.PodPending)), b: pt.New("b", pt.Node("n1")), want: -1},
		//
		{name: "R-6.2 pending before unknown", a: pt.New("a", pt.Phase(corev1.PodPending)), b: pt.New("b", pt.Phase(corev1.PodUnknown)), want: -1},
		{name: "R-6.2 unknown before running", a: pt.New("a", pt.Phase(corev1.PodUnknown)), b: pt.New("b"), want: -1},
		{name: "R-6.2 empty phase ranks as pending", a: pt.New("a", pt.Phase("")), b: pt.New("b", pt.Phase(corev1.PodPending)), want: 0},
		{name: "R-6.2 succeeded ranks as pending", a: pt.New("a", pt.Phase(corev1.PodSucceeded)), b: pt.New("b", pt.Phase(corev1.PodUnknown)), want: -1},
		{name: "R-6.2 failed ranks as pending", a: pt.New("a", pt.Phase(corev1.PodFailed)), b: pt.New("b", pt.Phase(corev1.PodPending)), want: 0},
		{name: "R-6.2 garbage phase ranks as pending", a: pt.New("a", pt.Phase("Bogus")), b: pt.New("b"), want: -1},
		{name: "R-6.2 outranks readiness", a: pt.New("a", pt.Phase(corev1.PodPending), pt.Ready(t0)), b: pt.New("b", pt.NotReady()), want: -1},
		//
		{name: "R-6.3 not ready before ready", a: pt.New("a", pt.NotReady()), b: pt.New("b", pt.Ready(t0)), want: -1},
		{name: "R-6.3 no Ready condition is not ready", a: pt.New("a"), b: pt.New("b", pt.Ready(t0)), want: -1},
		{name: "R-6.3 only the first Ready condition counts", a: pt.New("a", pt.NotReady(), pt.Ready(t0)), b: pt.New("b", pt.Ready(t0)), want: -1},
		{name: "R-6.3 outranks deletion cost", a: pt.New("a", pt.Ready(t0), pt.DeletionCost("-100")), b: pt.New("b", pt.DeletionCost("100")), want: 1},
		//
		{name: "R-6.4 lower cost first", a: pt.New("a", pt.DeletionCost("-5")), b: pt.New("b", pt.DeletionCost("5")), want: -1},
		{name: "R-6.4 absent cost is 0", a: pt.New("a"), b: pt.New("b", pt.DeletionCost("1")), want: -1},
		{name: "R-6.4 invalid cost 007 is 0", a: pt.New("a", pt.DeletionCost("007")), b: pt.New("b", pt.DeletionCost("1")), want: -1},
		{name: "R-6.4 -007 is -7", a: pt.New("a", pt.DeletionCost("-007")), b: pt.New("b", pt.DeletionCost("-6")), want: -1},
		{name: "R-6.4 out-of-range cost is 0", a: pt.New("a", pt.DeletionCost("2147483648")), b: pt.New("b"), want: 0},
		{name: "R-6.4 MinInt32 first", a: pt.New("a", pt.DeletionCost("-2147483648")), b: pt.New("b", pt.DeletionCost("-2147483647")), want: -1},
		{name: "R-6.4 outranks rank", a: pt.New("a", pt.DeletionCost("1")), rankA: 10, b: pt.New("b"), want: 1},
		{name: "R-6.4 outranks ready time", a: pt.New("a", pt.Ready(at(time.Minute)), pt.DeletionCost("1")), b: pt.New("b", pt.Ready(at(10*time.Hour))), opts: withNow, want: 1},
		{name: "R-6.4 skipped when disabled", a: pt.New("a", pt.DeletionCost("5")), rankA: 2, b: pt.New("b"), rankB: 1, opts: podrank.Options{DisableDeletionCost: true}, want: -1},
		//
		{name: "R-6.5 higher rank first", a: pt.New("a"), rankA: 3, b: pt.New("b"), rankB: 1, want: -1},
		{name: "R-6.5 outranks ready time", a: pt.New("a", pt.Ready(at(10*time.Hour))), rankA: 2, b: pt.New("b", pt.Ready(at(time.Minute))), rankB: 1, opts: withNow, want: -1},
		{name: "R-6.5 huge ranks compare exactly", a: pt.New("a"), rankA: math.MaxInt - 1, b: pt.New("b"), rankB: math.MaxInt - 2, want: -1},
		{name: "R-6.5 negative ranks compare exactly", a: pt.New("a"), rankA: -1, b: pt.New("b"), rankB: -2, want: -1},
		{name: "R-6.5 extreme ranks", a: pt.New("a"), rankA: math.MinInt, b: pt.New("b"), rankB: math.MaxInt, want: 1},
		//
		{name: "R-6.6 more recent ready bucket first", a: pt.New("a", pt.Ready(at(time.Minute))), b: pt.New("b", pt.Ready(at(10*time.Hour))), opts: withNow, want: -1},
		{name: "R-6.6 same bucket: UID decides, not restarts", a: pt.New("a", pt.UID("z"), pt.Ready(at(40*time.Minute)), pt.Restarts(9)), b: pt.New("b", pt.UID("y"), pt.Ready(at(50*time.Minute))), opts: withNow, want: 1},
		{name: "R-6.6 same bucket: UID decides, not creation", a: pt.New("a", pt.UID("y"), pt.Ready(at(50*time.Minute)), pt.Created(time.Time{})), b: pt.New("b", pt.UID("z"), pt.Ready(at(40*time.Minute))), opts: withNow, want: -1},
		{name: "R-6.6 same bucket: UIDs sharing an 8-byte prefix", a: pt.New("a", pt.UID("abcdefgh-2"), pt.Ready(at(40*time.Minute))), b: pt.New("b", pt.UID("abcdefgh-1"), pt.Ready(at(50*time.Minute))), opts: withNow, want: 1},
		{name: "R-6.6 same bucket: a UID that is a prefix of the other first", a: pt.New("a", pt.UID("abcdefgh"), pt.Ready(at(40*time.Minute))), b: pt.New("b", pt.UID("abcdefgh\x00"), pt.Ready(at(50*time.Minute))), opts: withNow, want: -1},
		{name: "R-6.6 same bucket and equal UIDs: equal, restarts not consulted", a: pt.New("a", pt.UID("u"), pt.Ready(at(40*time.Minute)), pt.Restarts(9)), b: pt.New("b", pt.UID("u"), pt.Ready(at(50*time.Minute))), opts: withNow, want: 0},
		{name: "R-6.6 equal instants fall through to restarts", a: pt.New("a", pt.Ready(at(time.Hour)), pt.Restarts(1)), b: pt.New("b", pt.Ready(at(time.Hour).In(time.FixedZone("x", 3600)))), opts: withNow, want: -1},
		{name: "R-6.6 only when both are ready", a: pt.New("a", pt.Condition(corev1.PodReady, corev1.ConditionFalse, at(time.Minute))), b: pt.New("b", pt.Condition(corev1.PodReady, corev1.ConditionFalse, at(10*time.Hour))), opts: withNow, want: 0},
		{name: "R-6.6 zero Now: exact times, later first", a: pt.New("a", pt.UID("z"), pt.Ready(t0.Add(1))), b: pt.New("b", pt.UID("a"), pt.Ready(t0)), want: -1},
		{name: "R-6.6 gate off: exact times, later first", a: pt.New("a", pt.UID("z"), pt.Ready(at(40*time.Minute))), b: pt.New("b", pt.UID("a"), pt.Ready(at(50*time.Minute))), opts: podrank.Options{Now: now, DisableLogarithmicScaleDown: true}, want: -1},
		{name: "R-6.6 future ready times share bucket -1", a: pt.New("a", pt.UID("b"), pt.Ready(now.Add(time.Hour))), b: pt.New("b", pt.UID("a"), pt.Ready(now)), opts: withNow, want: 1},
		{name: "R-6.9 ready time is the first Ready condition's", a: pt.New("a", pt.Ready(at(10*time.Hour)), pt.Ready(at(time.Minute))), b: pt.New("b", pt.Ready(at(time.Minute))), opts: withNow, want: 1},
		{name: "R-6.11 ready without transition time first", a: pt.New("a", pt.UID("z"), pt.Ready(time.Time{})), b: pt.New("b", pt.UID("a"), pt.Ready(now)), opts: withNow, want: -1},
		{name: "R-6.11 zero is later than the future", a: pt.New("a", pt.Ready(now.Add(time.Hour))), b: pt.New("b", pt.Ready(time.Time{})), want: 1},
		//
		{name: "R-6.7 more restarts first", a: pt.New("a", pt.Restarts(0), pt.Restarts(4)), b: pt.New("b", pt.Restarts(3)), want: -1},
		{name: "R-6.7 regular before sidecar", a: pt.New("a", pt.Restarts(2)), b: pt.New("b", pt.Restarts(1), pt.InitRestarts("proxy", true, 5)), want: -1},
		{name: "R-6.7 sidecar restarts break ties", a: pt.New("a", pt.Restarts(1), pt.InitRestarts("proxy", true, 3)), b: pt.New("b", pt.Restarts(1)), want: -1},
		{name: "R-6.7 outranks creation time", a: pt.New("a", pt.Restarts(1), pt.Created(t0)), b: pt.New("b", pt.Created(time.Time{})), opts: withNow, want: -1},
		{name: "R-6.12 ordinary init containers are ignored", a: pt.New("a", pt.InitRestarts("init", false, 9)), b: pt.New("b"), want: 0},
		{name: "R-6.12 an undeclared init status is ignored", a: pt.New("a", withInitStatus("ghost", 9)), b: pt.New("b"), want: 0},
		{name: "R-6.12 negative counts read as 0", a: pt.New("a", pt.Restarts(-3)), b: pt.New("b"), want: 0},
		//
		{name: "R-6.8 newer creation bucket first", a: pt.New("a", pt.Created(at(time.Minute))), b: pt.New("b", pt.Created(at(10*time.Hour))), opts: withNow, want: -1},
		{name: "R-6.8 same bucket: UID decides", a: pt.New("a", pt.UID("z"), pt.Created(at(40*time.Minute))), b: pt.New("b", pt.UID("y"), pt.Created(at(50*time.Minute))), opts: withNow, want: 1},
		{name: "R-6.8 zero creation time first", a: pt.New("a", pt.Created(time.Time{})), b: pt.New("b", pt.Created(now)), opts: withNow, want: -1},
		{name: "R-6.8 zero Now: exact times, later first", a: pt.New("a", pt.UID("z"), pt.Created(t0.Add(1))), b: pt.New("b", pt.UID("a")), want: -1},
		{name: "R-6.8 equal instants are equal", a: pt.New("a", pt.UID("z")), b: pt.New("b", pt.UID("a"), pt.Created(t0.In(time.FixedZone("x", 60)))), opts: withNow, want: 0},
		//
		{name: "R-6.14 equal instants skip the UID tie-break", a: pt.New("a", pt.UID("c"), pt.Created(at(10*time.Minute))), b: pt.New("b", pt.UID("a"), pt.Created(at(10*time.Minute))), opts: withNow, want: 0},
		{name: "R-6.14 nothing decides: equal", a: pt.New("a"), b: pt.New("b"), opts: withNow, want: 0},
		//
		{name: "R-6.15 terminating state is ignored", a: pt.New("a", pt.Deleting(t0)), b: pt.New("b"), want: 0},
		{name: "R-6.15 availability is ignored", a: pt.New("a", pt.Ready(at(time.Second))), b: pt.New("b", pt.Ready(at(time.Second))), opts: withNow, want: 0},
		{name: "R-6.15 priority and labels are ignored", a: pt.New("a", withPriority(1000), pt.Labels(map[string]string{"x": "y"})), b: pt.New("b"), want: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := podrank.Ranked{Pod: c.a, Rank: c.rankA}, podrank.Ranked{Pod: c.b, Rank: c.rankB}
			assert.Equal(t, c.want, sign(podrank.Compare(a, b, c.opts)), "Compare(a, b)")
			assert.Equal(t, -c.want, sign(podrank.Compare(b, a, c.opts)), "Compare(b, a)")
			assert.Equal(t, c.want, upstreamSign(a, b, c.opts), "the reference Less disagrees with the table")
		})
	}
}

func withInitStatus(name string, restarts int32) pt.Option {
	return func(p *corev1.Pod) {
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: name, RestartCount: restarts})
	}
}

func withPriority(v int32) pt.Option { return func(p *corev1.Pod) { p.Spec.Priority = &v } }

// TestCompareSidecars pins R-6.12's split between native sidecars (init
// containers that restart Always) and every other init container.
func TestCompareSidecars(t *testing.T) {
	never := corev1.ContainerRestartPolicy("Never") // the constant is newer than the k8s.io/api floor
	cases := []struct {
		name string
		a    *corev1.Pod
		want int // against a pod without restarts
	}{
		{"R-6.12 sidecar restarts count", pt.New("a", pt.InitRestarts("proxy", true, 1)), -1},
		{"R-6.12 ordinary init restarts do not", pt.New("a", pt.InitRestarts("setup", false, 7)), 0},
		{"R-6.12 restartPolicy Never is ordinary", pt.New("a", pt.InitRestarts("setup", false, 7), func(p *corev1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = &never
		}), 0},
		{"R-6.12 status matched by name to the sidecar", pt.New("a", pt.InitRestarts("setup", false, 7), pt.InitRestarts("proxy", true, 0), func(p *corev1.Pod) {
			p.Status.InitContainerStatuses[1].RestartCount = 2
		}), -1},
		{"R-6.12 declared sidecar without a status", pt.New("a", pt.InitRestarts("proxy", true, 0), func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = nil
		}), 0},
		{"R-6.12 ephemeral containers are ignored", pt.New("a", func(p *corev1.Pod) {
			p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug", RestartCount: 5}}
		}), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := podrank.Ranked{Pod: pt.New("b")}
			a := podrank.Ranked{Pod: c.a}
			assert.Equal(t, c.want, sign(podrank.Compare(a, b, podrank.Options{})))
			assert.Equal(t, c.want, upstreamSign(a, b, podrank.Options{}))
		})
	}
}

// TestCompareNotStrictWeakOrder pins R-6.14's example: A and B created at
// the same instant T with UIDs "a" and "c", C one second later (same
// bucket) with UID "b". Then A<C and C<B, yet A~B.
func TestCompareNotStrictWeakOrder(t *testing.T) {
	opts := podrank.Options{Now: now}
	T := now.Add(-10 * time.Minute)
	A := podrank.Ranked{Pod: pt.New("A", pt.UID("a"), pt.Created(T))}
	B := podrank.Ranked{Pod: pt.New("B", pt.UID("c"), pt.Created(T))}
	C := podrank.Ranked{Pod: pt.New("C", pt.UID("b"), pt.Created(T.Add(time.Second)))}
	require.Equal(t, podrank.LogBucket(now, T), podrank.LogBucket(now, T.Add(time.Second)), "precondition: same bucket")
	assert.Negative(t, podrank.Compare(A, C, opts), "R-6.14 A<C")
	assert.Negative(t, podrank.Compare(C, B, opts), "R-6.14 C<B")
	assert.Zero(t, podrank.Compare(A, B, opts), "R-6.14 A~B")
	assert.Equal(t, -1, upstreamSign(A, C, opts))
	assert.Equal(t, -1, upstreamSign(C, B, opts))
	assert.Equal(t, 0, upstreamSign(A, B, opts))
}

func TestCompareNil(t *testing.T) {
	p := podrank.Ranked{Pod: pt.New("p")}
	var none podrank.Ranked
	assert.Negative(t, podrank.Compare(none, p, podrank.Options{}), "a nil pod deletes first")
	assert.Positive(t, podrank.Compare(p, none, podrank.Options{}))
	assert.Zero(t, podrank.Compare(none, none, podrank.Options{}))
}

// TestLogBucket pins R-6.10's bucket edges, including upstream's float64
// rounding just below a power of two.
func TestLogBucket(t *testing.T) {
	cases := []struct {
		name  string
		delta time.Duration // Now − t
		want  int
	}{
		{"R-6.10 t equal to Now is -1", 0, -1},
		{"R-6.10 t after Now is -1", -time.Hour, -1},
		{"R-6.10 one nanosecond is bucket 0", 1, 0},
		{"R-6.10 three nanoseconds is bucket 1", 3, 1},
		{"R-6.10 2^41 ns is bucket 41", 1 << 41, 41},
		{"R-6.10 2^41+1 ns is bucket 41", 1<<41 + 1, 41},
		{"R-6.10 2^41-1 ns is bucket 40", 1<<41 - 1, 40},
		{"R-6.10 36m40s is bucket 41", 36*time.Minute + 40*time.Second, 41},
		{"R-6.10 36m39s (just under 2^41 ns) is bucket 40", 36*time.Minute + 39*time.Second, 40},
		{"R-6.10 2^52 ns (52 d) is bucket 52", 1 << 52, 52},
		{"R-6.10 2^50-1 ns rounds up to bucket 50 through float64", 1<<50 - 1, 50},
		{"R-6.10 2^46-2^17 ns stays in bucket 45", 1<<46 - 1<<17, 45},
		{"R-6.10 saturated durations are bucket 63", math.MaxInt64, 63},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, podrank.LogBucket(now, now.Add(-c.delta)))
			assert.Equal(t, int64(c.want), upstreamLogRank(now.Add(-c.delta), now), "the reference disagrees with the table")
		})
	}
	t.Run("R-6.10 far past saturates", func(t *testing.T) {
		assert.Equal(t, 63, podrank.LogBucket(now, time.Unix(-1<<40, 0)))
		assert.Equal(t, 63, podrank.LogBucket(now, time.Unix(-1<<35, 0)))
		assert.Equal(t, 62, podrank.LogBucket(now, now.Add(-(1<<62))))
		assert.Equal(t, -1, podrank.LogBucket(now, time.Unix(1<<35, 0)))
		assert.Equal(t, -1, podrank.LogBucket(now, time.Unix(1<<40, 0)))
	})
}

// TestPropertyLogBucketMatchesFloat64 checks the bucket shortcut against
// upstream's formula, with extra weight just below powers of two.
func TestPropertyLogBucketMatchesFloat64(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.SampledFrom([]time.Time{now, wallNow, wallNow.Round(0), time.Unix(math.MaxInt64, 0), time.Unix(math.MinInt64, 0), time.Unix(math.MaxInt64-62135596800, 0)}).Draw(t, "now")
		var at time.Time
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0: // just around a power of two before Now
			d := time.Duration(1)<<rapid.IntRange(0, 62).Draw(t, "exp") - time.Duration(rapid.Int64Range(-1<<20, 1<<20).Draw(t, "off"))
			at = base.Add(-d)
		case 1: // any duration, saturating at the ends
			at = base.Add(-time.Duration(rapid.Int64().Draw(t, "d")))
		default: // any instant, including ones whose distance overflows
			at = time.Unix(rapid.Int64().Draw(t, "sec"), rapid.Int64Range(0, 1e9-1).Draw(t, "nsec"))
		}
		assert.Equal(t, int(upstreamLogRank(at, base)), podrank.LogBucket(base, at), "t=%v", at)
	})
}

// TestPropertyCompareAgreesWithReferenceWhenDisabled compares Compare with
// the reference ranking (upstream_test.go) under the options real v1.37.2
// cannot exercise: DisableDeletionCost (the PodDeletionCost gate off) and
// DisableLogarithmicScaleDown (the gate v1.37.2 removed). With the default
// options the conformance module compares Compare with the real
// ActivePodsWithRanks.Less instead (test/conformance).
func TestPropertyCompareAgreesWithReferenceWhenDisabled(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := podrank.Ranked{Pod: podGen().Draw(t, "a"), Rank: rankGen().Draw(t, "rankA")}
		b := podrank.Ranked{Pod: podGen().Draw(t, "b"), Rank: rankGen().Draw(t, "rankB")}
		opts := optsGen().Draw(t, "opts")
		if !opts.DisableDeletionCost && !opts.DisableLogarithmicScaleDown {
			opts.DisableDeletionCost = rapid.Bool().Draw(t, "noCostInstead")
			opts.DisableLogarithmicScaleDown = !opts.DisableDeletionCost
		}
		assert.Equal(t, upstreamSign(a, b, opts), sign(podrank.Compare(a, b, opts)))
	})
}

func TestPropertyCompareAntisymmetric(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := podrank.Ranked{Pod: nilOr(podGen()).Draw(t, "a"), Rank: rankGen().Draw(t, "rankA")}
		b := podrank.Ranked{Pod: nilOr(podGen()).Draw(t, "b"), Rank: rankGen().Draw(t, "rankB")}
		opts := optsGen().Draw(t, "opts")
		assert.Equal(t, sign(podrank.Compare(a, b, opts)), -sign(podrank.Compare(b, a, opts)))
		assert.Zero(t, podrank.Compare(a, a, opts), "irreflexive")
	})
}

// TestPropertyBatchKeysMatchCompare checks that keys built in one batch,
// as ForDeletion builds them, order exactly as Compare does.
func TestPropertyBatchKeysMatchCompare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := rapid.SliceOfN(podGen(), 2, 6).Draw(t, "pods")
		ranks := rapid.SliceOfN(rankGen(), len(pods), len(pods)).Draw(t, "ranks")
		opts := optsGen().Draw(t, "opts")
		i := rapid.IntRange(0, len(pods)-1).Draw(t, "i")
		j := rapid.IntRange(0, len(pods)-1).Draw(t, "j")
		want := podrank.Compare(podrank.Ranked{Pod: pods[i], Rank: ranks[i]}, podrank.Ranked{Pod: pods[j], Rank: ranks[j]}, opts)
		assert.Equal(t, sign(want), sign(podrank.CompareBatch(pods, ranks, opts, i, j)))
	})
}

// FuzzCompare builds two pods from arbitrary fields and checks that
// Compare does not panic, is antisymmetric and agrees with the reference.
func FuzzCompare(f *testing.F) {
	f.Add("n1", "", "Running", "Pending", true, false, "5", "-007", int64(0), int64(1), int64(0), int64(1), int32(1), int32(0), "a", "b", 2, 1, int64(7200e9))
	f.Add("", "", "", "Bogus", true, true, "", "+5", int64(1<<41), int64(1<<41-1), int64(-1), int64(0), int32(0), int32(0), "abcdefgh-1", "abcdefgh-2", 0, 0, int64(0))
	f.Fuzz(func(t *testing.T, nodeA, nodeB, phaseA, phaseB string, readyA, readyB bool, costA, costB string,
		readyNsA, readyNsB, createdNsA, createdNsB int64, restartsA, restartsB int32, uidA, uidB string, rankA, rankB int, nowNs int64) {
		mk := func(node, phase string, ready bool, cost string, readyNs, createdNs int64, restarts int32, uid string) *corev1.Pod {
			opts := []pt.Option{pt.Node(node), pt.Phase(corev1.PodPhase(phase)), pt.UID(uid), pt.DeletionCost(cost),
				pt.Created(fuzzTime(createdNs)), pt.Restarts(restarts), pt.InitRestarts("s", true, restarts/2)}
			if ready {
				opts = append(opts, pt.Ready(fuzzTime(readyNs)))
			} else {
				opts = append(opts, pt.NotReady())
			}
			return pt.New("p", opts...)
		}
		a := podrank.Ranked{Pod: mk(nodeA, phaseA, readyA, costA, readyNsA, createdNsA, restartsA, uidA), Rank: rankA}
		b := podrank.Ranked{Pod: mk(nodeB, phaseB, readyB, costB, readyNsB, createdNsB, restartsB, uidB), Rank: rankB}
		for _, opts := range []podrank.Options{{Now: fuzzTime(nowNs)}, {}, {Now: fuzzTime(nowNs), DisableDeletionCost: true, DisableLogarithmicScaleDown: true}} {
			ab, ba := podrank.Compare(a, b, opts), podrank.Compare(b, a, opts)
			if sign(ab) != -sign(ba) {
				t.Fatalf("not antisymmetric: %d vs %d", ab, ba)
			}
			if want := upstreamSign(a, b, opts); sign(ab) != want {
				t.Fatalf("Compare = %d, reference %d (opts %+v)", ab, want, opts)
			}
		}
	})
}

// fuzzTime maps 0 to the zero time and anything else to an instant
// around t0, so both the exact and the absurd ranges are reached.
func fuzzTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	if ns%7 == 0 {
		return time.Unix(ns, 0) // whole seconds since 1970, up to the extremes
	}
	return t0.Add(time.Duration(ns))
}
