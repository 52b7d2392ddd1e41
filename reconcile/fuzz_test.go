package reconcile_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

// The fuzz targets of the reconcile package: everything the Controller
// and the Manager take from the API server — pods, owners, ownerRefs,
// selectors, templates, replicas — decoded from the fuzzer's bytes by
// podtest.Decoder. Their properties: no panic, every error prefixed with
// "reconcile: ", inputs never modified, and the package's invariants
// never adopt, release or delete a pod another owner
// controls: never more creates or deletes than the burst).

// FuzzPodEvents feeds decoded pod add, update and delete events to a
// Controller whose cache holds decoded owners with pending expectations,
// and checks that the handlers never panic or modify a pod or an owner,
// that every request names a cached owner of the pod's namespace, and that
// expectations only ever go down, and only those of the owner the pod's
// controller ownerRef resolves to (kind, name and UID, R-12.7): an orphan
// or a foreign pod touches none.
func FuzzPodEvents(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := pt.NewDecoder(data)
		owners := decodeOwners(d)
		r := newRecController(t, newRecOwners(owners...), nil, nil)
		tracker := r.Tracker()
		for _, rs := range owners {
			key := reconcile.OwnerKey(rs.Namespace, rs.Name)
			tracker.ExpectCreations(key, 4)
			tracker.ExpectDeletions(key, allPodKeys())
		}
		ownersBefore := deepCopyOwners(owners)
		for range 1 + d.Intn(6) {
			kind := d.Intn(3)
			old := d.Pod()
			cur := old
			if kind == 1 {
				cur = mutatePod(d, old)
			}
			oldBefore, curBefore := old.DeepCopy(), cur.DeepCopy()
			pending := pendingOf(tracker, owners)

			var reqs []reconcile.SyncRequest
			switch kind {
			case 0:
				reqs = r.PodAdded(cur)
			case 1:
				reqs = r.PodUpdated(old, cur)
			case 2:
				reqs = r.PodDeleted(cur)
			}

			if !reflect.DeepEqual(old, oldBefore) || !reflect.DeepEqual(cur, curBefore) {
				t.Fatal("an event handler modified a pod")
			}
			for _, req := range reqs {
				if req.After < 0 || !cachedOwnerOf(owners, req.Key, old.Namespace, cur.Namespace) {
					t.Fatalf("request %+v: not a cached owner of namespace %q or %q", req, old.Namespace, cur.Namespace)
				}
			}
			for i, rs := range owners {
				now := pendingOf(tracker, owners)[i]
				if now == pending[i] {
					continue
				}
				if now.adds > pending[i].adds || now.dels > pending[i].dels {
					t.Fatalf("owner %s: an event raised expectations from %+v to %+v", rs.Name, pending[i], now)
				}
				if !resolvesTo(old, rs) && !resolvesTo(cur, rs) {
					t.Fatalf("owner %s: expectations changed by a pod it does not control: %+v", rs.Name, cur.OwnerReferences)
				}
			}
		}
		if !reflect.DeepEqual(owners, ownersBefore) {
			t.Fatal("an event handler modified an owner")
		}
	})
}

