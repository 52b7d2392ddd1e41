package podops_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
)

// realisticPod is a pod as a v1.37 API server returns it once a ReplicaSet
// controller created it and a kubelet ran it: the managedFields of those two
// writers (their fieldsV1 sets as the server records them for such a pod),
// the default service account volume and tolerations, and a running status.
func realisticPod() *corev1.Pod {
	t0 := metav1.NewTime(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC))
	yes := true
	grace := int64(30)
	tolerate := int64(300)
	expiry := int64(3607)
	kcm := `{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"6b1f2c9e-3d1a-4f5e-9c2b-0a1b2c3d4e5f\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`
	kubelet := `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.1.17\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7c9d8f6b5-x2k4q", GenerateName: "web-7c9d8f6b5-", Namespace: "default",
			UID: "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a", ResourceVersion: "1234567", CreationTimestamp: t0,
			Labels: map[string]string{"app": "web", "pod-template-hash": "7c9d8f6b5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7c9d8f6b5",
				UID: "6b1f2c9e-3d1a-4f5e-9c2b-0a1b2c3d4e5f", Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t0,
					FieldsType: "FieldsV1", FieldsV1: fieldsV1(kcm)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &t0,
					FieldsType: "FieldsV1", FieldsV1: fieldsV1(kubelet), Subresource: "status"},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "web", Image: "registry.k8s.io/nginx-slim:0.27", ImagePullPolicy: corev1.PullIfNotPresent,
				Ports: []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
				TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-7xq2z", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
			}},
			Volumes: []corev1.Volume{{Name: "kube-api-access-7xq2z", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", NodeName: "kwok-node-3", SchedulerName: "default-scheduler",
			SecurityContext: &corev1.PodSecurityContext{}, EnableServiceLinks: &yes, PreemptionPolicy: new(corev1.PreemptLowerPriority),
			Priority: new(int32(0)),
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerate},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerate},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.3", HostIPs: []corev1.HostIP{{IP: "10.0.0.3"}},
			PodIP: "10.244.1.17", PodIPs: []corev1.PodIP{{IP: "10.244.1.17"}}, StartTime: &t0, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: t0},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t0},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: t0},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: t0},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, Started: &yes,
				Image: "registry.k8s.io/nginx-slim:0.27", ImageID: "registry.k8s.io/nginx-slim@sha256:0f3a4c1b2e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b",
				ContainerID: "containerd://5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d",
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}}}},
		},
	}
}

// fieldsV1 returns a FieldsV1 holding raw, a JSON field set, as the
// decoder builds it (metav1.NewFieldsV1 appeared in apimachinery v0.36; the
// adapters build on v0.33 too).
func fieldsV1(raw string) *metav1.FieldsV1 {
	f := &metav1.FieldsV1{}
	if err := f.UnmarshalJSON([]byte(raw)); err != nil {
		panic(err) // the raw sets above are constants
	}
	return f
}

func TestTrimManagedFields(t *testing.T) {
	pod := realisticPod()
	want := pod.DeepCopy()
	want.ManagedFields = nil
	got, err := podops.TrimManagedFields(pod)
	require.NoError(t, err)
	assert.Same(t, pod, got, "trimmed in place")
	assert.Equal(t, want, got, "only managedFields go")

	tomb := cache.DeletedFinalStateUnknown{Key: "default/x", Obj: realisticPod()}
	got, err = podops.TrimManagedFields(tomb)
	require.NoError(t, err)
	assert.Equal(t, tomb, got, "what is not an object is returned unchanged")
}

// BenchmarkTrimManagedFields measures the transform on a realistic pod and
// reports, as protobuf bytes (what the API server sends and a proxy for
// what the cache holds), the pod before (full-B), after (trimmed-B), and
// what dropping the pod spec the controller never reads (containers,
// volumes, tolerations: everything but nodeName) would save on top
// (spec-B): docs/fleet.md records the figures.
func BenchmarkTrimManagedFields(b *testing.B) {
	pod := realisticPod()
	full := pod.Size()
	trimmed := pod.DeepCopy()
	trimmed.ManagedFields = nil
	spec := trimmed.Spec.Size()
	b.ReportAllocs()
	for b.Loop() {
		p := *pod // the transform only resets a field of the copy
		if _, err := podops.TrimManagedFields(&p); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(full), "full-B")
	b.ReportMetric(float64(trimmed.Size()), "trimmed-B")
	b.ReportMetric(float64(spec), "spec-B")
}
