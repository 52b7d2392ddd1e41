package reconcile_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
	"github.com/reconcilekit/reconcilekit/status"
)

// Issue 32's property, "safe with any owner": a model-based test of a
// Controller of a custom resource (nothing validates it before the
// controller sees it) over reconcile/internal/cluster. Each case draws
//   - the owner: namespaced or cluster-scoped (a key without namespace), with
//     pods of an earlier life of the controller already in the API;
//   - its spec, and new specs mid-run: selectors nil, empty, invalid (an
//     unknown operator, a bad value, In without values), matching the
//     template or not; templates nil, without labels, with a bad label, any
//     restartPolicy, with or without activeDeadlineSeconds; replicas small,
//     huge (up to math.MaxInt32) or negative; minReadySeconds negative or
//     not;
//   - the cache: an informer that has not made its initial list (the pods
//     in the API are invisible to it until it does), events that lag (up to
//     a minute), are duplicated, dropped, or replaced by a relist; the
//     Controller's event handlers are fed by that informer;
//   - the world: kubelet steps, pods that finish (Succeeded or Failed, as a
//     restartPolicy Never pod does), pods deleted or relabelled behind the
//     controller's back, faults of the API (failures before the write, lost
//     responses after it, NamespaceTerminating), clock steps across the
//     expectations' TTL, counted or tracked creations, EvidenceFirst and the
//     consistency gate;
//   - another owner's pods that match the selectors (a sibling, an earlier
//     incarnation of the same name, a ReplicaSet of the same name), an orphan
//     to adopt and an orphan that matches no selector.
//
// After every step it checks:
//   - (a) the pods the controller created over the run never exceed what it
//     was asked for (the sum of the increases of the replicas of valid
//     specs, from the pods it already had) plus the pods that left its
//     control or reach for reasons outside it (deleted, finished or
//     relabelled behind its back — any of its pods or orphans a valid
//     selector matches, as its cache may show the pod unchanged when a
//     later spec selects it — or released because a new valid selector no
//     longer matches them) plus
//     the events of its pods the watch dropped (a pod whose add event is
//     lost is invisible to it, one whose deletion is lost still counts,
//     until a relist: it may create one pod too many, or delete one and
//     replace it) plus its creates and deletes whose response was lost after
//     the write (a lost delete looks failed, as upstream treats it: from a
//     cache that still shows that pod the next sync may delete another one,
//     and replace it). Calls that fail before the write change nothing and
//     get no allowance;
//   - (b) a sync of an invalid spec creates, deletes, adopts and releases
//     nothing and is terminal (ErrInvalidSpec, ErrTerminal), with the status
//     computed from SyncResult.ManageErr carrying ErrInvalidSpec and the
//     ReplicaFailure condition stored on the owner;
//   - (c) another owner's pod, and the orphan that matches nothing, are never
//     adopted, released or deleted (no patch, no delete call);
//   - (d) a sync of a cluster-scoped owner, a sync while the pod
//     informer has not synced and a sync the consistency gate defers
//     read nothing (no owner, no pods) and write nothing (no
//     create, delete, patch, status); a sync of a valid spec is never
//     terminal and never makes more creates or deletes than the burst
//     . It may fail otherwise, to be retried: an injected fault, or a
//     release refused by the fixture's patcher because the pod was replaced
//     under the same name (recPatcher answers the UID precondition with
//     Conflict).
//
// Huge replicas would make huge numbers of pods: the burst is at most 2 and
// a case at most safetyMaxSteps steps, so a case stays cheap. A burst of 2
// also keeps a case replayable: slow start's batches are then 1 and 1, so
// the creates of a sync reach the API one at a time, and names and UIDs
// follow the draws. The deletes of one sync still run concurrently: their
// faults are chosen by pod name, not call order, and only the order of
// their two events in the watch may differ between runs.

const (
	// safetyCases is the least number of cases `go test` runs;
	// -safety.cases raises it (make soak runs 1,000,000).
	safetyCases = 50_000
	// safetyMaxSteps bounds the steps of a case.
	safetyMaxSteps = 24
	// safetyNamespace is the namespace of every pod and of a namespaced
	// owner.
	safetyNamespace = "default"
)

var safetyCasesFlag = flag.Int("safety.cases", safetyCases, "TestModelSafeWithAnyOwner: the least number of cases to run")

// TestModelSafeWithAnyOwner runs issue 32's property in at least
// -safety.cases cases (safetyCases by default).
func TestModelSafeWithAnyOwner(t *testing.T) {
	var figs safetyFigures
	simCheck(t, max(*safetyCasesFlag, 1), func(t *rapid.T) {
		m := newSafetyModel(t)
		for range rapid.IntRange(1, safetyMaxSteps).Draw(t, "steps") {
			action := safetyActionGen.Draw(t, "action")
			safetyActions[action](m, t)
			m.actions[action]++
			m.c.Informer.DeliverOlderThan(m.lag) // the informer lags at most lag
			m.steps++
			m.Check(t)
		}
		figs.add(m)
	})
	figs.log(t)
}

// safeSet is a custom resource that owns pods, shaped like a ReplicaSet
// with nothing in front of it: no API validation, no defaulting, a
// template that may be nil.
type safeSet struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Spec   safeSetSpec
	Status safeSetStatus
}

type safeSetSpec struct {
	Replicas        int32
	MinReadySeconds int32
	Selector        *metav1.LabelSelector
	Template        *corev1.PodTemplateSpec
}

type safeSetStatus struct {
	Replicas   int32
	Conditions []metav1.Condition
}

func (s *safeSet) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Spec.Selector = s.Spec.Selector.DeepCopy()
	c.Spec.Template = s.Spec.Template.DeepCopy()
	c.Status.Conditions = slices.Clone(s.Status.Conditions)
	return &c
}

var (
	safeSetKind     = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "SafeSet"}
	safeSetResource = schema.GroupResource{Group: "example.com", Resource: "safesets"}
)

// safeSelector is a selector the model draws, with the model's own answer
// to "is it valid?" and "does it match these labels?".
type safeSelector struct {
	name  string
	valid bool
	match func(l map[string]string) bool // for valid ones
	build func() *metav1.LabelSelector
}

