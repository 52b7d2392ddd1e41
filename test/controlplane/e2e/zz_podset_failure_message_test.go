package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestPodSetFailureMessageFitsTheCondition (issue 40, R-8.4): when every
// delete of a sync is denied by admission, the errors joined are far over
// metav1.Condition's 32,768-byte message limit, which the PodSet CRD
// enforces; the controller summarizes them, so the API server takes the
// status write and the ReplicaFailure condition shows the failure, with
// reason FailedDelete. A ValidatingAdmissionPolicy denies the deletes with
// a long message (no webhook server needed); removing it lets the scale
// down finish.
func TestPodSetFailureMessageFitsTheCondition(t *testing.T) {
	const replicas = 48
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, ctx, dyn)
	ns := newNamespace(t, ctx, client)
	pods := watchPods(t, ctx, client, ns)
	_, podset := buildControllers(t)
	kubeconfig := bindRole(t, cp, "podset", applyClusterRole(t, cp, "podset", nil), podSetUser, "")
	startProc(t, "podset", podset, "-kubeconfig", kubeconfig, "-namespace", ns)
	const owner = "PodSet/denied"
	psc := dyn.Resource(podSetGVR).Namespace(ns)

	pods.allow(owner, replicas)
	_, err := psc.Create(ctx, newPodSet("denied", replicas), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, convergeTimeout, fmt.Sprintf("%d pods", replicas), func(context.Context) (bool, string, error) {
		n := len(pods.live(owner))
		return n == replicas, fmt.Sprintf("%d live", n), nil
	})

	// Deny every delete of the PodSet's pods, in this namespace only, with
	// a message of about 900 bytes: 48 refusals make about 45 KB.
	reason := strings.Repeat("deleting pods of this PodSet is not allowed by the test's policy; ", 14)
	policyName := "deny-delete-" + ns
	fail := admissionregistrationv1.Fail
	deny := admissionregistrationv1.Deny
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{
				Expression: `!has(oldObject.metadata.labels) || !('app' in oldObject.metadata.labels) || oldObject.metadata.labels['app'] != 'denied'`,
				Message:    reason,
			}},
		},
	}
	_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(context.Background(), policyName, metav1.DeleteOptions{})
	})
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policyName,
			ValidationActions: []admissionregistrationv1.ValidationAction{deny},
		},
	}
	_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(context.Background(), policyName, metav1.DeleteOptions{})
	})
	// The policy takes effect once the API server has loaded it: a dry-run
	// delete of one pod is refused then.
	victim := pods.live(owner)[0]
	waitFor(t, ctx, time.Minute, "the policy in force", func(ctx context.Context) (bool, string, error) {
		err := client.CoreV1().Pods(ns).Delete(ctx, victim, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "not allowed by the test's policy"), fmt.Sprintf("dry-run delete: %v", err), nil
	})

	_, err = psc.Patch(ctx, "denied", types.MergePatchType, []byte(`{"spec":{"replicas":0}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	var message string
	waitFor(t, ctx, convergeTimeout, "the ReplicaFailure condition", func(ctx context.Context) (bool, string, error) {
		ps, err := psc.Get(ctx, "denied", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		conds, _, _ := unstructured.NestedSlice(ps.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "ReplicaFailure" {
				message = fmt.Sprint(m["message"])
				return m["status"] == "True" && m["reason"] == "FailedDelete", fmt.Sprintf("condition %v", m), nil
			}
		}
		return false, fmt.Sprintf("conditions %v", conds), nil
	})
	t.Logf("condition message, %d bytes: %.300s…", len(message), message)
	require.LessOrEqual(t, len(message), 4096)
	require.Contains(t, message, "more errors", "a summary, not the whole text")
	require.Len(t, pods.live(owner), replicas, "no delete got through")

	// Without the policy the scale-down finishes and the condition clears.
	require.NoError(t, client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, policyName, metav1.DeleteOptions{}))
	waitFor(t, ctx, convergeTimeout, "0 pods, no condition", func(ctx context.Context) (bool, string, error) {
		ps, err := psc.Get(ctx, "denied", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		conds, _, _ := unstructured.NestedSlice(ps.Object, "status", "conditions")
		n := len(pods.live(owner))
		return n == 0 && len(conds) == 0, fmt.Sprintf("%d live, conditions %v", n, conds), nil
	})
}

// TestPodSetStrippedStampIsPutBack (issue 40, R-13.7): with an owned-only
// pod cache (-owned-pods-label), removing the stamp from a controlled pod
// makes the label-selected watch report it as deleted. The controller reads
// it live and puts the stamp back; no replacement pod is created.
func TestPodSetStrippedStampIsPutBack(t *testing.T) {
	const (
		replicas = 3
		stampKey = "demo.reconcilekit.dev/owned"
	)
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, ctx, dyn)
	ns := newNamespace(t, ctx, client)
	pods := watchPods(t, ctx, client, ns)
	_, podset := buildControllers(t)
	kubeconfig := bindRole(t, cp, "podset", applyClusterRole(t, cp, "podset", nil), podSetUser, "")
	startProc(t, "podset", podset, "-kubeconfig", kubeconfig, "-namespace", ns, "-owned-pods-label", stampKey+"=true")
	const owner = "PodSet/stamped"
	psc := dyn.Resource(podSetGVR).Namespace(ns)

	pods.allow(owner, replicas)
	_, err := psc.Create(ctx, newPodSet("stamped", replicas), metav1.CreateOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, convergeTimeout, fmt.Sprintf("%d pods", replicas), func(context.Context) (bool, string, error) {
		n := len(pods.live(owner))
		return n == replicas, fmt.Sprintf("%d live", n), nil
	})

	for round := range 3 {
		victim := pods.live(owner)[round%replicas]
		strip := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, stampKey)
		_, err := client.CoreV1().Pods(ns).Patch(ctx, victim, types.StrategicMergePatchType, strip, metav1.PatchOptions{})
		require.NoError(t, err)
		waitFor(t, ctx, convergeTimeout, "the stamp back on "+victim, func(ctx context.Context) (bool, string, error) {
			p, err := client.CoreV1().Pods(ns).Get(ctx, victim, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return p.Labels[stampKey] == "true", fmt.Sprintf("labels %v", p.Labels), nil
		})
	}
	// A scale-up by one, synced after every strip: a replacement, had one
	// been made, would be among the pods ever owned.
	pods.allow(owner, replicas+1)
	_, err = psc.Patch(ctx, "stamped", types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas+1), metav1.PatchOptions{})
	require.NoError(t, err)
	waitFor(t, ctx, convergeTimeout, fmt.Sprintf("%d pods", replicas+1), func(context.Context) (bool, string, error) {
		n := len(pods.live(owner))
		return n == replicas+1, fmt.Sprintf("%d live", n), nil
	})
	require.Len(t, pods.everOwnedBy(owner), replicas+1, "no replacement pod was ever created")
}
