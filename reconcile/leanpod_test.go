package reconcile_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podutil"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// Generators of rich pods: every field a rule reads drawn from a small pool
// (so ties and equal instants are common), and many fields no rule reads
// filled with noise, which LeanPod must drop without changing an answer.

var (
	leanT0    = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	leanNow   = leanT0.Add(2 * time.Hour)
	leanTimes = []time.Time{{}, leanT0, leanT0.Add(time.Second), leanT0.Add(time.Hour), leanT0.Add(-time.Hour), leanNow, leanNow.Add(time.Minute), leanNow.Add(-(1 << 41))}
	leanCosts = []string{"0", "1", "-1", "5", "007", "-007", "+5", "", "x", "2147483648", "-2147483648"}
	leanOwner = []string{"rs-a", "rs-b"}
)

func leanPtr[T any](v T) *T { return &v }

func leanTimeGen() *rapid.Generator[time.Time] { return rapid.SampledFrom(leanTimes) }

// leanOwners are the ReplicaSets the generated pods may belong to; the
// first one's selector is app=a.
func leanOwners(replicas int32) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for i, name := range leanOwner {
		rs := &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), Generation: 2},
			Spec: appsv1.ReplicaSetSpec{
				Replicas:        leanPtr(replicas),
				MinReadySeconds: int32(i * 30),
				Selector:        &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a", "tier": "web"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img"}}},
				},
			},
		}
		out = append(out, rs)
	}
	return out
}

func leanContainer(t *rapid.T, label string, policy bool) corev1.Container {
	c := corev1.Container{
		Name:    rapid.SampledFrom([]string{"a", "b", "c", "side"}).Draw(t, label+"-name"),
		Image:   "registry.example/app:" + strconv.Itoa(rapid.IntRange(0, 9).Draw(t, label+"-tag")),
		Command: []string{"/bin/app", "--flag"},
		Env:     []corev1.EnvVar{{Name: "A", Value: "1"}},
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"),
		}},
	}
	if policy {
		c.RestartPolicy = rapid.SampledFrom([]*corev1.ContainerRestartPolicy{
			nil, leanPtr(corev1.ContainerRestartPolicyAlways), leanPtr(corev1.ContainerRestartPolicyAlways), leanPtr(corev1.ContainerRestartPolicy("Never")),
		}).Draw(t, label+"-policy")
	}
	return c
}

func leanStatus(t *rapid.T, label string) corev1.ContainerStatus {
	return corev1.ContainerStatus{
		Name:         rapid.SampledFrom([]string{"a", "b", "c", "side", "gone"}).Draw(t, label+"-name"),
		RestartCount: rapid.SampledFrom([]int32{0, 0, 1, 2, 7, -1}).Draw(t, label+"-restarts"),
		Ready:        rapid.Bool().Draw(t, label+"-ready"),
		Started:      leanPtr(rapid.Bool().Draw(t, label+"-started")),
		Image:        "registry.example/app:1",
		ImageID:      "sha256:0123",
		ContainerID:  "containerd://abc",
	}
}