func appIsWeb(l map[string]string) bool { return l["app"] == "web" }

var safeSelectors = []safeSelector{
	{"app=web", true, appIsWeb, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	}},
	{"app in (web)", true, appIsWeb, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}
	}},
	{"app exists", true, func(l map[string]string) bool { _, ok := l["app"]; return ok }, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpExists}}}
	}},
	{"app=web,tier notin (b)", true, func(l map[string]string) bool { return l["app"] == "web" && l["tier"] != "b" }, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"b"}}}}
	}},
	{"app=web,tier=a", true, func(l map[string]string) bool { return l["app"] == "web" && l["tier"] == "a" }, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "tier": "a"}}
	}},
	{"app=api", true, func(l map[string]string) bool { return l["app"] == "api" }, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
	}},
	{"nil", false, nil, func() *metav1.LabelSelector { return nil }},
	{"empty", false, nil, func() *metav1.LabelSelector { return &metav1.LabelSelector{} }},
	{"unknown operator", false, nil, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Near", Values: []string{"web"}}}}
	}},
	{"bad value", false, nil, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web!"}}
	}},
	{"in without values", false, nil, func() *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn}}}
	}},
}

// safeTemplate is a template's labels as the model draws them; nil labels
// with nilTemplate is no template at all.
type safeTemplate struct {
	name        string
	labels      map[string]string // read-only: copied into each template
	labelsValid bool
	nilTemplate bool
}

var safeTemplates = []safeTemplate{
	{name: "app=web", labels: map[string]string{"app": "web"}, labelsValid: true},
	{name: "app=web,tier=a", labels: map[string]string{"app": "web", "tier": "a"}, labelsValid: true},
	{name: "app=web,tier=b", labels: map[string]string{"app": "web", "tier": "b"}, labelsValid: true},
	{name: "app=api", labels: map[string]string{"app": "api"}, labelsValid: true},
	{name: "no labels", labelsValid: true},
	{name: "bad label key", labels: map[string]string{"app": "web", "bad key": "x"}},
	{name: "nil", nilTemplate: true},
}

var safeRestartPolicies = []corev1.RestartPolicy{"", corev1.RestartPolicyAlways, corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure}

// safeSpec is one drawn spec: indexes into the tables above and numbers.
type safeSpec struct {
	sel, tmpl       int
	policy          corev1.RestartPolicy
	deadline        bool
	replicas        int32
	minReadySeconds int32
}

func (s safeSpec) String() string {
	return fmt.Sprintf("{selector %s, template %s, restartPolicy %q, deadline %v, replicas %d, minReadySeconds %d}",
		safeSelectors[s.sel].name, safeTemplates[s.tmpl].name, s.policy, s.deadline, s.replicas, s.minReadySeconds)
}

// valid is the model's verdict, by apps/v1's rules for a ReplicaSet's spec
// (a template without labels is valid when the selector matches empty
// labels, which none of safeSelectors does).
func (s safeSpec) valid() bool {
	sel, tmpl := safeSelectors[s.sel], safeTemplates[s.tmpl]
	switch {
	case !sel.valid, tmpl.nilTemplate, !tmpl.labelsValid, !sel.match(tmpl.labels):
		return false
	}
	return (s.policy == "" || s.policy == corev1.RestartPolicyAlways) && !s.deadline && s.replicas >= 0 && s.minReadySeconds >= 0
}

// deleteOnly is the model's verdict for a spec that is valid but for a
// missing template: it claims and deletes as a valid one, and
// creates nothing (a terminal ErrInvalidSpec when it would have to).
func (s safeSpec) deleteOnly() bool {
	return safeTemplates[s.tmpl].nilTemplate && safeSelectors[s.sel].valid && s.replicas >= 0 && s.minReadySeconds >= 0
}

// build returns the spec as the owner carries it: new objects every time.
func (s safeSpec) build() safeSetSpec {
	spec := safeSetSpec{Replicas: s.replicas, MinReadySeconds: s.minReadySeconds, Selector: safeSelectors[s.sel].build()}
	if tmpl := safeTemplates[s.tmpl]; !tmpl.nilTemplate {
		spec.Template = &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: copyLabels(tmpl.labels)},
			Spec: corev1.PodSpec{
				RestartPolicy: s.policy,
				Containers:    []corev1.Container{{Name: "app", Image: "app:1"}},
			},
		}
		if s.deadline {
			d := int64(30)
			spec.Template.Spec.ActiveDeadlineSeconds = &d
		}
	}
	return spec
}

func copyLabels(l map[string]string) map[string]string {
	if l == nil {
		return nil
	}
	c := make(map[string]string, len(l))
	for k, v := range l {
		c[k] = v
	}
	return c
}

// safeBreaks are what a drawn spec breaks: mostly nothing, else one rule
// of Owner.Validate, else anything (every part drawn freely).
var safeBreaks = []string{"nothing", "nothing", "nothing", "nothing", "nothing", "nothing", "selector", "template", "labels",
	"restartPolicy", "activeDeadlineSeconds", "replicas", "minReadySeconds", "anything"}

// safeMatched and safeUnmatched are, per valid selector, the templates
// with valid labels it matches and those it does not.
var safeMatched, safeUnmatched = func() (matched, unmatched [][]int) {
	matched, unmatched = make([][]int, len(safeSelectors)), make([][]int, len(safeSelectors))
	for i, sel := range safeSelectors {
		for j, tmpl := range safeTemplates {
			switch {
			case !sel.valid || tmpl.nilTemplate || !tmpl.labelsValid:
			case sel.match(tmpl.labels):
				matched[i] = append(matched[i], j)
			default:
				unmatched[i] = append(unmatched[i], j)
			}
		}
	}
	return matched, unmatched
}()

