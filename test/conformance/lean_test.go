package conformance

import (
	"reflect"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutilv1 "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podutil"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// withNoise adds to p what an API server returns and no rule reads:
// containers, volumes, IPs, other annotations, managed fields, a start time.
func withNoise(p *corev1.Pod) *corev1.Pod {
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}}
	p.GenerateName, p.Finalizers = "rs-", []string{"example.com/keep"}
	if p.Annotations != nil {
		p.Annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
	}
	p.Spec.Containers = []corev1.Container{{Name: "c0", Image: "registry.k8s.io/pause:3.10", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}}}
	p.Spec.Volumes = []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}}
	p.Spec.ServiceAccountName, p.Spec.RestartPolicy = "default", corev1.RestartPolicyAlways
	p.Status.PodIP, p.Status.HostIP, p.Status.QOSClass = "10.1.0.1", "10.0.0.1", corev1.PodQOSBestEffort
	p.Status.StartTime = &metav1.Time{Time: base}
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Image, p.Status.ContainerStatuses[i].Ready = "registry.k8s.io/pause:3.10", true
	}
	return p
}

// TestLeanPodsMatchUpstream: ours on reconcile.LeanPod's pods —
// the predicates, the ranking (every pair), the victims of a scale-down and
// the status — agrees with upstream on the full pods, as a lean pod cache
// would feed them.
func TestLeanPodsMatchUpstream(t *testing.T) {
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s, pods, related, k := deletionInput(t)
			if s.now.IsZero() {
				s.now = base
			}
			for _, p := range append(slices.Clone(pods), related...) {
				withNoise(p)
			}
			lean, leanRelated := leanOf(pods), leanOf(related)
			for i, p := range pods {
				l := lean[i]
				addCases(5)
				r, sc := podutil.MaxRestarts(l)
				ur, us := upstreamMaxContainerRestarts(p)
				if podrank.IsActive(l) != controller.IsPodActive(p) || podrank.IsTerminating(l) != controller.IsPodTerminating(p) ||
					podutil.IsReady(l) != podutilv1.IsPodReady(p) ||
					podutil.IsAvailable(l, s.minReady, s.now) != podutilv1.IsPodAvailable(p, s.minReady, metav1.Time{Time: s.now}) ||
					int(r) != ur || int(sc) != us {
					t.Fatalf("a predicate on the lean pod disagrees with upstream on the full one\n%s\n%s", describe(p), describe(l))
				}
			}
			// R-6.x on every pair.
			ranks := upstreamRankedByNode(slices.Clone(pods), related).Rank
			for i := range pods {
				for j := range pods {
					got := podrank.Compare(podrank.Ranked{Pod: lean[i], Rank: ranks[i]}, podrank.Ranked{Pod: lean[j], Rank: ranks[j]}, podrank.Options{Now: s.now})
					lt := upstreamLess(pods[i], pods[j], ranks[i], ranks[j], s.now)
					gt := upstreamLess(pods[j], pods[i], ranks[j], ranks[i], s.now)
					addCases(1)
					if (got < 0) != lt || (got > 0) != (gt && !lt) {
						t.Fatalf("Compare(lean %s, lean %s) = %d, upstream Less on the full pods = %v, reverse = %v", pods[i].Name, pods[j].Name, got, lt, gt)
					}
				}
			}
			// the victims, judged by upstream's order of the full pods.
			addCases(1)
			if got, want := podrank.RanksByNode(lean, leanRelated), upstreamRankedByNode(slices.Clone(pods), related).Rank; !slices.Equal(got, want) {
				t.Fatalf("RanksByNode(lean) = %v, upstream on the full pods %v", got, want)
			}
			l := lessMatrix(slices.Clone(pods), ranks, s.now)
			got := podrank.ForDeletion(lean, leanRelated, k, podrank.Options{Now: s.now})
			addCases(1)
			if k == len(pods) {
				if !slices.Equal(indices(lean, got), indices(pods, pods)) {
					t.Fatalf("k == len: ForDeletion(lean) = %v, want the input order", names(got))
				}
			} else if why := weakOrderViolation(l); why != "" {
				noteDocumented(excNotStrictWeakOrder)
			} else if why := validPrefix(l, indices(lean, got), k); why != "" {
				t.Fatalf("ForDeletion(lean, k=%d) = %v: %s", k, names(got), why)
			}
			// over the pods as a sync splits them.
			rs := replicaSetGen(s).Draw(t, "rs")
			manageErr := rapid.SampledFrom(manageErrs).Draw(t, "manageErr")
			report := rapid.Bool().Draw(t, "reportTerminating")
			gotStatus := status.Calculate(rs, podrank.FilterActive(lean), podrank.FilterTerminating(lean), manageErr, s.now, status.Options{DisableTerminatingReplicas: !report})
			want := upstreamCalculateStatus(rs.DeepCopy(), controller.FilterActivePods(logr.Discard(), pods), controller.FilterTerminatingPods(pods), manageErr,
				replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: report}, s.now)
			addCases(1)
			for i := range gotStatus.Conditions {
				if i < len(want.Conditions) && gotStatus.Conditions[i].Type == appsv1.ReplicaSetReplicaFailure && gotStatus.Conditions[i].LastTransitionTime.Time.Equal(s.now) {
					noteDocumented(excConditionTime)
					want.Conditions[i].LastTransitionTime = gotStatus.Conditions[i].LastTransitionTime
				}
			}
			if !reflect.DeepEqual(gotStatus, want) {
				t.Fatalf("Calculate(lean) = %+v\nupstream calculateStatus(full) = %+v", gotStatus, want)
			}
		})
	})
}

func leanOf(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = reconcile.LeanPod(p)
	}
	return out
}