// leanPodGen draws a pod in namespace ns (or, rarely, another): owned by
// one of leanOwners, by something else, or an orphan; matching the
// selector or not; in any phase, ready or not, terminating or not, with
// sidecars, restarts, a deletion cost, and much that no rule reads.
func leanPodGen(i int) *rapid.Generator[*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) *corev1.Pod {
		name := "p" + strconv.Itoa(i)
		p := &corev1.Pod{
			TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{
				Name:              name,
				GenerateName:      "rs-a-",
				Namespace:         rapid.SampledFrom([]string{"ns", "ns", "ns", "other"}).Draw(t, "namespace"),
				UID:               types.UID(rapid.SampledFrom([]string{"", "u1", "u2", "u3", "u4"}).Draw(t, "uid") + "-" + name),
				ResourceVersion:   strconv.Itoa(rapid.IntRange(1, 50).Draw(t, "rv")),
				Generation:        3,
				CreationTimestamp: metav1.NewTime(leanTimeGen().Draw(t, "created")),
				Finalizers:        []string{"example.com/keep"},
				ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
			},
			Spec: corev1.PodSpec{
				NodeName:           rapid.SampledFrom([]string{"", "n1", "n2"}).Draw(t, "node"),
				ServiceAccountName: "default",
				Volumes:            []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}}},
				Tolerations:        []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}},
			},
			Status: corev1.PodStatus{
				Phase:    rapid.SampledFrom([]corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodRunning, corev1.PodUnknown, corev1.PodSucceeded, corev1.PodFailed}).Draw(t, "phase"),
				HostIP:   "10.0.0.1",
				PodIP:    "10.1.0.1",
				PodIPs:   []corev1.PodIP{{IP: "10.1.0.1"}},
				QOSClass: corev1.PodQOSBurstable,
			},
		}
		if rapid.Bool().Draw(t, "has-start") {
			p.Status.StartTime = leanPtr(metav1.NewTime(leanTimeGen().Draw(t, "start")))
		}
		switch rapid.IntRange(0, 3).Draw(t, "labels") {
		case 0:
			p.Labels = map[string]string{"app": "a", "tier": "web"} // fully labeled
		case 1:
			p.Labels = map[string]string{"app": "a"} // matches, not fully labeled
		case 2:
			p.Labels = map[string]string{"app": "b", "pod-template-hash": "x"}
		case 3:
			p.Labels = rapid.SampledFrom([]map[string]string{nil, {}}).Draw(t, "no-labels")
		}
		annotations := map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
		if rapid.Bool().Draw(t, "has-cost") {
			annotations[podrank.DeletionCostAnnotation] = rapid.SampledFrom(leanCosts).Draw(t, "cost")
		}
		if rapid.Bool().Draw(t, "has-annotations") {
			p.Annotations = annotations
		}
		switch rapid.IntRange(0, 3).Draw(t, "owner") {
		case 0, 1:
			owner := rapid.SampledFrom(leanOwner).Draw(t, "owner-name")
			uid := types.UID("uid-" + owner)
			if rapid.IntRange(0, 5).Draw(t, "stale-uid") == 0 {
				uid = "uid-old"
			}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, UID: uid, Controller: leanPtr(true), BlockOwnerDeletion: leanPtr(true)}}
		case 2:
			p.OwnerReferences = []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "uid-cm"},
				{APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: "uid-job", Controller: leanPtr(true)},
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "terminating") == 0 {
			p.DeletionTimestamp = leanPtr(metav1.NewTime(leanTimeGen().Draw(t, "deleted")))
			p.DeletionGracePeriodSeconds = leanPtr(int64(30))
		}
		for j := range rapid.IntRange(0, 2).Draw(t, "containers") {
			p.Spec.Containers = append(p.Spec.Containers, leanContainer(t, fmt.Sprint("container", j), false))
		}
		for j := range rapid.IntRange(0, 3).Draw(t, "init-containers") {
			p.Spec.InitContainers = append(p.Spec.InitContainers, leanContainer(t, fmt.Sprint("init", j), true))
		}
		for j := range rapid.IntRange(0, 3).Draw(t, "container-statuses") {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, leanStatus(t, fmt.Sprint("status", j)))
		}
		for j := range rapid.IntRange(0, 3).Draw(t, "init-statuses") {
			p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, leanStatus(t, fmt.Sprint("init-status", j)))
		}
		if rapid.IntRange(0, 4).Draw(t, "ephemeral") == 0 {
			p.Status.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "side", RestartCount: 9}}
		}
		for j := range rapid.IntRange(0, 4).Draw(t, "conditions") {
			p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
				Type:               rapid.SampledFrom([]corev1.PodConditionType{corev1.PodReady, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled}).Draw(t, fmt.Sprint("cond-type", j)),
				Status:             rapid.SampledFrom([]corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown}).Draw(t, fmt.Sprint("cond-status", j)),
				LastTransitionTime: metav1.NewTime(leanTimeGen().Draw(t, fmt.Sprint("cond-ltt", j))),
				LastProbeTime:      metav1.NewTime(leanT0),
				Reason:             "Because",
				Message:            "said so",
			})
		}
		return p
	})
}

func leanPodsGen() *rapid.Generator[[]*corev1.Pod] {
	return rapid.Custom(func(t *rapid.T) []*corev1.Pod {
		n := rapid.IntRange(0, 12).Draw(t, "pods")
		pods := make([]*corev1.Pod, n)
		for i := range pods {
			pods[i] = leanPodGen(i).Draw(t, fmt.Sprint("pod", i))
		}
		return pods
	})
}

func leanAll(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = reconcile.LeanPod(p)
	}
	return out
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