var (
	safeBreakGen         = rapid.SampledFrom(safeBreaks)
	safeAnySelectorGen   = rapid.IntRange(0, len(safeSelectors)-1)
	safeValidSelectorGen = rapid.IntRange(0, 5)  // safeSelectors[:6] are valid
	safeBadSelectorGen   = rapid.IntRange(6, 10) // the others are not
	safeAnyTemplateGen   = rapid.IntRange(0, len(safeTemplates)-1)
	safeBadTemplateGen   = rapid.IntRange(4, 6) // no labels, a bad label, nil
	safeAnyPolicyGen     = rapid.SampledFrom(safeRestartPolicies)
	safeGoodPolicyGen    = rapid.SampledFrom(safeRestartPolicies[:2])
	safeBadPolicyGen     = rapid.SampledFrom(safeRestartPolicies[2:])
	safeSmallReplicasGen = rapid.Int32Range(0, 4)
	safeGoodReplicasGen  = rapid.OneOf(safeSmallReplicasGen, safeSmallReplicasGen, safeSmallReplicasGen, safeSmallReplicasGen,
		safeSmallReplicasGen, rapid.SampledFrom([]int32{1 << 20, math.MaxInt32}))
	safeBadReplicasGen  = rapid.SampledFrom([]int32{-1, math.MinInt32})
	safeReplicasGen     = rapid.OneOf(safeGoodReplicasGen, safeGoodReplicasGen, safeGoodReplicasGen, safeBadReplicasGen)
	safeGoodMinReadyGen = rapid.SampledFrom([]int32{0, 5})
	safeAnyMinReadyGen  = rapid.SampledFrom([]int32{0, 5, -1})
)

// drawSafeSpec draws a spec that breaks nothing, one rule, or anything.
// Whether it is valid is the model's verdict (safeSpec.valid), not the
// draw's intent.
func drawSafeSpec(t *rapid.T) safeSpec {
	brk := safeBreakGen.Draw(t, "break")
	if brk == "anything" {
		return safeSpec{
			sel:             safeAnySelectorGen.Draw(t, "selector"),
			tmpl:            safeAnyTemplateGen.Draw(t, "template"),
			policy:          safeAnyPolicyGen.Draw(t, "restartPolicy"),
			deadline:        rapid.Bool().Draw(t, "activeDeadlineSeconds"),
			replicas:        safeReplicasGen.Draw(t, "replicas"),
			minReadySeconds: safeAnyMinReadyGen.Draw(t, "minReadySeconds"),
		}
	}
	s := safeSpec{
		sel:             safeValidSelectorGen.Draw(t, "selector"),
		policy:          safeGoodPolicyGen.Draw(t, "restartPolicy"),
		replicas:        safeGoodReplicasGen.Draw(t, "replicas"),
		minReadySeconds: safeGoodMinReadyGen.Draw(t, "minReadySeconds"),
	}
	s.tmpl = rapid.SampledFrom(safeMatched[s.sel]).Draw(t, "template")
	switch brk {
	case "selector":
		s.sel = safeBadSelectorGen.Draw(t, "badSelector")
	case "template":
		s.tmpl = safeBadTemplateGen.Draw(t, "badTemplate")
	case "labels":
		if un := safeUnmatched[s.sel]; len(un) > 0 {
			s.tmpl = rapid.SampledFrom(un).Draw(t, "unmatchedTemplate")
		} else {
			s.tmpl = len(safeTemplates) - 1 // the selector matches every label set drawn: no template
		}
	case "restartPolicy":
		s.policy = safeBadPolicyGen.Draw(t, "badRestartPolicy")
	case "activeDeadlineSeconds":
		s.deadline = true
	case "replicas":
		s.replicas = safeBadReplicasGen.Draw(t, "badReplicas")
	case "minReadySeconds":
		s.minReadySeconds = -1
	}
	return s
}

// safetyModel is one case: the simulated cluster, the Controller, the
// owner as the API holds it, and the model — the spec's validity, the
// allowance of creates, the pods that must stay untouched.
type safetyModel struct {
	ctx   context.Context
	c     *cluster.Cluster
	ctrl  *reconcile.Controller[*safeSet]
	owner *safeSet // the spec the test set, the status the controller wrote
	key   string
	burst int
	lag   time.Duration
	gate  bool // the consistency gate runs (CacheVersions.Pods set, not disabled)

	spec       safeSpec
	valid      bool
	deleteOnly bool // valid but for a missing template

	// The allowance of (a). level and levelMatch are the replicas and the
	// selector of the last valid spec: a pod is in the controller's control
	// when it is controlled by the owner, active and matched by levelMatch.
	level      int64
	levelMatch func(map[string]string) bool
	asked      int64 // Σ max(0, replicas − level) over the valid specs set
	left       int64 // pods that left control for reasons outside the controller
	missed     int64 // events of the owner's pods the watch dropped
	deselected int   // of left: pods a new valid selector no longer matches
	atBound    int   // steps after which the pods created were exactly the bound

	// untouchable are the pods of other owners, and the orphan no selector
	// matches, with the UID of their controller ("" for none).
	untouchable map[string]types.UID

	mu sync.Mutex // guards what the fakes record from the controller's goroutines
	safetyCounts
	lastManageErr error  // ManageErr of the latest Status call
	lastAsked     bool   // whether the latest Status call asked for a write
	violation     string // the first thing a fake saw that must never happen
	createFault   cluster.Fault
	createEvery   int
	deleteFault   cluster.Fault
	deleteEvery   int

	names int // NameGenerator's sequence: it is called from one Sync at a time

	// figures
	actions                                                                    map[string]int
	steps, syncs, managed, invalidSyncs, scopedSyncs, unsyncedSyncs, gateSyncs int
	adopted, released, finished, behindBack, relabelled, dropped, relists      int
}

// safetyCounts are what a sync read and wrote, as the fakes counted them.
type safetyCounts struct {
	ownerReads, podReads, patches, statusCalls, statusWrites int
	creates, deletes                                         int // PodControl calls
}

func (a safetyCounts) minus(b safetyCounts) safetyCounts {
	return safetyCounts{
		ownerReads: a.ownerReads - b.ownerReads, podReads: a.podReads - b.podReads, patches: a.patches - b.patches,
		statusCalls: a.statusCalls - b.statusCalls, statusWrites: a.statusWrites - b.statusWrites,
		creates: a.creates - b.creates, deletes: a.deletes - b.deletes,
	}
}

func (m *safetyModel) counts() safetyCounts {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.safetyCounts
}

