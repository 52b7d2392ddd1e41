package podrank_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

// Explain names the step that decided, one case per step of the order.
func TestExplain(t *testing.T) {
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	withNow := podrank.Options{Now: now}
	for _, tc := range []struct {
		name         string
		a, b         *corev1.Pod
		rankA, rankB int
		opts         podrank.Options
		want         podrank.Rule
	}{
		{name: "R-6.1 unscheduled", a: pt.New("a"), b: pt.New("b", pt.Node("n1")), want: podrank.RuleScheduled},
		{name: "R-6.2 phase", a: pt.New("a", pt.Phase(corev1.PodPending)), b: pt.New("b", pt.Phase(corev1.PodUnknown)), want: podrank.RulePhase},
		{name: "R-6.3 not ready", a: pt.New("a", pt.NotReady()), b: pt.New("b", pt.Ready(t0)), want: podrank.RuleReady},
		{name: "R-6.4 deletion cost", a: pt.New("a", pt.DeletionCost("-5")), b: pt.New("b", pt.DeletionCost("5")), want: podrank.RuleDeletionCost},
		{name: "R-6.5 rank", a: pt.New("a"), rankA: 3, b: pt.New("b"), rankB: 1, want: podrank.RuleRank},
		{name: "R-6.6 ready time", a: pt.New("a", pt.Ready(at(time.Minute))), b: pt.New("b", pt.Ready(at(10*time.Hour))), opts: withNow, want: podrank.RuleReadyTime},
		{name: "R-6.7 restarts", a: pt.New("a", pt.Restarts(3)), b: pt.New("b"), want: podrank.RuleRestarts},
		{name: "R-6.8 creation time", a: pt.New("a", pt.Created(at(time.Minute))), b: pt.New("b", pt.Created(at(time.Hour))), want: podrank.RuleCreationTime},
		{name: "R-6.8 a tie", a: pt.New("a"), b: pt.New("b"), want: podrank.RuleNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := podrank.Ranked{Pod: tc.a, Rank: tc.rankA}, podrank.Ranked{Pod: tc.b, Rank: tc.rankB}
			order, rule := podrank.Explain(a, b, tc.opts)
			assert.Equal(t, tc.want, rule, "%v", rule)
			assert.Equal(t, podrank.Compare(a, b, tc.opts), order)
			if tc.want != podrank.RuleNone {
				assert.Negative(t, order, "a goes first")
			}
			back, backRule := podrank.Explain(b, a, tc.opts)
			assert.Equal(t, -order, back)
			assert.Equal(t, rule, backRule, "the same step decides either way")
		})
	}
	assert.Equal(t, "not ready", podrank.RuleReady.String())
	assert.Equal(t, "unknown rule", podrank.Rule(99).String())
}

// Explain's order is Compare's, for any pods and options, and a
// tie is named only when the pods compare equal.
func TestExplainPropertyIsCompare(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := podrank.Ranked{Pod: nilOr(podGen()).Draw(t, "a"), Rank: rankGen().Draw(t, "rankA")}
		b := podrank.Ranked{Pod: nilOr(podGen()).Draw(t, "b"), Rank: rankGen().Draw(t, "rankB")}
		opts := optsGen().Draw(t, "opts")
		order, rule := podrank.Explain(a, b, opts)
		if want := podrank.Compare(a, b, opts); order != want {
			t.Fatalf("Explain order %d, Compare %d", order, want)
		}
		if rule == podrank.RuleNone && order != 0 && a.Pod != nil && b.Pod != nil {
			t.Fatalf("order %d without a rule", order)
		}
	})
}