// TestLeanPodKeepsEveryRule: every predicate and every rule of the
// library answers the same on LeanPod(p) as on p; LeanPod is idempotent,
// never modifies p and shares no memory with it.
func TestLeanPodKeepsEveryRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pods := leanPodsGen().Draw(t, "pods")
		before := make([]*corev1.Pod, len(pods))
		for i, p := range pods {
			before[i] = p.DeepCopy()
		}
		lean := leanAll(pods)
		now := rapid.SampledFrom(append([]time.Time{}, leanTimes...)).Draw(t, "now")
		minReady := rapid.SampledFrom([]int32{0, 1, 30, 3600, -5}).Draw(t, "min-ready")

		for i, p := range pods {
			l := lean[i]
			require.Equal(t, before[i], p, "LeanPod modified its input")
			require.Equal(t, l, reconcile.LeanPod(l), "LeanPod is not idempotent")
			//
			require.Equal(t, podrank.IsActive(p), podrank.IsActive(l), "IsActive")
			require.Equal(t, podrank.IsTerminating(p), podrank.IsTerminating(l), "IsTerminating")
			require.Equal(t, podutil.IsReady(p), podutil.IsReady(l), "IsReady")
			require.True(t, podutil.ReadyTime(p).Equal(podutil.ReadyTime(l)), "ReadyTime")
			require.Equal(t, podutil.IsAvailable(p, minReady, now), podutil.IsAvailable(l, minReady, now), "IsAvailable")
			r1, s1 := podutil.MaxRestarts(p)
			r2, s2 := podutil.MaxRestarts(l)
			require.Equal(t, [2]int32{r1, s1}, [2]int32{r2, s2}, "MaxRestarts")
			c1, e1 := podrank.DeletionCost(p)
			c2, e2 := podrank.DeletionCost(l)
			require.Equal(t, c1, c2, "DeletionCost")
			require.Equal(t, e1 == nil, e2 == nil, "DeletionCost error")
			require.Equal(t, reconcile.PodKey(p), reconcile.PodKey(l), "PodKey")
			require.Equal(t, metav1.GetControllerOf(p), metav1.GetControllerOf(l), "controller reference")
			// Nothing of the lean pod points into p.
			if len(l.Labels) > 0 {
				l.Labels["mutated"] = "x"
				require.NotContains(t, p.Labels, "mutated")
			}
		}
		lean = leanAll(pods)

		// every pair, with every option.
		opts := podrank.Options{
			Now:                         rapid.SampledFrom([]time.Time{{}, leanNow, leanT0}).Draw(t, "rank-now"),
			DisableDeletionCost:         rapid.Bool().Draw(t, "no-cost"),
			DisableLogarithmicScaleDown: rapid.Bool().Draw(t, "no-log"),
		}
		for i := range pods {
			for j := range pods {
				ri, rj := rapid.IntRange(0, 2).Draw(t, "rank-i"), rapid.IntRange(0, 2).Draw(t, "rank-j")
				full := podrank.Compare(podrank.Ranked{Pod: pods[i], Rank: ri}, podrank.Ranked{Pod: pods[j], Rank: rj}, opts)
				trim := podrank.Compare(podrank.Ranked{Pod: lean[i], Rank: ri}, podrank.Ranked{Pod: lean[j], Rank: rj}, opts)
				require.Equal(t, full, trim, "Compare(%d, %d)", i, j)
				o1, rule1 := podrank.Explain(podrank.Ranked{Pod: pods[i], Rank: ri}, podrank.Ranked{Pod: pods[j], Rank: rj}, opts)
				o2, rule2 := podrank.Explain(podrank.Ranked{Pod: lean[i], Rank: ri}, podrank.Ranked{Pod: lean[j], Rank: rj}, opts)
				require.Equal(t, [2]any{o1, rule1}, [2]any{o2, rule2}, "Explain(%d, %d)", i, j)
			}
		}
		// split at a random point into pods and related.
		cut := rapid.IntRange(0, len(pods)).Draw(t, "cut")
		active, related := podrank.FilterActive(pods[:cut]), pods[cut:]
		leanActive, leanRelated := podrank.FilterActive(lean[:cut]), lean[cut:]
		require.Equal(t, podNames(active), podNames(leanActive), "FilterActive")
		require.Equal(t, podNames(podrank.FilterTerminating(pods)), podNames(podrank.FilterTerminating(lean)), "FilterTerminating")
		require.Equal(t, podrank.RanksByNode(active, related), podrank.RanksByNode(leanActive, leanRelated), "RanksByNode")
		n := rapid.IntRange(0, len(active)+1).Draw(t, "delete")
		require.Equal(t, podNames(podrank.ForDeletion(active, related, n, opts)), podNames(podrank.ForDeletion(leanActive, leanRelated, n, opts)), "ForDeletion")

		// the status of each owner from the same pods.
		for _, rs := range leanOwners(3) {
			terminating := podrank.FilterTerminating(pods)
			leanTerminating := podrank.FilterTerminating(lean)
			var manageErr error
			if rapid.Bool().Draw(t, "manage-err") {
				manageErr = fmt.Errorf("boom")
			}
			sopts := status.Options{DisableTerminatingReplicas: rapid.Bool().Draw(t, "no-terminating")}
			require.Equal(t,
				status.Calculate(rs, podrank.FilterActive(pods), terminating, manageErr, now, sopts),
				status.Calculate(rs, podrank.FilterActive(lean), leanTerminating, manageErr, now, sopts), "Calculate")
			require.Equal(t,
				status.Count(podrank.FilterActive(pods), terminating, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, now),
				status.Count(podrank.FilterActive(lean), leanTerminating, rs.Spec.Template.Labels, rs.Spec.MinReadySeconds, now), "Count")
			at1, ok1 := status.NextAvailabilityCheck(podrank.FilterActive(pods), rs.Spec.MinReadySeconds, now)
			at2, ok2 := status.NextAvailabilityCheck(podrank.FilterActive(lean), rs.Spec.MinReadySeconds, now)
			require.Equal(t, ok1, ok2, "NextAvailabilityCheck")
			require.True(t, at1.Equal(at2), "NextAvailabilityCheck")
		}
	})
}