func newSafetyModel(t *rapid.T) *safetyModel {
	// One case in eight is cluster-scoped: its syncs all end at once.
	namespace := rapid.SampledFrom([]string{safetyNamespace, safetyNamespace, safetyNamespace, safetyNamespace,
		safetyNamespace, safetyNamespace, safetyNamespace, ""}).Draw(t, "ownerNamespace")
	c := cluster.New(cluster.Options{
		Seed:             rapid.Uint64().Draw(t, "seed"),
		GracefulDeletion: rapid.Bool().Draw(t, "gracefulDeletion"),
		Nodes:            2,
		Unsynced:         rapid.IntRange(1, 3).Draw(t, "unsyncedStart") == 3, // one case in three
	})
	m := &safetyModel{
		ctx: context.Background(),
		c:   c,
		owner: &safeSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "example.com/v1", Kind: "SafeSet"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web", UID: "uid-web", Generation: 1},
		},
		key:         reconcile.OwnerKey(namespace, "web"),
		burst:       rapid.IntRange(1, 2).Draw(t, "burst"),
		lag:         rapid.SampledFrom([]time.Duration{0, time.Second, 20 * time.Second, time.Minute}).Draw(t, "lag"),
		levelMatch:  appIsWeb, // the spec of the controller's earlier life
		untouchable: make(map[string]types.UID, 4),
		actions:     make(map[string]int, len(safetyActions)),
	}
	cfg := reconcile.Config[*safeSet]{
		Kind: safeSetKind,
		Describe: func(s *safeSet) (reconcile.Owner, error) {
			return reconcile.Owner{Replicas: s.Spec.Replicas, Template: s.Spec.Template, Selector: s.Spec.Selector,
				MinReadySeconds: s.Spec.MinReadySeconds}, nil
		},
		Status: m.status,
		Cluster: reconcile.Cluster[*safeSet]{
			Owners:       safeOwners{m},
			PodClient:    liveClient{podClient{c.Client, &recPatcher{api: c.API, Err: m.patched}}, c.API},
			StatusWriter: m,
			CachesSynced: c.Informer.HasSynced,
		},
		Clock:         c.Clock,
		BurstReplicas: m.burst,
	}
	cfg.SetNameGenerator(func(prefix string) string { m.names++; return prefix + strconv.Itoa(m.names) })
	// Half the cases read pods through the index by controller, half list
	// the namespace (the Controller then filters, R-10.10).
	cfg.Cluster.Pods = safePods{safeListPods{m}}
	if rapid.Bool().Draw(t, "listOnlyPods") {
		cfg.Cluster.Pods = safeListPods{m}
	}
	if rapid.Bool().Draw(t, "cacheVersions") {
		cfg.Cluster.CacheVersions.Pods = c.Informer.LastSyncResourceVersion
		m.gate = rapid.Bool().Draw(t, "consistencyGate")
		cfg.DisableConsistencyGate = !m.gate
		cfg.Expectations.Exact = rapid.Bool().Draw(t, "exact")
	}
	cfg.SetTrackCreations(!cfg.Expectations.Exact && rapid.Bool().Draw(t, "trackCreations"))
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		t.Fatalf("NewController: %v", err)
	}
	m.ctrl = ctrl
	c.Informer.Handler = cluster.Handler{
		OnAdd:    func(p *corev1.Pod) { ctrl.PodAdded(p) },
		OnUpdate: func(o, p *corev1.Pod) { ctrl.PodUpdated(o, p) },
		OnDelete: func(p *corev1.Pod) { ctrl.PodDeleted(p) },
	}
	c.Client.Faults = cluster.Faults{Create: m.createHook, Delete: m.deleteHook}
	// A lost create response is an allowance of (a): a few cases start
	// with them (the faults action sets more).
	if every := rapid.SampledFrom([]int{0, 0, 0, 0, 0, 0, 4, 3, 2}).Draw(t, "lostCreateEvery"); every > 0 {
		m.createFault, m.createEvery = cluster.LoseResponse, every
	}

	// The pods of the controller's earlier life (a restart), made from the
	// spec app=web: its level.
	if namespace != "" {
		before := rapid.IntRange(0, 3).Draw(t, "podsBefore")
		for i := range before {
			m.mustCreate(t, "web-before-"+strconv.Itoa(i), map[string]string{"app": "web"}, m.ref("SafeSet", "web", "uid-web"))
		}
		m.level = int64(before)
	}
	// Pods the controller must leave alone: another SafeSet's, those of an
	// earlier SafeSet web (another UID) and of a ReplicaSet web, labelled
	// as its own; an orphan no selector matches. And an orphan to adopt.
	m.mustCreate(t, "sibling", map[string]string{"app": "web"}, m.ref("SafeSet", "other", "uid-other"))
	m.mustCreate(t, "web-earlier", map[string]string{"app": "web", "tier": "a"}, m.ref("SafeSet", "web", "uid-web-earlier"))
	m.mustCreate(t, "rs-web", map[string]string{"app": "web"}, m.ref("ReplicaSet", "web", "uid-rs-web"))
	m.mustCreate(t, "stray", map[string]string{"role": "db"}, nil)
	m.mustCreate(t, "orphan", map[string]string{"app": "web"}, nil)
	// A synced informer has seen them all; an unsynced one sees them at its
	// initial list.
	c.Informer.DeliverAll()

	m.setSpec(drawSafeSpec(t))
	return m
}

// ref returns a controller ownerRef.
func (m *safetyModel) ref(kind, name string, uid types.UID) *metav1.OwnerReference {
	yes := true
	apiVersion := "example.com/v1"
	if kind == "ReplicaSet" {
		apiVersion = "apps/v1"
	}
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}
}

// mustCreate puts a pod in the API. A pod controlled by another owner, and
// an orphan without an app label (no valid selector matches it), are
// untouchable.
func (m *safetyModel) mustCreate(t *rapid.T, name string, labels map[string]string, ref *metav1.OwnerReference) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: safetyNamespace, Name: name, Labels: labels}}
	if ref != nil {
		p.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	if _, err := m.c.API.Create(p); err != nil {
		t.Fatalf("creating %s: %v", name, err)
	}
	switch {
	case ref != nil && ref.UID != m.owner.UID:
		m.untouchable[safetyNamespace+"/"+name] = ref.UID
	case ref == nil && labels["app"] == "":
		m.untouchable[safetyNamespace+"/"+name] = ""
	}
}

