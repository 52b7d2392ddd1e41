package conformance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/kubernetes/pkg/apis/core/helper"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/podrank"
)

// TestDeletionCostMatchesUpstream: podrank.DeletionCost gives the value and
// the error-or-not of upstream's GetDeletionCostFromPodAnnotations
// for the tricky values, random strings built from the characters that
// matter, and random integers around the int32 range.
func TestDeletionCostMatchesUpstream(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			var v string
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				v = rapid.SampledFrom(costValues).Draw(t, "value")
			case 1:
				v = rapid.StringOf(rapid.SampledFrom([]rune("-+0123456789 e.x"))).Draw(t, "chars")
			default:
				v = rapid.SampledFrom([]string{"", "-", "+"}).Draw(t, "sign") +
					rapid.SampledFrom([]string{"", "0", "00"}).Draw(t, "zeros") +
					rapid.StringMatching(`[0-9]{0,12}`).Draw(t, "digits")
			}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{podrank.DeletionCostAnnotation: v}}}
			got, err := podrank.DeletionCost(p)
			want, upErr := helper.GetDeletionCostFromPodAnnotations(p.Annotations)
			addCases(1)
			if got != want || (err == nil) != (upErr == nil) {
				t.Fatalf("DeletionCost(%q) = %d, %v; upstream %d, %v", v, got, err, want, upErr)
			}
		})
	})
}
