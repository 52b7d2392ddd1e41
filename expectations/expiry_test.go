package expectations_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

func TestExpiryString(t *testing.T) {
	for _, c := range []struct {
		e    expectations.Expiry
		want string
	}{
		{expectations.Expiry{}, "inherit"},
		{expectations.ExpireAfter(30 * time.Second), "after 30s"},
		{expectations.ExpireAfter(0), "now"},
		{expectations.ExpireAfter(-time.Second), "now"},
		{expectations.ExpireNever(), "never"},
		{expectations.ExpireNow(), "now"},
	} {
		assert.Equal(t, c.want, c.e.String())
	}
}

// TestPerKindExpiry pins Options.CreationExpiry and DeletionExpiry: each
// kind is timed from when it was armed, the key is satisfied once every
// pending kind is, and the Add calls forget a kind past its limit instead
// of arming it again.
func TestPerKindExpiry(t *testing.T) {
	type step func(tr *expectations.Tracker, clk *fakeclock.Clock)
	addC := func(pod string) step {
		return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.AddCreationKey(rsKey, pod) }
	}
	addD := func(pod string) step {
		return func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.AddDeletionKey(rsKey, pod) }
	}
	wait := func(d time.Duration) step {
		return func(_ *expectations.Tracker, clk *fakeclock.Clock) { clk.Step(d) }
	}
	// KubeRay's shape: creations time out after 30 s, deletions never.
	operator := expectations.Options{
		CreationExpiry: expectations.ExpireAfter(30 * time.Second),
		DeletionExpiry: expectations.ExpireNever(),
	}
	cases := []struct {
		name       string
		opts       expectations.Options
		steps      []step
		want       expectations.Resolution
		satisfied  bool
		adds, dels int
		creations  []string
		deletions  []string
	}{
		{"a creation waits until its own limit", operator,
			[]step{addC("ns/a"), wait(30 * time.Second)},
			expectations.Waiting, false, 1, 0, []string{"ns/a"}, nil},
		{"a creation past its limit no longer blocks, and lists no key", operator,
			[]step{addC("ns/a"), wait(30*time.Second + 1)},
			expectations.Expired, true, 1, 0, nil, nil},
		{"a deletion never expires", operator,
			[]step{addD("ns/a"), wait(24 * time.Hour)},
			expectations.Waiting, false, 0, 1, nil, []string{"ns/a"}},
		{"an expired creation does not hide a pending deletion", operator,
			[]step{addD("ns/d"), addC("ns/c"), wait(time.Minute)},
			expectations.Waiting, false, 1, 1, nil, []string{"ns/d"}},
		{"adding a deletion does not re-arm the creations", operator,
			[]step{addC("ns/c"), wait(20 * time.Second), addD("ns/d"), wait(11 * time.Second), func(tr *expectations.Tracker, _ *fakeclock.Clock) { tr.DeletionObserved(rsKey, "ns/d") }},
			expectations.Expired, true, 1, 0, nil, nil},
		{"re-sending a pod after its creation expired starts afresh", operator,
			[]step{addC("ns/a"), addC("ns/b"), wait(time.Minute), addC("ns/b")},
			expectations.Waiting, false, 1, 0, []string{"ns/b"}, nil},
		{"the zero Options re-send a timed-out creation afresh too", expectations.Options{TTL: time.Minute},
			[]step{addC("ns/a"), wait(2 * time.Minute), addC("ns/b")},
			expectations.Waiting, false, 1, 0, []string{"ns/b"}, nil},
		{"ExpireNow never blocks, yet records the key until it is observed", expectations.Options{CreationExpiry: expectations.ExpireNow()},
			[]step{addC("ns/a")},
			expectations.Expired, true, 1, 0, nil, nil},
		{"a kind left to the policy keeps the TTL", expectations.Options{TTL: time.Minute, DeletionExpiry: expectations.ExpireNever()},
			[]step{addC("ns/a"), wait(time.Minute + 1)},
			expectations.Expired, true, 1, 0, nil, nil},
		{"both kinds waiting: no limit if one has none", operator,
			[]step{addC("ns/c"), addD("ns/d")},
			expectations.Waiting, false, 1, 1, []string{"ns/c"}, []string{"ns/d"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := fakeclock.New(epoch)
			c.opts.Clock = clk
			tr := expectations.New(c.opts)
			for _, s := range c.steps {
				s(tr, clk)
			}
			st := tr.Check(rsKey)
			assert.Equal(t, c.want, st.Resolution)
			assert.Equal(t, c.satisfied, st.Satisfied)
			assert.Equal(t, c.satisfied, tr.Satisfied(rsKey))
			adds, dels, _ := tr.Pending(rsKey)
			assert.Equal(t, []int{c.adds, c.dels}, []int{adds, dels}, "counters")
			creations, deletions := tr.PendingKeys(rsKey)
			assert.Equal(t, c.creations, creations, "pending creations")
			assert.Equal(t, c.deletions, deletions, "pending deletions")
		})
	}
}

func TestPerKindExpirySnapshot(t *testing.T) {
	clk := fakeclock.New(epoch)
	tr := expectations.New(expectations.Options{
		Clock:          clk,
		CreationExpiry: expectations.ExpireAfter(30 * time.Second),
		DeletionExpiry: expectations.ExpireNever(),
	})
	tr.AddCreationKey(rsKey, "ns/a")
	snap, _ := tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: waiting for 1 creation [ns/a] for 0s (expires after 30s)", snap.String())
	tr.AddDeletionKey(rsKey, "ns/b")
	snap, _ = tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: waiting for 1 creation [ns/a] and 1 deletion [ns/b] for 0s (never expires)", snap.String())
	clk.Step(time.Minute)
	tr.DeletionObserved(rsKey, "ns/b")
	snap, _ = tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: satisfied: expired after 1m0s (limit 30s) with 1 creation [ns/a] still pending", snap.String())
}