// safeActive is the model's own predicate: not finished, not being deleted.
func safeActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// inControl reports whether p counts towards the owner's pods: controlled
// by it, active, and matched by the selector of the last valid spec.
func (m *safetyModel) inControl(p *corev1.Pod) bool {
	ref := cluster.ControllerOf(p)
	return ref != nil && ref.UID == m.owner.UID && safeActive(p) && m.levelMatch(p.Labels)
}

// setSpec gives the owner a new spec. A valid one raises the allowance by
// its increase over the last valid replicas, and the pods its selector no
// longer matches leave the controller's control: it must release them,
// and may replace them.
func (m *safetyModel) setSpec(s safeSpec) {
	old := m.owner
	next := *old
	next.Spec = s.build()
	next.Generation++
	m.owner, m.spec, m.valid, m.deleteOnly = &next, s, s.valid(), s.deleteOnly()
	if m.valid || m.deleteOnly {
		var before []types.UID
		m.c.API.Each(func(p *corev1.Pod) {
			if m.inControl(p) {
				before = append(before, p.UID)
			}
		})
		m.asked += max(0, int64(s.replicas)-m.level)
		m.level, m.levelMatch = int64(s.replicas), safeSelectors[s.sel].match
		m.c.API.Each(func(p *corev1.Pod) {
			if slices.Contains(before, p.UID) && !m.inControl(p) {
				m.left++
				m.deselected++
			}
		})
	}
	m.ctrl.OwnerUpdated(old, m.owner)
}

// The fakes.

// safeOwners is the Owners of the one SafeSet; it counts reads.
type safeOwners struct{ m *safetyModel }

func (o safeOwners) Get(namespace, name string) (*safeSet, error) {
	m := o.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ownerReads++
	if namespace != m.owner.Namespace || name != m.owner.Name {
		return nil, apierrors.NewNotFound(safeSetResource, name)
	}
	return m.owner, nil
}

func (o safeOwners) List(namespace string) ([]*safeSet, error) {
	m := o.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ownerReads++
	if namespace != m.owner.Namespace {
		return nil, nil
	}
	return []*safeSet{m.owner}, nil
}

func (o safeOwners) GetLive(_ context.Context, namespace, name string) (*safeSet, error) {
	return o.Get(namespace, name)
}

// safeListPods lists the informer's cache, a Pods that is not a
// PodsByController; it counts reads.
type safeListPods struct{ m *safetyModel }

func (p safeListPods) List(namespace string) ([]*corev1.Pod, error) {
	p.m.read()
	return clusterPods{p.m.c}.List(namespace)
}

// safePods also reads the informer's index by controller.
type safePods struct{ safeListPods }

var _ reconcile.PodsByController = safePods{}

func (p safePods) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	p.m.read()
	return p.m.c.Informer.ByController(namespace, kind, name, uid), nil
}

func (m *safetyModel) read() {
	m.mu.Lock()
	m.podReads++
	m.mu.Unlock()
}

// patched counts an adoption or release patch (the recPatcher applies it)
// and notes one aimed at an untouchable pod.
func (m *safetyModel) patched(pod *corev1.Pod, _ []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.patches++
	if _, ok := m.untouchable[reconcile.PodKey(pod)]; ok && m.violation == "" {
		m.violation = "patched pod " + reconcile.PodKey(pod) + ", which is another owner's or matches no selector"
	}
	return nil
}

// createHook counts a create, notes one outside the namespace, and injects
// the fault of every createEvery-th call.
func (m *safetyModel) createHook(call int, pod *corev1.Pod) cluster.Fault {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.creates++
	if pod.Namespace != safetyNamespace && m.violation == "" {
		m.violation = fmt.Sprintf("created a pod in namespace %q", pod.Namespace)
	}
	if m.createEvery > 0 && call%m.createEvery == 0 {
		return m.createFault
	}
	return cluster.NoFault
}

// deleteHook counts a delete, notes one of an untouchable pod, and injects
// the fault into the deletes of one pod in deleteEvery, chosen by name: the
// deletes of one sync run concurrently, so a choice by call index would
// depend on the goroutines' order.
func (m *safetyModel) deleteHook(_ int, pod *corev1.Pod) cluster.Fault {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deletes++
	if _, ok := m.untouchable[reconcile.PodKey(pod)]; ok && m.violation == "" {
		m.violation = "deleted pod " + reconcile.PodKey(pod) + ", which is another owner's or matches no selector"
	}
	if m.deleteEvery > 0 && safeNameHash(pod.Name)%uint32(m.deleteEvery) == 0 {
		return m.deleteFault
	}
	return cluster.NoFault
}

// safeNameHash is FNV-1a of name.
func safeNameHash(name string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()
}

// status is Config.Status: the ReplicaFailure condition from ManageErr
// (status.SetReplicaFailure) and the count of active pods.
func (m *safetyModel) status(owner *safeSet, res reconcile.SyncResult) (*safeSet, bool) {
	conds, changed := status.SetReplicaFailure(owner.Status.Conditions, res.ManageErr, res.Diff, owner.Generation, res.Now)
	replicas := int32(len(res.Active))
	write := changed || replicas != owner.Status.Replicas
	m.mu.Lock()
	m.statusCalls++
	m.lastManageErr, m.lastAsked = res.ManageErr, write
	m.mu.Unlock()
	if !write {
		return nil, false
	}
	next := *owner
	next.Status = safeSetStatus{Replicas: replicas, Conditions: conds}
	return &next, true
}

// WriteStatus is the status subresource: the owner keeps its spec and
// takes next's status.
func (m *safetyModel) WriteStatus(_ context.Context, next *safeSet) (*safeSet, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statusWrites++
	stored := *m.owner
	stored.Status = next.Status
	m.owner = &stored
	return &stored, nil
}

// The actions, one draw label each; Sync is drawn most often.