// leanSyncView is what a sync did, in a form that does not depend on
// which copy of a pod it was given.
type leanSyncView struct {
	Err                                    string
	Satisfied, Managed, Deleting           bool
	Diff                                   int
	Counts                                 []status.Counts
	Expectations                           []string
	Active, Terminating, Adopted, Released []string
	Created                                int
	Deleted                                []string
	Patches                                []patchCall
	Requests                               [][]reconcile.SyncRequest
}

// leanSync runs one sync of every owner over pods, then the pod event
// handlers over pods (added, updated from the previous pod, deleted), and
// records what happened.
func leanSync(t testing.TB, pods []*corev1.Pod, replicas int32, exact bool) leanSyncView {
	owners := newRecOwners(leanOwners(replicas)...)
	c := newRecController(t, owners, pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Clock = fakeclock.New(leanNow)
		cfg.SetTrackCreations(exact)
	})
	var v leanSyncView
	for _, name := range leanOwner {
		res, err := c.Sync(context.Background(), "ns/"+name)
		if err != nil {
			v.Err += err.Error() + ";"
		}
		v.Satisfied, v.Managed, v.Deleting = v.Satisfied || res.Expectations.Satisfied, v.Managed || res.Managed, v.Deleting || res.Deleting
		v.Diff += res.Diff
		v.Counts = append(v.Counts, res.Counts)
		v.Expectations = append(v.Expectations, fmt.Sprint(res.Expectations))
		v.Active = append(v.Active, podNames(res.Active)...)
		v.Terminating = append(v.Terminating, podNames(res.Terminating)...)
		v.Adopted = append(v.Adopted, podNames(res.Adopted)...)
		v.Released = append(v.Released, podNames(res.Released)...)
	}
	v.Created = len(c.control.created)
	v.Deleted = slices.Sorted(slices.Values(c.control.deleted))
	v.Patches = c.patcher.recorded()
	var prev *corev1.Pod
	for _, p := range pods {
		v.Requests = append(v.Requests, c.PodAdded(p))
		if prev != nil {
			v.Requests = append(v.Requests, c.PodUpdated(prev, p))
		}
		v.Requests = append(v.Requests, c.PodDeleted(p))
		prev = p
	}
	return v
}

// TestLeanPodKeepsSyncsAndEvents: a
// Controller whose cache holds LeanPod copies claims (adopts, releases),
// counts, creates, deletes and handles pod events exactly as one whose
// cache holds the full pods.
func TestLeanPodKeepsSyncsAndEvents(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		pods := leanPodsGen().Draw(rt, "pods")
		exact := rapid.Bool().Draw(rt, "exact")
		replicas := rapid.Int32Range(0, 4).Draw(rt, "replicas")
		full := leanSync(t, pods, replicas, exact)
		trim := leanSync(t, leanAll(pods), replicas, exact)
		require.Equal(rt, full, trim)
	})
}