// FuzzOwnerEvents feeds decoded owner add, update and delete events (nil
// owners too) to a Controller holding expectations for every decoded key,
// and checks that the handlers never panic or modify an owner, enqueue
// exactly the keys of the owners given, forget a key on delete and on an
// update that changes the UID, and touch no other key.
func FuzzOwnerEvents(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := pt.NewDecoder(data)
		owners := decodeOwners(d)
		r := newRecController(t, newRecOwners(owners...), nil, nil)
		tracker := r.Tracker()
		keys := map[string]bool{}
		for _, ns := range pt.Namespaces {
			for _, name := range pt.OwnerNames {
				key := reconcile.OwnerKey(ns, name)
				keys[key] = true
				tracker.ExpectCreations(key, 1)
			}
		}
		for range 1 + d.Intn(6) {
			kind := d.Intn(3)
			old, cur := maybeOwner(d), maybeOwner(d)
			if kind == 1 && d.Bool() && old != nil {
				cur = old.DeepCopy()
				cur.ResourceVersion += "1"
				if d.Bool() {
					cur.UID = types.UID(d.Pick("uid-new", ""))
				}
			}
			oldBefore, curBefore := old.DeepCopy(), cur.DeepCopy()
			held := map[string]bool{}
			for key := range keys {
				_, _, held[key] = tracker.Pending(key)
			}

			var reqs []reconcile.SyncRequest
			var want, forgotten []string
			switch kind {
			case 0:
				reqs = r.OwnerAdded(cur)
				want = ownerKeys(cur)
			case 1:
				reqs = r.OwnerUpdated(old, cur)
				if cur != nil {
					want = ownerKeys(cur)
					if old != nil && old.UID != cur.UID {
						forgotten = ownerKeys(old)
						if forgotten[0] != want[0] {
							want = append(forgotten, want...)
						}
					}
				}
			case 2:
				reqs = r.OwnerDeleted(cur)
				want = ownerKeys(cur)
				forgotten = want
			}

			if !reflect.DeepEqual(old, oldBefore) || !reflect.DeepEqual(cur, curBefore) {
				t.Fatal("an event handler modified an owner")
			}
			var got []string
			for _, req := range reqs {
				if req.After != 0 {
					t.Fatalf("request %+v: owner events enqueue at once", req)
				}
				got = append(got, req.Key)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("requests %v, want %v", got, want)
			}
			for key := range keys {
				_, _, ok := tracker.Pending(key)
				switch {
				case contains(forgotten, key) && ok:
					t.Fatalf("key %s not forgotten", key)
				case !contains(forgotten, key) && ok != held[key]:
					t.Fatalf("key %s: expectations changed by an event of another owner", key)
				}
			}
		}
	})
}

// FuzzManageReplicas runs ManageReplicas with a decoded owner (no object,
// a typed nil one, empty or odd keys, any replicas, a nil template or one
// without labels), decoded active and related pods (nil, duplicate,
// terminating, controlled by other owners) and a PodControl whose creates
// and deletes fail as decoded. It checks that it never panics, that errors
// start with "reconcile: ", that an invalid owner (or a template it cannot
// create from) makes no call, that creates and deletes stay within the
// burst and go in the direction of the diff, that every deleted
// pod is one of active not controlled by another owner, or, while
// creating, one of Outcome.NotSelected, that created pods are
// controlled by the owner and carry the template's labels, that a created
// pod the owner's selector does not match is deleted, never counted as
// created, and makes the error ErrCreationsStopped, and that no input is
// modified.
func FuzzManageReplicas(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := pt.NewDecoder(data)
		rs := d.ReplicaSet()
		owner := reconcile.ReplicaSetOwner(rs)
		switch d.Intn(8) {
		case 0:
			owner.Object = nil
		case 1:
			owner.Object = (*appsv1.ReplicaSet)(nil)
		case 2:
			owner.Key = d.Pick("", "other/rs9", d.Text())
		case 3:
			owner.Template = nil
		case 4:
			owner.Replicas = int32(d.Int64())
		}
		active := d.Pods(8, true)
		if len(active) > 1 && d.Intn(4) == 0 {
			active = append(active, active[0]) // a duplicate entry
		}
		related := d.Pods(4, true)
		control := &faultyPods{createFaults: decodeFaults(d), deleteFaults: decodeFaults(d)}
		m := &reconcile.Manager{
			Pods:           control,
			BurstReplicas:  d.Intn(7) - 1,
			Clock:          fakeclock.New(pt.Epoch),
			TrackCreations: d.Bool(),
		}
		burst := m.BurstReplicas
		if burst <= 0 {
			burst = reconcile.DefaultBurstReplicas
		}
		rsBefore, activeBefore, relatedBefore := rs.DeepCopy(), deepCopyPods(active), deepCopyPods(related)

		out, err := m.ManageReplicas(context.Background(), owner, active, related)

		checkManageErr(t, err, control)
		if !reflect.DeepEqual(rs, rsBefore) || !reflect.DeepEqual(active, activeBefore) || !reflect.DeepEqual(related, relatedBefore) {
			t.Fatal("ManageReplicas modified its input")
		}
		created, deleted := control.calls()
		valid := owner.Object != nil && !reflect.ValueOf(owner.Object).IsNil() && owner.Key != "" && owner.Replicas >= 0
		if !valid && (err == nil || len(created)+len(deleted) > 0) {
			t.Fatalf("invalid owner %+v: want an error and no call; got %v, %d creates, %d deletes", owner, err, len(created), len(deleted))
		}
		if len(created) > burst || len(deleted) > burst {
			t.Fatalf("%d creates and %d deletes with a burst of %d (R-1.3)", len(created), len(deleted), burst)
		}
		// while creating, the only deletes are of the created pods
		// the selector does not match, each deleted once.
		if len(created) > 0 && (out.Diff >= 0 || len(deleted) != len(out.NotSelected)) {
			t.Fatalf("created %d pods with diff %d and %d deletes (%d not selected)", len(created), out.Diff, len(deleted), len(out.NotSelected))
		}
		if len(deleted) > 0 && out.Diff <= 0 && len(created) == 0 {
			t.Fatalf("deleted %d pods with diff %d", len(deleted), out.Diff)
		}
		if len(created) > 0 && owner.Template == nil {
			t.Fatal("created pods without a template")
		}
		for _, p := range created {
			ref := metav1.GetControllerOf(p)
			if ref == nil || ref.UID != rs.UID || p.Namespace != rs.Namespace || !reflect.DeepEqual(p.Labels, owner.Template.Labels) {
				t.Fatalf("created pod %s/%s (controller %+v, labels %v) is not the owner's", p.Namespace, p.Name, ref, p.Labels)
			}
		}
		checkNotSelected(t, owner, out, err, len(created))
		for _, p := range deleted {
			if len(created) > 0 {
				if !contains(out.NotSelected, p) {
					t.Fatalf("deleted pod %s/%s while creating, which is not one of Outcome.NotSelected", p.Namespace, p.Name)
				}
				continue
			}
			if !contains(active, p) {
				t.Fatalf("deleted pod %s/%s, which is not one of the active pods", p.Namespace, p.Name)
			}
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID != rs.UID {
				t.Fatalf("deleted pod %s/%s, controlled by %s (uid %s)", p.Namespace, p.Name, ref.Name, ref.UID)
			}
		}
	})
}