var safetyActions = map[string]func(*safetyModel, *rapid.T){
	"sync":       (*safetyModel).Sync,
	"respec":     (*safetyModel).Respec,
	"scale":      (*safetyModel).Scale,
	"deliver":    (*safetyModel).Deliver,
	"duplicate":  (*safetyModel).Duplicate,
	"drop":       (*safetyModel).Drop,
	"relist":     (*safetyModel).Relist,
	"clock":      (*safetyModel).Clock,
	"kubelet":    (*safetyModel).Kubelet,
	"finish":     (*safetyModel).Finish,
	"delete":     (*safetyModel).Delete,
	"relabel":    (*safetyModel).Relabel,
	"faults":     (*safetyModel).Faults,
	"ownerEvent": (*safetyModel).OwnerEvent,
}

// safetyActionNames is the list actions are drawn from. rapid draws low
// indexes more often than high ones (and shrinks towards index 0), so the
// order is the intended mix: syncs and deliveries most, faults least.
var safetyActionNames = []string{"sync", "deliver", "sync", "kubelet", "sync", "respec", "relist", "sync", "clock",
	"scale", "finish", "delete", "relabel", "sync", "duplicate", "drop", "faults", "ownerEvent"}

var safetyActionGen = rapid.SampledFrom(safetyActionNames)

// Sync runs one Controller.Sync and checks (b) and (d) on it.
func (m *safetyModel) Sync(t *rapid.T) {
	before, stats := m.counts(), m.c.Client.Stats()
	synced := m.c.Informer.HasSynced()
	res, err := m.ctrl.Sync(m.ctx, m.key)
	d := m.counts().minus(before)
	m.syncs++
	m.adopted += len(res.Adopted)
	m.released += len(res.Released)
	nothing := func(why string) {
		if d != (safetyCounts{}) || len(res.Adopted)+len(res.Released) > 0 {
			t.Fatalf("%s, yet the sync read or wrote: %+v, %d adopted, %d released (error %v)", why, d, len(res.Adopted), len(res.Released), err)
		}
	}
	var stale *expectations.StaleCacheError
	switch {
	case m.owner.Namespace == "":
		m.scopedSyncs++
		if !errors.Is(err, reconcile.ErrClusterScoped) || !errors.Is(err, reconcile.ErrTerminal) {
			t.Fatalf("sync of a cluster-scoped owner: %v, want ErrClusterScoped and ErrTerminal", err)
		}
		nothing("cluster-scoped owner")
	case !synced:
		m.unsyncedSyncs++
		if !errors.Is(err, reconcile.ErrNotSynced) || !errors.Is(err, reconcile.ErrDeferred) || errors.Is(err, reconcile.ErrTerminal) {
			t.Fatalf("sync before the informer's initial list: %v, want ErrNotSynced and ErrDeferred, not terminal", err)
		}
		nothing("the informer has not synced")
	case errors.Is(err, reconcile.ErrDeferred):
		m.gateSyncs++
		if !m.gate || !errors.As(err, &stale) || errors.Is(err, reconcile.ErrTerminal) {
			t.Fatalf("deferred with the gate %v: %v", m.gate, err)
		}
		nothing("the gate deferred the sync")
	case m.deleteOnly:
		// claims and deletes as a valid spec; never creates, and
		// says so (terminal ErrInvalidSpec) when it would have to.
		if d.creates > 0 {
			t.Fatalf("sync of spec %v without a template made %d creates", m.spec, d.creates)
		}
		if errors.Is(err, reconcile.ErrTerminal) && !errors.Is(err, reconcile.ErrInvalidSpec) {
			t.Fatalf("sync of spec %v without a template: %v", m.spec, err)
		}
		if res.Managed && len(res.Active) < int(m.spec.replicas) && !errors.Is(res.ManageErr, reconcile.ErrInvalidSpec) {
			t.Fatalf("sync of spec %v without a template wants pods: ManageErr %v, want ErrInvalidSpec", m.spec, res.ManageErr)
		}
		after := m.c.Client.Stats()
		if dl := after.Deletes - stats.Deletes; dl > m.burst {
			t.Fatalf("one sync made %d deletes, burst %d", dl, m.burst)
		}
	case !m.valid:
		m.invalidSyncs++
		// terminal, the condition written, nothing touched.
		if !errors.Is(err, reconcile.ErrInvalidSpec) || !errors.Is(err, reconcile.ErrTerminal) {
			t.Fatalf("sync of invalid spec %v: %v, want ErrInvalidSpec and ErrTerminal", m.spec, err)
		}
		if d.creates+d.deletes+d.patches > 0 || len(res.Adopted)+len(res.Released) > 0 {
			t.Fatalf("sync of invalid spec %v made %d creates, %d deletes, %d patches (%d adopted, %d released)",
				m.spec, d.creates, d.deletes, d.patches, len(res.Adopted), len(res.Released))
		}
		m.mu.Lock()
		manageErr, asked := m.lastManageErr, m.lastAsked
		m.mu.Unlock()
		if d.statusCalls != 1 || !errors.Is(manageErr, reconcile.ErrInvalidSpec) || !errors.Is(res.ManageErr, reconcile.ErrInvalidSpec) {
			t.Fatalf("sync of invalid spec %v: %d status computations, the last with ManageErr %v", m.spec, d.statusCalls, manageErr)
		}
		if asked && (d.statusWrites != 1 || !res.StatusWritten) {
			t.Fatalf("sync of invalid spec %v: the status asked for a write; %d made", m.spec, d.statusWrites)
		}
		if c := meta.FindStatusCondition(m.owner.Status.Conditions, status.ReplicaFailure); c == nil || c.Status != metav1.ConditionTrue {
			t.Fatalf("sync of invalid spec %v: no ReplicaFailure condition stored (status %+v)", m.spec, m.owner.Status)
		}
	default:
		// a watch that drops an add event and moves on hides a pod
		// the controller created while the cache's version passes it —
		// what a cache that cannot see its pods looks like — so the
		// creation breaker may stop creating until a relist shows it.
		stopped := errors.Is(err, reconcile.ErrCreationsStopped) && m.c.Informer.Stats().Dropped > 0
		if (errors.Is(err, reconcile.ErrTerminal) && !stopped) || errors.Is(err, reconcile.ErrInvalidSpec) {
			t.Fatalf("sync of valid spec %v: %v", m.spec, err)
		}
		if errors.Is(res.ManageErr, reconcile.ErrCreationsStopped) && m.c.Informer.Stats().Dropped == 0 {
			t.Fatalf("sync of valid spec %v: creations stopped with no event dropped: %v (sync error %v)", m.spec, res.ManageErr, err)
		}
		if res.Managed {
			m.managed++
		}
		// the burst bounds the creates, and the deletes, of a sync.
		after := m.c.Client.Stats()
		if c, dl := after.Creates-stats.Creates, after.Deletes-stats.Deletes; c > m.burst || dl > m.burst {
			t.Fatalf("one sync made %d creates and %d deletes, burst %d", c, dl, m.burst)
		}
	}
}

