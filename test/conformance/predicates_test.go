package conformance

import (
	"slices"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutilv1 "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/controller"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// TestPredicatesMatchUpstream: active, terminating, ready, available (at
// the minReadySeconds boundary ±1ns among others), restart counts and the
// filters agree with k8s.io/kubernetes/pkg/api/v1/pod and pkg/controller on
// every generated pod; so do the pod and owner keys.
func TestPredicatesMatchUpstream(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			if s.now.IsZero() {
				s.now = base
			}
			pods := podsGen(s, 0, 6).Draw(t, "pods")
			for _, p := range pods {
				addCases(6)
				if got, want := podrank.IsActive(p), controller.IsPodActive(p); got != want {
					t.Fatalf("IsActive = %v, upstream IsPodActive = %v\n%s", got, want, describe(p))
				}
				if got, want := podrank.IsTerminating(p), controller.IsPodTerminating(p); got != want {
					t.Fatalf("IsTerminating = %v, upstream IsPodTerminating = %v\n%s", got, want, describe(p))
				}
				if got, want := podutil.IsReady(p), podutilv1.IsPodReady(p); got != want {
					t.Fatalf("IsReady = %v, upstream IsPodReady = %v\n%s", got, want, describe(p))
				}
				if got, want := podutil.IsAvailable(p, s.minReady, s.now), podutilv1.IsPodAvailable(p, s.minReady, metav1.Time{Time: s.now}); got != want {
					t.Fatalf("IsAvailable(minReady=%d, now=%v) = %v, upstream IsPodAvailable = %v\n%s", s.minReady, s.now, got, want, describe(p))
				}
				r, sc := podutil.MaxRestarts(p)
				if ur, us := upstreamMaxContainerRestarts(p); int(r) != ur || int(sc) != us {
					t.Fatalf("MaxRestarts = %d, %d, upstream maxContainerRestarts = %d, %d\n%s", r, sc, ur, us, describe(p))
				}
				if got, want := reconcile.PodKey(p), controller.PodKey(p); got != want {
					t.Fatalf("PodKey = %q, upstream %q", got, want)
				}
			}
			addCases(2)
			if got, want := podrank.FilterActive(pods), controller.FilterActivePods(logr.Discard(), pods); !sameSlice(got, want) {
				t.Fatalf("FilterActive = %v, upstream FilterActivePods = %v", names(got), names(want))
			}
			if got, want := podrank.FilterTerminating(pods), controller.FilterTerminatingPods(pods); !sameSlice(got, want) {
				t.Fatalf("FilterTerminating = %v, upstream FilterTerminatingPods = %v", names(got), names(want))
			}
			ns := rapid.SampledFrom([]string{"", "ns"}).Draw(t, "ownerNamespace")
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rs"}}
			key, err := controller.KeyFunc(rs)
			addCases(1)
			if err != nil || reconcile.OwnerKey(ns, "rs") != key {
				t.Fatalf("OwnerKey(%q, rs) = %q, upstream KeyFunc = %q, %v", ns, reconcile.OwnerKey(ns, "rs"), key, err)
			}
		})
	})
}

// sameSlice is slices.Equal that also tells a nil result from an empty one
// the filters return nil when nothing matches).
func sameSlice(a, b []*corev1.Pod) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}
