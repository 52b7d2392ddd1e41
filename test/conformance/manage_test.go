package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/util/consistency"
	testingclock "k8s.io/utils/clock/testing"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// outcomes is a failure pattern shared by both sides: the result of the
// i-th create call (in call order; concurrent calls of one batch take
// consecutive positions, so each batch sees the same results on both
// sides) and of the delete of each pod name.
type outcomes struct {
	create []error
	delete map[string]error
}

var (
	errCreate = errors.New("create refused")
	errDelete = errors.New("delete refused")
	errNSTerm = &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403,
		Reason: metav1.StatusReasonForbidden, Message: "namespace ns is being terminated",
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}}}}
	errGone = apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "x")
)

func (o *outcomes) createErr(i int) error {
	if i < len(o.create) {
		return o.create[i]
	}
	return nil
}

// upstreamPodControl is a controller.PodControlInterface that records the
// pods upstream would send (controller.GetPodFromTemplate, the real
// builder) and the deletes, and fails as the pattern says.
type upstreamPodControl struct {
	o       *outcomes
	calls   atomic.Int64
	mu      sync.Mutex
	created []*corev1.Pod
	deleted []string
}

func (c *upstreamPodControl) CreatePods(ctx context.Context, namespace string, template *corev1.PodTemplateSpec, object runtime.Object, ref *metav1.OwnerReference) error {
	return c.CreatePodsWithGenerateName(ctx, namespace, template, object, ref, "")
}

func (c *upstreamPodControl) CreatePodsWithGenerateName(_ context.Context, namespace string, template *corev1.PodTemplateSpec, object runtime.Object, ref *metav1.OwnerReference, _ string) error {
	i := int(c.calls.Add(1) - 1)
	pod, err := controller.GetPodFromTemplate(template, object, ref)
	if err != nil {
		return err
	}
	pod.Namespace = namespace
	c.mu.Lock()
	c.created = append(c.created, pod)
	c.mu.Unlock()
	return c.o.createErr(i)
}

func (c *upstreamPodControl) DeletePod(_ context.Context, namespace, name string, _ runtime.Object) error {
	c.mu.Lock()
	c.deleted = append(c.deleted, namespace+"/"+name)
	c.mu.Unlock()
	return c.o.delete[name]
}

func (c *upstreamPodControl) PatchPod(context.Context, string, string, []byte) error {
	return errors.New("conformance: PatchPod is not expected")
}

// ourPodControl is the same for reconcile.PodControl.
type ourPodControl struct {
	o       *outcomes
	calls   atomic.Int64
	mu      sync.Mutex
	created []*corev1.Pod
	deleted []string
}

func (c *ourPodControl) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	i := int(c.calls.Add(1) - 1)
	c.mu.Lock()
	c.created = append(c.created, pod.DeepCopy())
	c.mu.Unlock()
	if err := c.o.createErr(i); err != nil {
		return nil, err
	}
	return pod, nil
}

func (c *ourPodControl) DeletePod(_ context.Context, pod *corev1.Pod) error {
	c.mu.Lock()
	c.deleted = append(c.deleted, pod.Namespace+"/"+pod.Name)
	c.mu.Unlock()
	return c.o.delete[pod.Name]
}

// expectationsOf returns the controller's UIDTrackingControllerExpectations
// (the unexported field ReplicaSetController.expectations), to read what
// manageReplicas left there.
func expectationsOf(rsc *replicaset.ReplicaSetController) *controller.UIDTrackingControllerExpectations {
	f := reflect.ValueOf(rsc).Elem().FieldByName("expectations")
	return *(**controller.UIDTrackingControllerExpectations)(unsafe.Pointer(f.UnsafeAddr()))
}

var replicaSetKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// newUpstreamController builds a real ReplicaSetController (NewBaseController,
// as kube-controller-manager's constructor does) on informers that are
// never started: the test puts the ReplicaSets and pods straight into their
// indexers.
func newUpstreamController(pc controller.PodControlInterface, burst int, rss []*appsv1.ReplicaSet, pods []*corev1.Pod) *replicaset.ReplicaSetController {
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	rsInf, podInf := f.Apps().V1().ReplicaSets(), f.Core().V1().Pods()
	rsc := replicaset.NewBaseController(logr.Discard(), rsInf, podInf, fake.NewClientset(), burst, replicaSetKind,
		"replicaset_controller", "replicaset", pc, nil, replicaset.ReplicaSetControllerFeatures{EnableStatusTerminatingReplicas: true},
		consistency.NewNoopConsistencyStore())
	for _, rs := range rss {
		_ = rsInf.Informer().GetIndexer().Add(rs)
	}
	for _, p := range pods {
		_ = podInf.Informer().GetIndexer().Add(p)
	}
	return rsc
}

// TestManageReplicasMatchesManageReplicas runs reconcile.Manager.
// ManageReplicas and the real manageReplicas of a ReplicaSetController on the
// same ReplicaSet, active pods (all controlled by it, as after claiming),
// related pods (upstream's getIndirectlyRelatedPods from the informer
// indexers, given to both), burst, earlier expectations and failure pattern
// (create errors, NamespaceTerminating, delete errors, NotFound), and
// compares: the create calls and the pod each sends, the deleted pods (a
// valid first k of upstream's order, or the input order when all go), the
// expectations left afterwards (counters and deletion keys) and the error
// (nil on both, or upstream's error among ours).
func TestManageReplicasMatchesManageReplicas(t *testing.T) {
	tiedAtCut := 0
	defer func() {
		t.Logf("cases whose victims differed among pods tied at the cut (compared after swapping outcomes): %d", tiedAtCut)
	}()
	differential(t, func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := newSpec(t)
			s.now = base
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rs", UID: s.ownerUID}}
			rs.Spec.Replicas = ptrTo(int32(rapid.IntRange(0, 12).Draw(t, "replicas")))
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			rs.Spec.Template.Labels = map[string]string{"app": "web"}
			rs.Spec.Template.Annotations = rapid.SampledFrom([]map[string]string{nil, {"a": "b"}}).Draw(t, "templateAnnotations")
			rs.Spec.Template.Finalizers = rapid.SampledFrom([][]string{nil, {"f"}}).Draw(t, "templateFinalizers")
			rs.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "img"}}
			rss := []*appsv1.ReplicaSet{rs}
			if rapid.Bool().Draw(t, "deployment") {
				rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "d-uid", Controller: ptrTo(true)}}
				sib := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sib", UID: "sib-uid", OwnerReferences: rs.OwnerReferences}}
				sib.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
				rss = append(rss, sib)
			}
			active := podsGen(s, 0, 10).Draw(t, "active")
			// Real pods have distinct UIDs; getIndirectlyRelatedPods keeps
			// the first of the pods sharing one, in the lister's map order,
			// which would make upstream's related pods (its second listing)
			// differ from the ones given to reconcilekit.
			for _, p := range active {
				p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, replicaSetKind)}
				p.UID = types.UID("uid-" + p.Name)
			}
			others := podsGen(s, 0, 4).Draw(t, "otherPods")
			for i, p := range others {
				p.Name = fmt.Sprintf("o%d", i)
				p.UID = types.UID("uid-" + p.Name)
			}
			burst := rapid.SampledFrom([]int{0, 1, 2, 3, 500}).Draw(t, "burst")
			upBurst := burst
			if upBurst == 0 {
				upBurst = replicaset.BurstReplicas
			}
			o := &outcomes{delete: map[string]error{}}
			fail := rapid.SampledFrom([]error{nil, nil, nil, errCreate, errNSTerm})
			for i, n := 0, rapid.IntRange(0, 16).Draw(t, "createOutcomes"); i < n; i++ {
				o.create = append(o.create, fail.Draw(t, "createOutcome"))
			}
			for _, p := range active {
				o.delete[p.Name] = rapid.SampledFrom([]error{nil, nil, nil, errDelete, errGone}).Draw(t, "deleteOutcome")
			}
			key := "ns/rs"
			seed := rapid.IntRange(0, 3).Draw(t, "earlierExpectations")
			seedKeys := rapid.SliceOfN(rapid.SampledFrom([]string{"ns/p0", "ns/p1", "ns/zz"}), 0, 3).Draw(t, "earlierKeys")

			// Upstream: a real controller whose expectations start as ours do.
			runUpstream := func(o *outcomes) (*upstreamPodControl, *controller.UIDTrackingControllerExpectations, *replicaset.ReplicaSetController) {
				pc := &upstreamPodControl{o: o}
				rsc := newUpstreamController(pc, upBurst, rss, append(slices.Clone(active), others...))
				exp := expectationsOf(rsc)
				switch seed {
				case 1:
					_ = exp.ExpectCreations(logr.Discard(), key, 2)
				case 2:
					_ = exp.ExpectDeletions(logr.Discard(), key, seedKeys)
				}
				return pc, exp, rsc
			}
			upPC, upExp, rsc := runUpstream(o)
			related, err := upstreamRelatedPods(rsc, logr.Discard(), rs)
			if err != nil {
				t.Fatalf("harness: getIndirectlyRelatedPods: %v", err)
			}
			// Ours.
			tracker := expectations.New(expectations.Options{})
			ourPC := &ourPodControl{o: o}
			m := &reconcile.Manager{Pods: ourPC, Expectations: tracker, BurstReplicas: burst}
			switch seed {
			case 1:
				tracker.ExpectCreations(key, 2)
			case 2:
				tracker.ExpectDeletions(key, seedKeys)
			}

			// Upstream ranks at its own wall-clock reading, taken between
			// before and after; ours ranks at after (checked against both).
			before := time.Now()
			upErr := upstreamManageReplicas(rsc, context.Background(), slices.Clone(active), rs.DeepCopy())
			after := time.Now()
			m.Clock = testingclock.NewFakePassiveClock(after)
			out, err := m.ManageReplicas(context.Background(), reconcile.ReplicaSetOwner(rs), active, related)
			addCases(1)

			// Calls and the pods sent.
			if len(ourPC.created) != len(upPC.created) {
				t.Fatalf("%d creates, upstream %d (outcome %+v)", len(ourPC.created), len(upPC.created), out)
			}
			for i := range ourPC.created {
				g, w := ourPC.created[i], upPC.created[i]
				// nil and empty maps and lists serialize alike (omitempty):
				// upstream sends empty ones, which the API cannot tell from nil.
				if g.Namespace != w.Namespace || g.GenerateName != w.GenerateName || !sameOrEmpty(g.Labels, w.Labels) ||
					!sameOrEmpty(g.Annotations, w.Annotations) || !sameOrEmpty(g.Finalizers, w.Finalizers) ||
					!reflect.DeepEqual(g.OwnerReferences, w.OwnerReferences) || !reflect.DeepEqual(g.Spec, w.Spec) {
					t.Fatalf("created pod differs:\nours     %+v\nupstream %+v", g.ObjectMeta, w.ObjectMeta)
				}
			}
			// Victims.
			if len(ourPC.deleted) != len(upPC.deleted) {
				t.Fatalf("%d deletes, upstream %d", len(ourPC.deleted), len(upPC.deleted))
			}
			if k := len(upPC.deleted); k > 0 {
				victims := out.Victims
				upVictims := make([]*corev1.Pod, 0, k)
				for _, name := range upPC.deleted {
					for _, p := range active {
						if "ns/"+p.Name == name {
							upVictims = append(upVictims, p)
						}
					}
				}
				if k == len(active) {
					if !sameSet(victims, active) || !sameSet(upVictims, active) {
						t.Fatalf("all pods go: ours %v, upstream %v", names(victims), names(upVictims))
					}
				} else {
					ok := false
					var why []string
					for _, now := range []time.Time{before, after} {
						l := lessMatrix(slices.Clone(active), upstreamRankedByNode(active, related).Rank, now)
						if weakOrderViolation(l) != "" {
							noteDocumented(excNotStrictWeakOrder)
							ok = len(victims) == k && !hasDuplicates(victims)
							break
						}
						wo, wu := validPrefix(l, indices(active, victims), k), validPrefix(l, indices(active, upVictims), k)
						why = append(why, wo, wu)
						ok = ok || (wo == "" && wu == "")
					}
					if !ok {
						t.Fatalf("victims %v, upstream %v: %q", names(victims), names(upVictims), why)
					}
				}
			}
			// Tied pods at the cut may go either way, and the failure
			// pattern is per pod: when the victims differ, give upstream's
			// own victims the outcomes of ours (swapping pod for pod) and run
			// it again from the same start; it picks the same victims, and
			// the errors and expectations afterwards become comparable.
			if ours, theirs := sortedStrings(ourPC.deleted), sortedStrings(upPC.deleted); !slices.Equal(ours, theirs) {
				var ourOnly, upOnly []string
				for _, k := range ours {
					if !slices.Contains(theirs, k) {
						ourOnly = append(ourOnly, strings.TrimPrefix(k, "ns/"))
					}
				}
				for _, k := range theirs {
					if !slices.Contains(ours, k) {
						upOnly = append(upOnly, strings.TrimPrefix(k, "ns/"))
					}
				}
				o2 := &outcomes{create: o.create, delete: maps.Clone(o.delete)}
				for i := range ourOnly {
					o2.delete[upOnly[i]], o2.delete[ourOnly[i]] = o.delete[ourOnly[i]], o.delete[upOnly[i]]
				}
				upPC2, exp2, rsc2 := runUpstream(o2)
				upExp = exp2
				upErr = upstreamManageReplicas(rsc2, context.Background(), slices.Clone(active), rs.DeepCopy())
				if !slices.Equal(sortedStrings(upPC2.deleted), theirs) {
					t.Fatalf("harness: upstream chose %v, then %v", theirs, sortedStrings(upPC2.deleted))
				}
				tiedAtCut++
			}
			// Expectations afterwards. Which keys were expected depends on
			// the victims (ties may go either way): compare counts, and the
			// keys when both chose the same pods.
			a, d, found := tracker.Pending(key)
			rec, exists, _ := upExp.GetExpectations(key)
			var ua, ud int64
			if exists {
				ua, ud = rec.GetExpectations()
			}
			if found != exists || int64(a) != ua || int64(d) != ud {
				t.Fatalf("expectations afterwards %d, %d, %v; upstream %d, %d, %v (outcome %+v, err %v, upstream err %v)", a, d, found, ua, ud, exists, out, err, upErr)
			}
			snap, _ := tracker.Snapshot(key)
			upKeys := upExp.GetUIDs(key).List()
			if slices.Equal(sortedStrings(ourPC.deleted), sortedStrings(upPC.deleted)) && len(snap.DeletionKeys)+len(upKeys) > 0 && !slices.Equal(snap.DeletionKeys, upKeys) {
				t.Fatalf("deletion keys afterwards %v, upstream %v", snap.DeletionKeys, upKeys)
			}
			// Errors.
			if (err == nil) != (upErr == nil) {
				t.Fatalf("error %v, upstream %v", err, upErr)
			}
			if err != nil && !errors.Is(err, upErr) {
				t.Fatalf("upstream's error %v is not among ours: %v", upErr, err)
			}
		})
	})
}

func sameSet(a, b []*corev1.Pod) bool {
	return len(a) == len(b) && !hasDuplicates(a) && func() bool {
		for _, p := range a {
			if !slices.Contains(b, p) {
				return false
			}
		}
		return true
	}()
}

func sortedStrings(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// sameOrEmpty is reflect.DeepEqual, except that nil and empty are the same.
func sameOrEmpty(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Len() == 0 && vb.Len() == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}