// Respec gives the owner a new spec, valid or not.
func (m *safetyModel) Respec(t *rapid.T) { m.setSpec(drawSafeSpec(t)) }

// Scale changes only the replicas.
func (m *safetyModel) Scale(t *rapid.T) {
	s := m.spec
	s.replicas = safeReplicasGen.Draw(t, "replicas")
	m.setSpec(s)
}

// OwnerEvent is the owner informer's resync: an update with no change.
func (m *safetyModel) OwnerEvent(*rapid.T) { m.ctrl.OwnerUpdated(m.owner, m.owner) }

// Deliver delivers a few queued events ahead of the lag.
func (m *safetyModel) Deliver(t *rapid.T) {
	m.c.Informer.Deliver(rapid.IntRange(1, 4).Draw(t, "events"))
}

// Duplicate queues a copy of a queued event.
func (m *safetyModel) Duplicate(t *rapid.T) {
	if n := m.c.Informer.Len(); n > 0 && m.c.Informer.HasSynced() {
		m.c.Informer.Duplicate(rapid.IntRange(0, n-1).Draw(t, "duplicateIndex"))
	}
}

// Drop loses a queued event. A lost event of the owner's pod leaves the
// controller's cache wrong about it until a relist: a lost add hides the
// pod, so the controller may create one too many; a lost deletion (or
// finish) shows a pod that is gone, so once its expectations resolve (by
// evidence, or after the TTL) the controller may delete another pod in its
// place and then replace that one. Either is an allowance of (a).
func (m *safetyModel) Drop(t *rapid.T) {
	n := m.c.Informer.Len()
	if n == 0 || !m.c.Informer.HasSynced() {
		return
	}
	idx := rapid.IntRange(0, n-1).Draw(t, "dropIndex")
	if ev, ok := m.c.Informer.Peek(idx); ok {
		if ref := cluster.ControllerOf(ev.Pod); ref != nil && ref.UID == m.owner.UID {
			m.missed++
		}
	}
	m.c.Informer.Drop(idx)
	m.dropped++
}

// Relist replaces the cache by a list of the API; on an informer that has
// not synced, it is the initial list.
func (m *safetyModel) Relist(*rapid.T) {
	m.c.Informer.Relist()
	m.relists++
}

// Clock moves the virtual time, sometimes across the expectations' TTL.
func (m *safetyModel) Clock(t *rapid.T) {
	m.c.Clock.Step(rapid.SampledFrom([]time.Duration{
		time.Second, 15 * time.Second, time.Minute, expectations.DefaultTTL + time.Second,
	}).Draw(t, "clockStep"))
}

// Kubelet makes pods Running and Ready and removes deleted ones.
func (m *safetyModel) Kubelet(*rapid.T) { m.c.Kubelet.Step() }

// safePick is a pod the test may touch behind the controller's back.
type safePick struct {
	name   string
	counts bool // the owner's or an orphan, and some valid selector matches it
}

// claimable reports whether some valid selector matches labels: a pod with
// them may count towards the owner, now or after a new spec.
func claimable(labels map[string]string) bool {
	for _, sel := range safeSelectors {
		if sel.valid && sel.match(labels) {
			return true
		}
	}
	return false
}

// pick draws one of the pods the test may touch behind the controller's
// back (any active pod but the untouchable ones). Whatever the test does
// to it (finish, delete, relabel) takes it out of the controller's reach,
// if it was in it or may come into it: the owner's pod, or an orphan, that
// a valid selector matches. Its cache may not show the change yet, and
// under this spec or a later one the controller may count the pod as
// active (adopting it, if an orphan), delete another as excess, and then
// replace that one: an allowance of (a).
func (m *safetyModel) pick(t *rapid.T, label string) (string, bool) {
	var pods []safePick
	m.c.API.Each(func(p *corev1.Pod) {
		if _, ok := m.untouchable[cluster.Key(p)]; !ok && safeActive(p) {
			ref := cluster.ControllerOf(p)
			mine := ref == nil || ref.UID == m.owner.UID
			pods = append(pods, safePick{p.Name, mine && claimable(p.Labels)})
		}
	})
	if len(pods) == 0 {
		return "", false
	}
	p := pods[rapid.IntRange(0, len(pods)-1).Draw(t, label)]
	if p.counts {
		m.left++
	}
	return p.name, true
}

// Finish ends a pod's run (Succeeded or Failed).
func (m *safetyModel) Finish(t *rapid.T) {
	if name, ok := m.pick(t, "finishPod"); ok {
		if _, ok := m.c.Kubelet.Finish(safetyNamespace, name); !ok {
			t.Fatalf("could not finish active pod %s", name)
		}
		m.finished++
	}
}

// Delete deletes a pod behind the controller's back.
func (m *safetyModel) Delete(t *rapid.T) {
	if name, ok := m.pick(t, "deletePod"); ok {
		if err := m.c.API.Delete(safetyNamespace, name); err != nil {
			t.Fatalf("deleting %s: %v", name, err)
		}
		m.behindBack++
	}
}

// Relabel gives a pod labels no selector matches, behind the controller's
// back.
func (m *safetyModel) Relabel(t *rapid.T) {
	if name, ok := m.pick(t, "relabelPod"); ok {
		p, _ := m.c.API.Get(safetyNamespace, name)
		p.Labels = map[string]string{"moved": "yes"}
		if _, err := m.c.API.Update(p); err != nil {
			t.Fatalf("relabelling %s: %v", name, err)
		}
		m.relabelled++
	}
}