// checkNotSelected checks Outcome.NotSelected: only a set, valid,
// non-empty selector is checked; a pod it lists is one the selector does
// not match, controlled by the owner, not counted in Created, and makes
// the error terminal ErrCreationsStopped; a pod in Created is one the
// selector matches.
func checkNotSelected(t *testing.T, owner reconcile.Owner, out reconcile.Outcome, err error, creates int) {
	t.Helper()
	var sel labels.Selector
	if owner.Selector != nil {
		if s, serr := metav1.LabelSelectorAsSelector(owner.Selector); serr == nil && !s.Empty() {
			sel = s
		}
	}
	if sel == nil {
		if len(out.NotSelected) > 0 {
			t.Fatalf("%d pods not selected by selector %v, which is not checked", len(out.NotSelected), owner.Selector)
		}
		return
	}
	if len(out.NotSelected) > creates {
		t.Fatalf("%d pods not selected of %d creates", len(out.NotSelected), creates)
	}
	if len(out.NotSelected) > 0 && (!errors.Is(err, reconcile.ErrCreationsStopped) || !errors.Is(err, reconcile.ErrTerminal)) {
		t.Fatalf("%d created pods not selected, error %v: want ErrCreationsStopped and ErrTerminal", len(out.NotSelected), err)
	}
	for _, p := range out.NotSelected {
		if sel.Matches(labels.Set(p.Labels)) {
			t.Fatalf("pod %s/%s (labels %v) in NotSelected, but selector %v matches it", p.Namespace, p.Name, p.Labels, sel)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != owner.Object.GetUID() {
			t.Fatalf("pod %s/%s in NotSelected is not the owner's (controller %+v)", p.Namespace, p.Name, ref)
		}
		if contains(out.Created, p) {
			t.Fatalf("pod %s/%s is both NotSelected and Created", p.Namespace, p.Name)
		}
	}
	for _, p := range out.Created {
		if !sel.Matches(labels.Set(p.Labels)) {
			t.Fatalf("created pod %s/%s (labels %v) counted as created, but selector %v does not match it", p.Namespace, p.Name, p.Labels, sel)
		}
	}
}

// checkManageErr checks an error of ManageReplicas: each of its parts (it
// joins the failures of several calls) is the Manager's own, prefixed with
// "reconcile: ", or one of the errors control returned, unchanged, as
// ManageReplicas documents: a PodControl error reaches the caller as the
// PodControl returned it (Sync adds the prefix).
func checkManageErr(t *testing.T, err error, control *faultyPods) {
	t.Helper()
	if err == nil || strings.HasPrefix(err.Error(), "reconcile: ") {
		return
	}
	parts := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		parts = joined.Unwrap()
	}
	for _, part := range parts {
		if !strings.HasPrefix(part.Error(), "reconcile: ") && !contains(control.createFaults, part) && !contains(control.deleteFaults, part) {
			t.Fatalf("error %q: part %q is neither the Manager's (\"reconcile: \") nor a PodControl's", err, part)
		}
	}
}

