package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// invalidPodSet is a PodSet spec of a class that kube-apiserver's apps/v1
// validation refuses for a ReplicaSet (docs/rules.md §14).
type invalidPodSet struct {
	name string
	// edit turns podSetSpec(name) into the invalid spec.
	edit func(spec map[string]any)
	// crd holds fragments of the API server's refusal under the PodSet
	// CRD's own rules (examples/podset/config/crd).
	crd []string
	// condition holds fragments of the ReplicaFailure condition's message
	// the controller writes when the CRD lets the PodSet in: the field
	// path and apps/v1's message (reconcile's Owner.Validate).
	condition []string
	// orphan: an orphan pod with the selector's labels exists, which the
	// invalid PodSet must not adopt.
	orphan bool
	// refusedWithoutGuards holds fragments of the refusal the API server
	// still gives once the CRD's guards are removed; nil: it lets the
	// PodSet in, and the controller must hold the line.
	refusedWithoutGuards []string
}

// invalidPodSets has one PodSet per class of invalid spec; the pod specs
// are otherwise valid, so only the owner's spec is at fault.
var invalidPodSets = []invalidPodSet{
	{
		name:      "selector-mismatch",
		edit:      func(s map[string]any) { set(s, map[string]any{"podset": "other"}, "template", "metadata", "labels") },
		crd:       []string{"spec.template.metadata.labels: Invalid value", "`selector` does not match template `labels`"},
		condition: []string{"spec.template.metadata.labels: Invalid value", "`selector` does not match template `labels`"},
		orphan:    true,
	},
	{
		name:      "selector-empty",
		edit:      func(s map[string]any) { set(s, map[string]any{}, "selector") },
		crd:       []string{"spec.selector: Invalid value", "empty selector is invalid for deployment"},
		condition: []string{"spec.selector: Invalid value", "empty selector is invalid for PodSet"},
	},
	{
		name:      "selector-missing",
		edit:      func(s map[string]any) { unstructured.RemoveNestedField(s, "selector") },
		crd:       []string{"spec.selector: Required value"},
		condition: []string{"spec.selector: Required value"},
	},
	{
		name: "selector-operator",
		edit: func(s map[string]any) {
			set(s, map[string]any{"matchExpressions": []any{
				map[string]any{"key": "podset", "operator": "Bogus", "values": []any{"selector-operator"}},
			}}, "selector")
		},
		crd:       []string{`spec.selector.matchExpressions[0].operator: Unsupported value: "Bogus": supported values: "In", "NotIn", "Exists", "DoesNotExist"`},
		condition: []string{`spec.selector.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator`},
	},
	{
		name:      "selector-value",
		edit:      func(s map[string]any) { set(s, "bad value!", "selector", "matchLabels", "podset") },
		crd:       []string{`spec.selector.matchLabels.podset: Invalid value: "bad value!"`},
		condition: []string{`spec.selector.matchLabels: Invalid value: "bad value!"`},
	},
	{
		name: "selector-in-without-values",
		edit: func(s map[string]any) {
			set(s, map[string]any{"matchExpressions": []any{map[string]any{"key": "podset", "operator": "In"}}}, "selector")
		},
		crd:       []string{"spec.selector.matchExpressions[0].values: Required value", "must be specified when `operator` is 'In' or 'NotIn'"},
		condition: []string{"spec.selector.matchExpressions[0].values: Required value", "must be specified when `operator` is 'In' or 'NotIn'"},
	},
	{
		name: "selector-exists-with-values",
		edit: func(s map[string]any) {
			set(s, map[string]any{"matchExpressions": []any{
				map[string]any{"key": "podset", "operator": "Exists", "values": []any{"x"}},
			}}, "selector")
		},
		crd:       []string{"spec.selector.matchExpressions[0].values: Forbidden", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"},
		condition: []string{"spec.selector.matchExpressions[0].values: Forbidden", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"},
	},
	{
		name: "template-unlabelled",
		edit: func(s map[string]any) { unstructured.RemoveNestedField(s, "template", "metadata", "labels") },
		crd:  []string{"spec.template.metadata.labels: Required value: a pod template without labels is not supported"},
		// apps/v1 accepts a label-less template whose selector matches
		// empty labels; this selector needs one.
		condition: []string{"spec.template.metadata.labels: Invalid value", "`selector` does not match template `labels`"},
		orphan:    true,
	},
	{
		// PodSetSpec.Template is not a pointer: a PodSet without one
		// reaches the controller with a zero template, which has no labels.
		name:      "template-missing",
		edit:      func(s map[string]any) { unstructured.RemoveNestedField(s, "template") },
		crd:       []string{"spec.template: Required value"},
		condition: []string{"spec.template.metadata.labels: Invalid value", "`selector` does not match template `labels`"},
		orphan:    true,
	},
	{
		name:      "restart-never",
		edit:      func(s map[string]any) { set(s, "Never", "template", "spec", "restartPolicy") },
		crd:       []string{`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		condition: []string{`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`},
		orphan:    true,
	},
	{
		name:      "restart-onfailure",
		edit:      func(s map[string]any) { set(s, "OnFailure", "template", "spec", "restartPolicy") },
		crd:       []string{`spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`},
		condition: []string{`spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"`},
		orphan:    true,
	},
	{
		name:      "active-deadline",
		edit:      func(s map[string]any) { set(s, int64(60), "template", "spec", "activeDeadlineSeconds") },
		crd:       []string{"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported"},
		condition: []string{"spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in PodSet is not Supported"},
		orphan:    true,
	},
	{
		name:      "replicas-negative",
		edit:      func(s map[string]any) { set(s, int64(-1), "replicas") },
		crd:       []string{"spec.replicas: Invalid value: -1", "greater than or equal to 0"},
		condition: []string{"spec.replicas: Invalid value: -1: must be greater than or equal to 0"},
		// The scale subresource (specReplicasPath .spec.replicas) has its
		// own check, which the schema does not hold.
		refusedWithoutGuards: []string{".spec.replicas: Invalid value: -1: should be a non-negative integer"},
	},
	{
		name:      "min-ready-negative",
		edit:      func(s map[string]any) { set(s, int64(-1), "minReadySeconds") },
		crd:       []string{"spec.minReadySeconds: Invalid value: -1", "greater than or equal to 0"},
		condition: []string{"spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"},
		orphan:    true,
	},
}

// validPodSets are specs the CRD's rules must let in: each is a valid
// ReplicaSet spec.
var validPodSets = []struct {
	name string
	edit func(spec map[string]any)
}{
	{"plain", func(map[string]any) {}},
	{"selector-subset-of-labels", func(s map[string]any) {
		set(s, map[string]any{"podset": "selector-subset-of-labels", "tier": "web"}, "template", "metadata", "labels")
	}},
	{"restart-always", func(s map[string]any) { set(s, "Always", "template", "spec", "restartPolicy") }},
	{"zero-replicas", func(s map[string]any) { set(s, int64(0), "replicas") }},
	{"expressions-only", func(s map[string]any) {
		set(s, map[string]any{"matchExpressions": []any{
			map[string]any{"key": "podset", "operator": "In", "values": []any{"expressions-only", "other"}},
			map[string]any{"key": "tier", "operator": "NotIn", "values": []any{"db"}},
			map[string]any{"key": "podset", "operator": "Exists"},
			map[string]any{"key": "canary", "operator": "DoesNotExist"},
		}}, "selector")
	}},
	{"labels-and-expressions", func(s map[string]any) {
		set(s, []any{map[string]any{"key": "tier", "operator": "DoesNotExist"}}, "selector", "matchExpressions")
	}},
}

func set(obj map[string]any, value any, path ...string) {
	if err := unstructured.SetNestedField(obj, value, path...); err != nil {
		panic(err) // the tables above are wrong
	}
}

// podSetSpec is a valid PodSet spec of 3 pods whose selector and template
// labels are podset=name.
func podSetSpec(name string) map[string]any {
	return map[string]any{
		"replicas": int64(3),
		"selector": map[string]any{"matchLabels": map[string]any{"podset": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"podset": name}},
			"spec": map[string]any{"containers": []any{
				map[string]any{"name": "pause", "image": "registry.k8s.io/pause:3.10"},
			}},
		},
	}
}

func podSetOf(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "demo.reconcilekit.dev/v1alpha1",
		"kind":       "PodSet",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// TestPodSetCRDRules: the PodSet CRD's rules (CEL and schema, in
// examples/podset/config/crd) compile — the shared control plane applied
// the CRD — and refuse each invalid class of spec with apps/v1's message at
// apps/v1's field path, while every valid variant is let in (a server-side
// dry run) with its pod template kept whole, unknown fields included.
func TestPodSetCRDRules(t *testing.T) {
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, ctx, dyn)
	psc := dyn.Resource(podSetGVR).Namespace(newNamespace(t, ctx, client))
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

	for _, c := range invalidPodSets {
		t.Run("refused/"+c.name, func(t *testing.T) {
			spec := podSetSpec(c.name)
			c.edit(spec)
			_, err := psc.Create(ctx, podSetOf(c.name, spec), dryRun)
			require.Error(t, err, "the CRD let the PodSet in")
			t.Log(err)
			assert.True(t, apierrors.IsInvalid(err), "want 422 Invalid, got %v", err)
			for _, want := range c.crd {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
	for _, v := range validPodSets {
		t.Run("accepted/"+v.name, func(t *testing.T) {
			spec := podSetSpec(v.name)
			v.edit(spec)
			// Fields no rule reads must survive pruning.
			set(spec, map[string]any{"note": "kept"}, "template", "metadata", "annotations")
			set(spec, int64(5), "template", "spec", "terminationGracePeriodSeconds")
			got, err := psc.Create(ctx, podSetOf(v.name, spec), dryRun)
			require.NoError(t, err)
			gotTemplate, _, _ := unstructured.NestedMap(got.Object, "spec", "template")
			assert.Equal(t, spec["template"], gotTemplate, "the template as stored")
		})
	}
}

// strippedPodSetCRD is the examples' PodSet CRD without the guards its
// schema puts on spec (CEL rules, required, minimum, enum, pattern,
// maxLength), so that the API server lets every invalid PodSet in and
// only the controller stands between it and the pods. It returns the
// CRD and the number of guards removed.
func strippedPodSetCRD(t *testing.T) (*unstructured.Unstructured, int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "podset", "config", "crd", "demo.reconcilekit.dev_podsets.yaml"))
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &obj))
	versions, _, _ := unstructured.NestedSlice(obj, "spec", "versions")
	require.Len(t, versions, 1)
	spec, ok, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema", "properties", "spec")
	require.True(t, ok, "the CRD has no spec schema")
	var strip func(schema map[string]any) int
	strip = func(schema map[string]any) int {
		n := 0
		for _, guard := range []string{"x-kubernetes-validations", "required", "minimum", "enum", "pattern", "maxLength"} {
			if _, ok := schema[guard]; ok {
				delete(schema, guard)
				n++
			}
		}
		for _, v := range schema {
			switch v := v.(type) {
			case map[string]any:
				n += strip(v)
			case []any:
				for _, e := range v {
					if m, ok := e.(map[string]any); ok {
						n += strip(m)
					}
				}
			}
		}
		return n
	}
	n := strip(spec)
	require.NoError(t, unstructured.SetNestedMap(versions[0].(map[string]any), spec, "schema", "openAPIV3Schema", "properties", "spec"))
	require.NoError(t, unstructured.SetNestedSlice(obj, versions, "spec", "versions"))
	return &unstructured.Unstructured{Object: obj}, n
}

// TestPodSetInvalidSpecs (issue 32): with the PodSet CRD's guards removed
// (a fresh control plane, since the shared one has the CRD whole), one
// PodSet per invalid class is created at once, each with an orphan pod
// its selector matches where it has one. The PodSet controller writes
// each one's ReplicaFailure condition (status True, apps/v1's field path
// and message) for its generation, again after a spec update (a second
// sync), and never creates or adopts a pod for any of them. The selector
// mismatch, fixed, then converges to its 3 pods: it adopts its orphan and
// creates 2, and its condition goes. Without reconcile's owner spec check
// (before issue 32) it failed: in 30 s the mismatched, empty and missing
// selectors had 533, 645 and 627 pods created and released, six others
// created or adopted pods, and none had the condition with its field path.
func TestPodSetInvalidSpecs(t *testing.T) {
	began := time.Now()
	cp := freshControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	crd, stripped := strippedPodSetCRD(t)
	require.Positive(t, stripped, "no guard was removed from the CRD")
	_, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{})
	require.NoError(t, err)
	waitEstablished(t, ctx, dyn, crd.GetName())
	ns := newNamespace(t, ctx, client)
	pods := watchPods(t, ctx, client, ns)
	psc := dyn.Resource(podSetGVR).Namespace(ns)

	// The orphans exist before the controller starts, so that its first
	// sync of each PodSet sees them.
	var orphans []string
	for _, c := range invalidPodSets {
		if c.orphan {
			name := "orphan-" + c.name
			_, err := client.CoreV1().Pods(ns).Create(ctx, podLike(name, map[string]string{"podset": c.name}), metav1.CreateOptions{})
			require.NoError(t, err)
			orphans = append(orphans, name)
		}
	}
	waitFor(t, ctx, convergeTimeout, "the orphans in the pod watch", func(context.Context) (bool, string, error) {
		n := 0
		for _, name := range orphans {
			if pods.get(name) != nil {
				n++
			}
		}
		return n == len(orphans), fmt.Sprintf("%d of %d", n, len(orphans)), nil
	})

	_, podset := buildControllers(t)
	kubeconfig := bindRole(t, cp, "podset", applyClusterRole(t, cp, "podset", nil), podSetUser, "")
	ctrl := startProc(t, "podset", podset, "-kubeconfig", kubeconfig, "-namespace", ns)
	t.Logf("%5.1fs: control plane up, CRD without its %d guards, controller started", time.Since(began).Seconds(), stripped)

	// Every invalid PodSet at once: the API server lets each in, but for
	// those it refuses without the CRD's guards too.
	errs := make([]error, len(invalidPodSets))
	var wg sync.WaitGroup
	for i, c := range invalidPodSets {
		pods.allow("PodSet/"+c.name, 0)
		spec := podSetSpec(c.name)
		c.edit(spec)
		wg.Go(func() { _, errs[i] = psc.Create(ctx, podSetOf(c.name, spec), metav1.CreateOptions{}) })
	}
	wg.Wait()
	var cases []invalidPodSet // those the controller sees
	for i, c := range invalidPodSets {
		if c.refusedWithoutGuards == nil {
			require.NoError(t, errs[i], "creating %s", c.name)
			cases = append(cases, c)
			continue
		}
		require.Error(t, errs[i], "%s let in", c.name)
		for _, want := range c.refusedWithoutGuards {
			assert.Contains(t, errs[i].Error(), want)
		}
	}

	// waitInvalid waits until each of invalid shows its ReplicaFailure
	// condition for generation, and fails at once if one controls a pod.
	waitInvalid := func(invalid []invalidPodSet, generation int64) {
		t.Helper()
		waitFor(t, ctx, convergeTimeout, fmt.Sprintf("the ReplicaFailure condition of every invalid PodSet at generation %d", generation), func(ctx context.Context) (bool, string, error) {
			list, err := psc.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			byName := map[string]unstructured.Unstructured{}
			for _, ps := range list.Items {
				byName[ps.GetName()] = ps
			}
			var waiting, owning []string
			for _, c := range invalid {
				if owned := pods.everOwnedBy("PodSet/" + c.name); len(owned) > 0 {
					owning = append(owning, fmt.Sprintf("%s: %v", c.name, slices.Sorted(maps.Keys(owned))))
				}
				ps, ok := byName[c.name]
				if !ok {
					waiting = append(waiting, c.name+": not listed")
					continue
				}
				if ps.GetGeneration() != generation {
					waiting = append(waiting, fmt.Sprintf("%s: generation %d", c.name, ps.GetGeneration()))
				} else if why := invalidStatusWrong(ps, c); why != "" {
					waiting = append(waiting, c.name+": "+why)
				}
			}
			if len(owning) > 0 {
				// Fail at once: no later status can undo a pod created or adopted.
				return false, "", fmt.Errorf("invalid PodSets controlled pods: %s", strings.Join(owning, "; "))
			}
			return len(waiting) == 0, strings.Join(waiting, "; "), nil
		})
		t.Logf("%5.1fs: %d invalid PodSets carry their ReplicaFailure condition at generation %d", time.Since(began).Seconds(), len(invalid), generation)
	}
	waitInvalid(cases, 1)
	list, err := psc.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, ps := range list.Items {
		if cond, ok := replicaFailure(ps); ok {
			t.Logf("%s: %s: %s", ps.GetName(), cond["reason"], cond["message"])
		}
	}

	// A spec update of each (replicas 3 → 5, a new generation) syncs it
	// again: the new generation observed, the condition kept, still no pod.
	// The mismatch, meanwhile, is fixed: its template labels made to match
	// its selector.
	const fixed = "selector-mismatch"
	pods.allow("PodSet/"+fixed, 3)
	cases = slices.DeleteFunc(cases, func(c invalidPodSet) bool { return c.name == fixed })
	errs = make([]error, len(cases)+1)
	for i, c := range cases {
		wg.Go(func() {
			_, errs[i] = psc.Patch(ctx, c.name, types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{})
		})
	}
	wg.Go(func() {
		_, errs[len(cases)] = psc.Patch(ctx, fixed, types.MergePatchType, []byte(`{"spec":{"template":{"metadata":{"labels":{"podset":"`+fixed+`"}}}}}`), metav1.PatchOptions{})
	})
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	waitInvalid(cases, 2)
	waitPodSet(t, ctx, psc, pods, fixed, 3)
	ps, err := psc.Get(ctx, fixed, metav1.GetOptions{})
	require.NoError(t, err)
	_, failing := replicaFailure(*ps)
	assert.False(t, failing, "the fixed PodSet's ReplicaFailure condition is still there")
	t.Logf("%5.1fs: %s fixed, converged to 3 pods", time.Since(began).Seconds(), fixed)

	// The fixed PodSet adopted its orphan and created 2 pods: none more.
	owned := pods.everOwnedBy("PodSet/" + fixed)
	assert.Len(t, owned, 3, "pods the fixed PodSet ever controlled: %v", slices.Sorted(maps.Keys(owned)))
	assert.True(t, owned["orphan-"+fixed], "the fixed PodSet did not adopt its orphan")
	// The others, meanwhile, still have no pod, their orphans no controller.
	for _, c := range cases {
		assert.Empty(t, pods.everOwnedBy("PodSet/"+c.name), "pods controlled by the invalid PodSet %s", c.name)
		if c.orphan {
			if p := pods.get("orphan-" + c.name); assert.NotNil(t, p, "orphan-%s gone", c.name) {
				assert.Empty(t, controllerName(p), "orphan-%s's controller", c.name)
			}
		}
	}
	assert.False(t, ctrl.exited(), "the controller exited")
	assertNotRefused(t, cp, podSetUser)
}

// invalidStatusWrong says what in ps's status is not yet what the invalid
// class c must show: "" once its ReplicaFailure condition is True with c's
// fragments in its message and the status is of ps's generation.
func invalidStatusWrong(ps unstructured.Unstructured, c invalidPodSet) string {
	observed, _, _ := unstructured.NestedInt64(ps.Object, "status", "observedGeneration")
	if observed != ps.GetGeneration() {
		return fmt.Sprintf("observedGeneration %d, generation %d", observed, ps.GetGeneration())
	}
	cond, ok := replicaFailure(ps)
	if !ok {
		return "no ReplicaFailure condition"
	}
	if cond["status"] != "True" {
		return fmt.Sprintf("ReplicaFailure %v", cond["status"])
	}
	msg := fmt.Sprint(cond["message"])
	for _, want := range c.condition {
		if !strings.Contains(msg, want) {
			return fmt.Sprintf("message %q lacks %q", msg, want)
		}
	}
	return ""
}

// replicaFailure returns ps's ReplicaFailure condition, if it has one.
func replicaFailure(ps unstructured.Unstructured) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(ps.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "ReplicaFailure" {
			return m, true
		}
	}
	return nil, false
}

// waitEstablished waits until the CRD name is established.
func waitEstablished(t *testing.T, ctx context.Context, dyn dynamic.Interface, name string) {
	t.Helper()
	waitFor(t, ctx, convergeTimeout, "CRD "+name+" established", func(ctx context.Context) (bool, string, error) {
		got, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "Established" && m["status"] == "True" {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("conditions %v", conds), nil
	})
}
