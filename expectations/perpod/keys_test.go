package perpod_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations/perpod"
)

const groupLabel = "example.com/group"

func ownedPod(namespace string, labels map[string]string, refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "p", Labels: labels, OwnerReferences: refs}}
}

func ref(kind, name string, controller bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "example.com/v1", Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &controller}
}

func TestPodKeys(t *testing.T) {
	worker := map[string]string{groupLabel: "workers"}
	cases := []struct {
		name          string
		kind          string
		pod           *corev1.Pod
		owner, groups []string // KeysByOwner(kind, ""), KeysByOwner(kind, groupLabel)
	}{
		{"nil pod", "Cluster", nil, nil, nil},
		// an orphan never lowers expectations.
		{"no owner reference", "Cluster", ownedPod("ns", worker), nil, nil},
		{"owner not marked controller", "Cluster", ownedPod("ns", worker, ref("Cluster", "c", false)), nil, nil},
		{"controller flag unset", "Cluster", ownedPod("ns", worker, metav1.OwnerReference{Kind: "Cluster", Name: "c"}), nil, nil},
		// the kind must match; the APIVersion is not compared.
		{"controller of another kind", "Cluster", ownedPod("ns", worker, ref("ReplicaSet", "c", true)), nil, nil},
		{"kind compared exactly", "cluster", ownedPod("ns", worker, ref("Cluster", "c", true)), nil, nil},
		{"any kind", "", ownedPod("ns", worker, ref("ReplicaSet", "c", true)), []string{"ns/c"}, []string{"ns/c/workers"}},
		{"controller", "Cluster", ownedPod("ns", worker, ref("Cluster", "c", true)), []string{"ns/c"}, []string{"ns/c/workers"}},
		{"controller after another owner", "Cluster", ownedPod("ns", worker, ref("Other", "o", false), ref("Cluster", "c", true)), []string{"ns/c"}, []string{"ns/c/workers"}},
		{"first controller counts", "Cluster", ownedPod("ns", worker, ref("Other", "o", true), ref("Cluster", "c", true)), nil, nil},
		{"reference without a name", "Cluster", ownedPod("ns", worker, ref("Cluster", "", true)), nil, nil},
		{"no group label", "Cluster", ownedPod("ns", map[string]string{"app": "x"}, ref("Cluster", "c", true)), []string{"ns/c"}, nil},
		{"no labels at all", "Cluster", ownedPod("ns", nil, ref("Cluster", "c", true)), []string{"ns/c"}, nil},
		{"empty group value", "Cluster", ownedPod("ns", map[string]string{groupLabel: ""}, ref("Cluster", "c", true)), []string{"ns/c"}, []string{"ns/c/"}},
		// a controller in an empty namespace is keyed by its name.
		{"pod without a namespace", "Cluster", ownedPod("", worker, ref("Cluster", "c", true)), []string{"c"}, []string{"c/workers"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before *corev1.Pod
			if tc.pod != nil {
				before = tc.pod.DeepCopy()
			}
			assert.Equal(t, tc.owner, perpod.KeysByOwner(tc.kind, "")(tc.pod), "KeysByOwner")
			assert.Equal(t, tc.groups, perpod.KeysByOwner(tc.kind, groupLabel)(tc.pod), "KeysByOwner with a group label")
			assert.Equal(t, before, tc.pod, "the pod is not modified")
		})
	}
}

// Each call returns a slice of its own: the caller may modify it.
func TestPodKeysReturnsNewSlices(t *testing.T) {
	keys := perpod.KeysByOwner("Cluster", groupLabel)
	pod := ownedPod("ns", map[string]string{groupLabel: "g"}, ref("Cluster", "c", true))
	first := keys(pod)
	first[0] = "changed"
	assert.Equal(t, []string{"ns/c/g"}, keys(pod))
}

// For any pod, KeysByOwner with a group label gives at most one key, which extends
// its keys without one by "/" and the group label's value, and exists exactly
// when the pod has both a matching controller and the label.
func TestPropertyPodKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		kinds := rapid.SampledFrom([]string{"", "Cluster", "ReplicaSet"})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Namespace: rapid.SampledFrom([]string{"", "ns"}).Draw(t, "namespace"),
			Name:      "p",
		}}
		if rapid.Bool().Draw(t, "labelled") {
			pod.Labels = map[string]string{groupLabel: rapid.SampledFrom([]string{"", "a", "b/c"}).Draw(t, "group")}
		}
		for range rapid.IntRange(0, 3).Draw(t, "refs") {
			controller := rapid.Bool().Draw(t, "controller")
			pod.OwnerReferences = append(pod.OwnerReferences, metav1.OwnerReference{
				Kind: kinds.Draw(t, "refKind"), Name: rapid.SampledFrom([]string{"", "c", "d"}).Draw(t, "refName"), Controller: &controller,
			})
		}
		kind := kinds.Draw(t, "kind")
		owner := perpod.KeysByOwner(kind, "")(pod)
		groups := perpod.KeysByOwner(kind, groupLabel)(pod)

		ctrl := metav1.GetControllerOf(pod)
		wantOwner := ctrl != nil && ctrl.Name != "" && (kind == "" || ctrl.Kind == kind)
		if !wantOwner {
			assert.Nil(t, owner)
			assert.Nil(t, groups)
			return
		}
		wantKey := pod.Namespace + "/" + ctrl.Name
		if pod.Namespace == "" {
			wantKey = ctrl.Name
		}
		assert.Equal(t, []string{wantKey}, owner)
		group, labelled := pod.Labels[groupLabel]
		if !labelled {
			assert.Nil(t, groups)
			return
		}
		assert.Equal(t, []string{wantKey + "/" + group}, groups)
	})
}