// FuzzSyncOwner runs Controller.Sync on a decoded ReplicaSet (any replicas,
// selector — nil, empty, invalid operators or keys —, template labels,
// deletion timestamp) and decoded pods, through a Describe that may answer
// with another key, object or kind or an error. It checks that Sync never
// panics or modifies the owner or the pods, that every error starts with
// "reconcile: ", that an owner Describe rejects, or a cluster-scoped one,
// is an ErrTerminal error with no write at all, that an owner
// whose spec fails Owner.Validate is an ErrInvalidSpec error with its
// status written and no pod touched, and that a deleting
// owner gets no create, delete or patch.
func FuzzSyncOwner(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := pt.NewDecoder(data)
		rs := d.ReplicaSet()
		pods := d.Pods(6, true)
		answer := d.Intn(8)
		other := d.ReplicaSet()
		r := newRecController(t, newRecOwners(rs), pods, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
			cfg.BurstReplicas = 1 + d.Intn(4)
			cfg.Clock = fakeclock.New(pt.Epoch)
			cfg.Describe = func(owner *appsv1.ReplicaSet) (reconcile.Owner, error) {
				o := reconcile.ReplicaSetOwner(owner)
				switch answer {
				case 1:
					return reconcile.Owner{}, errors.New("describe failed")
				case 2:
					o.Key = "other/key"
				case 3:
					o.Object = other
				case 4:
					o.Kind = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Other"}
				case 5:
					o.Key, o.Object, o.Kind = "", nil, schema.GroupVersionKind{}
				}
				return o, nil
			}
		})
		rsBefore, podsBefore := rs.DeepCopy(), deepCopyPods(pods)
		key := reconcile.OwnerKey(rs.Namespace, rs.Name)

		res, err := r.Sync(context.Background(), key)

		if err != nil && !strings.HasPrefix(err.Error(), "reconcile: ") {
			t.Fatalf("error %q lacks the package prefix", err)
		}
		if !reflect.DeepEqual(rs, rsBefore) || !reflect.DeepEqual(pods, podsBefore) {
			t.Fatal("Sync modified the owner or the pods")
		}
		writes := len(r.control.creates()) + len(r.control.deletes()) + len(r.patcher.recorded())
		rejected := answer == 1 || answer == 2 || (answer == 3 && other.UID != rs.UID) || answer == 4 || rs.Namespace == ""
		if rejected {
			if !errors.Is(err, reconcile.ErrTerminal) || writes > 0 || len(r.status.writes()) > 0 {
				t.Fatalf("rejected owner: want ErrTerminal and no write; got %v, %d writes, %d status writes", err, writes, len(r.status.writes()))
			}
			return
		}
		spec := reconcile.ReplicaSetOwner(rs)
		if invalid := spec.Validate(); len(invalid) > 0 {
			// terminal, no pod touched, the status written with the
			// error (the recording StatusFunc always asks for a write).
			if !errors.Is(err, reconcile.ErrInvalidSpec) || !errors.Is(err, reconcile.ErrTerminal) || writes > 0 ||
				len(r.status.writes()) != 1 || !errors.Is(res.ManageErr, reconcile.ErrInvalidSpec) {
				t.Fatalf("invalid spec %v: want ErrInvalidSpec, no pod write and one status write; got %v, %d writes, %d status writes",
					invalid, err, writes, len(r.status.writes()))
			}
			return
		}
		if errors.Is(err, reconcile.ErrTerminal) {
			t.Fatalf("valid owner, terminal error %v", err)
		}
		if res.Deleting && writes > 0 {
			t.Fatalf("a deleting owner got %d writes (R-10.6)", writes)
		}
	})
}