// Faults picks new API faults: for every k-th create call, and for the
// deletes of one pod in k.
func (m *safetyModel) Faults(t *rapid.T) {
	cf := rapid.SampledFrom([]cluster.Fault{cluster.NoFault, cluster.FailBefore, cluster.LoseResponse, cluster.NamespaceTerminating}).Draw(t, "createFault")
	ck := rapid.IntRange(1, 4).Draw(t, "createEvery")
	df := rapid.SampledFrom([]cluster.Fault{cluster.NoFault, cluster.FailBefore, cluster.LoseResponse}).Draw(t, "deleteFault")
	dk := rapid.IntRange(1, 4).Draw(t, "deleteEvery")
	m.mu.Lock()
	m.createFault, m.createEvery, m.deleteFault, m.deleteEvery = cf, ck, df, dk
	m.mu.Unlock()
}

// Check is the invariant after every step: (a) and (c).
func (m *safetyModel) Check(t *rapid.T) {
	st := m.c.Client.Stats()
	bound := m.asked + m.left + m.missed + int64(st.CreateLost+st.DeleteLost)
	if int64(st.Created) == bound && bound > 0 {
		m.atBound++
	}
	if int64(st.Created) > bound {
		t.Fatalf("the controller created %d pods, more than the %d its valid specs asked for + %d that left its control "+
			"+ %d events of its pods dropped + %d creates and %d deletes whose response was lost (spec %v)",
			st.Created, m.asked, m.left, m.missed, st.CreateLost, st.DeleteLost, m.spec)
	}
	m.mu.Lock()
	v := m.violation
	m.mu.Unlock()
	if v != "" {
		t.Fatal(v)
	}
	seen := 0
	m.c.API.Each(func(p *corev1.Pod) {
		uid, ok := m.untouchable[cluster.Key(p)]
		if !ok {
			return
		}
		seen++
		var got types.UID
		if ref := cluster.ControllerOf(p); ref != nil {
			got = ref.UID
		}
		if got != uid || p.DeletionTimestamp != nil || len(p.OwnerReferences) > 1 {
			v = fmt.Sprintf("pod %s, which is another owner's or matches no selector, was changed: controller %q (want %q), %d ownerRefs, deleted %v",
				cluster.Key(p), got, uid, len(p.OwnerReferences), p.DeletionTimestamp != nil)
		}
	})
	if v != "" {
		t.Fatal(v)
	}
	if seen != len(m.untouchable) {
		t.Fatalf("%d of %d untouchable pods are gone", len(m.untouchable)-seen, len(m.untouchable))
	}
}

// safetyFigures accumulates what the cases exercised, for the log.
type safetyFigures struct {
	mu sync.Mutex

	actions                                                           map[string]int
	cases, steps, syncs, managed, invalid, scoped, unsynced, gate     int
	unsyncedCases, invalidCases, created, lost, failed, maxCreated    int
	left, missed, adopted, released, finished, behindBack, relabelled int
	deselected, atBound, casesAtBound                                 int
	dropped, relists, hugeCases                                       int
	delivered, duplicated                                             int
	createCalls, deleteCalls, namespaceTerminating, deleteFailed      int
	deleteLost                                                        int
}

func (f *safetyFigures) add(m *safetyModel) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, is := m.c.Client.Stats(), m.c.Informer.Stats()
	f.cases++
	if f.actions == nil {
		f.actions = map[string]int{}
	}
	for a, n := range m.actions {
		f.actions[a] += n
	}
	f.steps += m.steps
	f.syncs += m.syncs
	f.managed += m.managed
	f.invalid += m.invalidSyncs
	f.scoped += m.scopedSyncs
	f.unsynced += m.unsyncedSyncs
	f.gate += m.gateSyncs
	if m.unsyncedSyncs > 0 {
		f.unsyncedCases++
	}
	if m.invalidSyncs > 0 {
		f.invalidCases++
	}
	if m.asked > 1<<19 {
		f.hugeCases++
	}
	f.created += st.Created
	f.maxCreated = max(f.maxCreated, st.Created)
	f.lost += st.CreateLost
	f.failed += st.CreateFailed
	f.namespaceTerminating += st.NamespaceTerminating
	f.createCalls += st.Creates
	f.deleteCalls += st.Deletes
	f.deleteFailed += st.DeleteFailed
	f.deleteLost += st.DeleteLost
	f.left += int(m.left)
	f.deselected += m.deselected
	f.atBound += m.atBound
	if m.atBound > 0 {
		f.casesAtBound++
	}
	f.missed += int(m.missed)
	f.adopted += m.adopted
	f.released += m.released
	f.finished += m.finished
	f.behindBack += m.behindBack
	f.relabelled += m.relabelled
	f.dropped += m.dropped
	f.relists += m.relists
	f.delivered += is.Delivered
	f.duplicated += is.Duplicated
}

func (f *safetyFigures) log(t *testing.T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t.Logf("cases %d, steps %d, syncs %d: %d managed, %d of invalid specs (in %d cases), %d of cluster-scoped owners, "+
		"%d before the initial list (in %d cases), %d deferred by the gate",
		f.cases, f.steps, f.syncs, f.managed, f.invalid, f.invalidCases, f.scoped, f.unsynced, f.unsyncedCases, f.gate)
	t.Logf("pods created %d (at most %d in a case; %d cases with huge replicas), %d with a lost response; create calls %d "+
		"(%d failed before the write, %d NamespaceTerminating); delete calls %d (%d failed before the write, %d lost responses)",
		f.created, f.maxCreated, f.hugeCases, f.lost, f.createCalls, f.failed, f.namespaceTerminating, f.deleteCalls, f.deleteFailed, f.deleteLost)
	t.Logf("(a) held with equality after %d steps, in %d cases", f.atBound, f.casesAtBound)
	t.Logf("actions: %v", f.actions)
	t.Logf("left the controller's control or reach %d (finished %d, deleted behind its back %d, relabelled %d, no longer selected %d); "+
		"events of the owner's pods dropped %d of %d dropped, %d duplicated, %d delivered, %d relists; adopted %d, released %d",
		f.left, f.finished, f.behindBack, f.relabelled, f.deselected, f.missed, f.dropped, f.duplicated, f.delivered, f.relists, f.adopted, f.released)
}