// FuzzSync runs Controller.Sync on the simulated cluster with decoded
// owners and pods (stored in the API; some terminating), over several
// rounds with events delivered, late or not, between them. Each Sync must
// not panic or modify the owners or the cached pods, must return only
// "reconcile: " errors, must create and delete at most the burst
// must adopt only orphans in its namespace that match its selector
// and release only its own pods, must delete only pods it
// controls or adopted in that sync, and must do nothing while its owner is
// being deleted.
func FuzzSync(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		d := pt.NewDecoder(data)
		c := cluster.New(cluster.Options{Seed: uint64(d.Byte()), GracefulDeletion: d.Bool(), Nodes: 2})
		owners := decodeOwners(d)
		for _, p := range d.Pods(8, false) {
			stored, err := c.API.Create(p)
			if err == nil && p.DeletionTimestamp != nil {
				stored.DeletionTimestamp = p.DeletionTimestamp
				_, err = c.API.Update(stored)
			}
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("storing a decoded pod: %v", err)
			}
		}
		c.Informer.DeliverAll()
		control := &recordingControl{inner: c.Client}
		burst := 1 + d.Intn(4)
		r := newRecController(t, newRecOwners(owners...), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
			cfg.Cluster.Pods = informerPods(c) // the one place this target meets the Pods seam
			cfg.Cluster.PodClient = podClient{control, &recPatcher{api: c.API}}
			noStatus(cfg)
			cfg.Clock = c.Clock
			cfg.BurstReplicas = burst
			cfg.SetTrackCreations(d.Bool())
			if d.Bool() {
				cfg.Cluster.CacheVersions.Pods = c.Informer.LastSyncResourceVersion
			}
		})
		ownersBefore := deepCopyOwners(owners)
		for range 1 + d.Intn(3) {
			for _, rs := range owners {
				cached := c.Informer.Pods()
				cachedBefore := deepCopyPods(cached)
				control.reset()

				res, err := r.Sync(context.Background(), reconcile.OwnerKey(rs.Namespace, rs.Name))

				if err != nil && !strings.HasPrefix(err.Error(), "reconcile: ") {
					t.Fatalf("error %q lacks the package prefix", err)
				}
				if !reflect.DeepEqual(cached, cachedBefore) {
					t.Fatal("Sync modified cached pods")
				}
				checkSync(t, rs, res, control, burst, byKey(cachedBefore))
			}
			switch d.Intn(4) {
			case 0:
				c.Informer.DeliverAll()
			case 1:
				c.Informer.Deliver(d.Intn(4))
			case 2:
				c.Kubelet.Step()
				c.Informer.DeliverAll()
			}
			c.Clock.Step(time.Duration(d.Intn(4)) * time.Minute)
		}
		if !reflect.DeepEqual(owners, ownersBefore) {
			t.Fatal("Sync modified an owner")
		}
	})
}

// checkSync checks one Sync of rs: the writes it made (through control)
// and what it reports (res) against the cache it read (cached, by key).
func checkSync(t *testing.T, rs *appsv1.ReplicaSet, res reconcile.SyncResult, control *recordingControl, burst int, cached map[string]*corev1.Pod) {
	t.Helper()
	created, deleted := control.calls()
	if len(created) > burst || len(deleted) > burst {
		t.Fatalf("owner %s: %d creates and %d deletes with a burst of %d (R-1.3)", rs.Name, len(created), len(deleted), burst)
	}
	if res.Deleting && len(created)+len(deleted)+len(res.Adopted)+len(res.Released) > 0 {
		t.Fatalf("owner %s is being deleted, yet the sync wrote (R-10.6)", rs.Name)
	}
	selector, selErr := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	for _, p := range res.Adopted {
		was := cached[reconcile.PodKey(p)]
		switch {
		case was == nil:
			t.Fatalf("owner %s adopted %s, which is not in the cache", rs.Name, reconcile.PodKey(p))
		case metav1.GetControllerOf(was) != nil:
			t.Fatalf("owner %s adopted %s, controlled by %+v (R-12.2)", rs.Name, reconcile.PodKey(p), metav1.GetControllerOf(was))
		case was.Namespace != rs.Namespace || selErr != nil || !selector.Matches(labels.Set(was.Labels)):
			t.Fatalf("owner %s adopted %s, which its selector does not match (R-12.2)", rs.Name, reconcile.PodKey(p))
		}
	}
	for _, p := range res.Released {
		was := cached[reconcile.PodKey(p)]
		if was == nil || metav1.GetControllerOf(was) == nil || metav1.GetControllerOf(was).UID != rs.UID {
			t.Fatalf("owner %s released %s, which it does not control (R-12.2)", rs.Name, reconcile.PodKey(p))
		}
	}
	for _, p := range deleted {
		key := reconcile.PodKey(p)
		was := cached[key]
		if was == nil {
			t.Fatalf("owner %s deleted %s, which is not in the cache", rs.Name, key)
		}
		ref := metav1.GetControllerOf(was)
		adopted := ref == nil && containsKey(res.Adopted, key)
		if !adopted && (ref == nil || ref.UID != rs.UID) {
			t.Fatalf("owner %s (uid %s) deleted %s, controlled by %+v", rs.Name, rs.UID, key, ref)
		}
	}
	for _, p := range created {
		if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != rs.UID {
			t.Fatalf("owner %s created a pod controlled by %+v", rs.Name, ref)
		}
	}
}

// decodeOwners draws up to three ReplicaSets with distinct keys.
func decodeOwners(d *pt.Decoder) []*appsv1.ReplicaSet {
	var owners []*appsv1.ReplicaSet
	seen := map[string]bool{}
	for range d.Intn(4) {
		rs := d.ReplicaSet()
		key := reconcile.OwnerKey(rs.Namespace, rs.Name)
		if seen[key] {
			continue
		}
		seen[key] = true
		owners = append(owners, rs)
	}
	return owners
}

// decodeFaults draws the errors of up to six calls: none, or errors the
// API server could return.
func decodeFaults(d *pt.Decoder) []error {
	podsResource := schema.GroupResource{Resource: "pods"}
	faults := make([]error, d.Intn(7))
	for i := range faults {
		switch d.Intn(6) {
		case 1:
			faults[i] = errors.New("boom")
		case 2:
			faults[i] = apierrors.NewNotFound(podsResource, "p")
		case 3:
			faults[i] = apierrors.NewAlreadyExists(podsResource, "p")
		case 4:
			faults[i] = apierrors.NewTimeoutError("slow", 1)
		}
	}
	return faults
}

// maybeOwner draws a ReplicaSet or, one time in six, nil.
func maybeOwner(d *pt.Decoder) *appsv1.ReplicaSet {
	if d.Intn(6) == 0 {
		return nil
	}
	return d.ReplicaSet()
}

// mutatePod returns a copy of old changed as an update could change it:
// resourceVersion, labels, controller ownerRef, deletion timestamp,
// readiness — or a pod decoded afresh.
func mutatePod(d *pt.Decoder, old *corev1.Pod) *corev1.Pod {
	if d.Intn(4) == 0 {
		return d.Pod()
	}
	cur := old.DeepCopy()
	if d.Intn(4) != 0 {
		cur.ResourceVersion = d.Pick("11", "12", "")
	}
	for range d.Intn(3) {
		switch d.Intn(4) {
		case 0:
			cur.Labels = d.Labels()
		case 1:
			cur.OwnerReferences = []metav1.OwnerReference{d.OwnerRef()}
		case 2:
			t := metav1.NewTime(d.Instant())
			cur.DeletionTimestamp = &t
		case 3:
			cur.Status.Conditions = []corev1.PodCondition{{
				Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(d.Instant()),
			}}
		}
	}
	return cur
}

// pending is an owner key's pending expectations.
type pending struct {
	adds, dels int
	ok         bool
}

func pendingOf(tr *expectations.Tracker, owners []*appsv1.ReplicaSet) []pending {
	out := make([]pending, len(owners))
	for i, rs := range owners {
		out[i].adds, out[i].dels, out[i].ok = tr.Pending(reconcile.OwnerKey(rs.Namespace, rs.Name))
	}
	return out
}

// allPodKeys are the keys of every pod the Decoder can draw.
func allPodKeys() []string {
	var keys []string
	for _, ns := range pt.Namespaces[1:] {
		for i := range 6 {
			keys = append(keys, ns+"/p"+strconv.Itoa(i))
		}
	}
	return keys
}

// resolvesTo reports whether pod's controller ownerRef resolves to rs as
// the Controller's events must resolve it: kind ReplicaSet, same
// namespace, name and UID.
func resolvesTo(pod *corev1.Pod, rs *appsv1.ReplicaSet) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.Kind == "ReplicaSet" && pod.Namespace == rs.Namespace && ref.Name == rs.Name && ref.UID == rs.UID
}

// cachedOwnerOf reports whether key is the key of one of owners in one of
// the namespaces.
func cachedOwnerOf(owners []*appsv1.ReplicaSet, key string, namespaces ...string) bool {
	for _, rs := range owners {
		if reconcile.OwnerKey(rs.Namespace, rs.Name) == key && contains(namespaces, rs.Namespace) {
			return true
		}
	}
	return false
}

// ownerKeys is the one-key list of rs's key; nil for a nil rs.
func ownerKeys(rs *appsv1.ReplicaSet) []string {
	if rs == nil {
		return nil
	}
	return []string{reconcile.OwnerKey(rs.Namespace, rs.Name)}
}

func deepCopyOwners(owners []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	if owners == nil {
		return nil
	}
	out := make([]*appsv1.ReplicaSet, len(owners))
	for i, rs := range owners {
		out[i] = rs.DeepCopy()
	}
	return out
}

func deepCopyPods(pods []*corev1.Pod) []*corev1.Pod {
	if pods == nil {
		return nil
	}
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

func byKey(pods []*corev1.Pod) map[string]*corev1.Pod {
	m := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		m[reconcile.PodKey(p)] = p
	}
	return m
}

func containsKey(pods []*corev1.Pod, key string) bool {
	for _, p := range pods {
		if reconcile.PodKey(p) == key {
			return true
		}
	}
	return false
}

func contains[E comparable](s []E, e E) bool {
	for _, x := range s {
		if x == e {
			return true
		}
	}
	return false
}

// recordingControl passes calls on to inner and records the pods it was
// given; safe for concurrent use.
type recordingControl struct {
	inner reconcile.PodControl

	mu               sync.Mutex
	created, deleted []*corev1.Pod
}

func (r *recordingControl) CreatePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	r.mu.Lock()
	r.created = append(r.created, pod)
	r.mu.Unlock()
	return r.inner.CreatePod(ctx, pod)
}

func (r *recordingControl) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	r.mu.Lock()
	r.deleted = append(r.deleted, pod)
	r.mu.Unlock()
	return r.inner.DeletePod(ctx, pod)
}

func (r *recordingControl) calls() (created, deleted []*corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*corev1.Pod(nil), r.created...), append([]*corev1.Pod(nil), r.deleted...)
}

func (r *recordingControl) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.created, r.deleted = nil, nil
}

// faultyPods is a PodControl that records the pods it was given and fails
// as decoded: the i-th create fails with createFaults[i] (none past the
// end), a delete of a pod named "p<j>" with deleteFaults[j].
type faultyPods struct {
	createFaults, deleteFaults []error

	mu               sync.Mutex
	created, deleted []*corev1.Pod
}

func (f *faultyPods) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	f.mu.Lock()
	call := len(f.created)
	f.created = append(f.created, pod)
	f.mu.Unlock()
	if call < len(f.createFaults) && f.createFaults[call] != nil {
		return nil, f.createFaults[call]
	}
	out := pod.DeepCopy()
	if out.Name == "" {
		out.Name = out.GenerateName + strconv.Itoa(call)
	}
	out.UID = types.UID("uid-created-" + strconv.Itoa(call))
	out.ResourceVersion = strconv.Itoa(100 + call)
	return out, nil
}

func (f *faultyPods) DeletePod(_ context.Context, pod *corev1.Pod) error {
	f.mu.Lock()
	f.deleted = append(f.deleted, pod)
	f.mu.Unlock()
	if j, err := strconv.Atoi(strings.TrimPrefix(pod.Name, "p")); err == nil && j < len(f.deleteFaults) {
		return f.deleteFaults[j]
	}
	return nil
}

func (f *faultyPods) calls() (created, deleted []*corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*corev1.Pod(nil), f.created...), append([]*corev1.Pod(nil), f.deleted...)
}
