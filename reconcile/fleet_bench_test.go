package reconcile_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// fleetPods is a read-only Pods over a fixed set of pods with the two
// lookups an informer offers: the namespace's pods (List builds a new
// slice, as an informer's lister does) and the pods of one controller
// reference plus the orphans (an index built once, as an informer's
// indexer keeps it). Not safe for writes; reads are concurrent-safe.
type fleetPods struct {
	byNamespace map[string][]*corev1.Pod
	byKey       map[string][]*corev1.Pod
}

func newFleetPods(pods []*corev1.Pod) *fleetPods {
	f := &fleetPods{byNamespace: map[string][]*corev1.Pod{}, byKey: map[string][]*corev1.Pod{}}
	for _, p := range pods {
		f.byNamespace[p.Namespace] = append(f.byNamespace[p.Namespace], p)
		key := p.Namespace
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil {
			key = p.Namespace + "/" + ref.Kind + "/" + ref.Name + "/" + string(ref.UID)
		}
		f.byKey[key] = append(f.byKey[key], p)
	}
	return f
}

func (f *fleetPods) List(namespace string) ([]*corev1.Pod, error) {
	return append([]*corev1.Pod(nil), f.byNamespace[namespace]...), nil
}

func (f *fleetPods) ListByController(namespace, kind, name string, uid types.UID) ([]*corev1.Pod, error) {
	owned := f.byKey[namespace+"/"+kind+"/"+name+"/"+string(uid)]
	orphans := f.byKey[namespace]
	out := make([]*corev1.Pod, 0, len(owned)+len(orphans))
	out = append(out, owned...)
	return append(out, orphans...), nil
}

// fleetOwners is a read-only Owners of ReplicaSets with a namespace list
// and an index by controller UID, built once.
type fleetOwners struct {
	byKey       map[string]*appsv1.ReplicaSet
	byNamespace map[string][]*appsv1.ReplicaSet
	byUID       map[types.UID][]*appsv1.ReplicaSet
}

func newFleetOwners(rss []*appsv1.ReplicaSet) *fleetOwners {
	f := &fleetOwners{byKey: map[string]*appsv1.ReplicaSet{}, byNamespace: map[string][]*appsv1.ReplicaSet{}, byUID: map[types.UID][]*appsv1.ReplicaSet{}}
	for _, rs := range rss {
		f.byKey[reconcile.OwnerKey(rs.Namespace, rs.Name)] = rs
		f.byNamespace[rs.Namespace] = append(f.byNamespace[rs.Namespace], rs)
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil {
			f.byUID[ref.UID] = append(f.byUID[ref.UID], rs)
		}
	}
	return f
}

func (f *fleetOwners) Get(namespace, name string) (*appsv1.ReplicaSet, error) {
	rs, ok := f.byKey[reconcile.OwnerKey(namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(rsResource, name)
	}
	return rs, nil
}

func (f *fleetOwners) List(namespace string) ([]*appsv1.ReplicaSet, error) {
	return append([]*appsv1.ReplicaSet(nil), f.byNamespace[namespace]...), nil
}

func (f *fleetOwners) ListByController(namespace string, uid types.UID) ([]*appsv1.ReplicaSet, error) {
	var out []*appsv1.ReplicaSet
	for _, rs := range f.byUID[uid] {
		if rs.Namespace == namespace {
			out = append(out, rs)
		}
	}
	return out, nil
}

func (f *fleetOwners) GetLive(_ context.Context, namespace, name string) (*appsv1.ReplicaSet, error) {
	return f.Get(namespace, name)
}

// fleetOthers is the number of other ReplicaSets in the namespace in
// BenchmarkFleet.
const fleetOthers = 1000

// fleet returns the owner "web" with 10 ready pods, and a namespace that
// also holds others other pods spread over fleetOthers other ReplicaSets
// (none when others is 0), each with its own selector.
func fleet(others int) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, []*corev1.Pod) {
	web := recRS(10)
	pods := recOwned(web, 10, podtest.Ready(podtest.Epoch))
	owners := []*appsv1.ReplicaSet{web}
	if others == 0 {
		return web, owners, pods
	}
	for i := range fleetOthers {
		rs := recRS(int32(others / fleetOthers))
		rs.Name = "other-" + strconv.Itoa(i)
		rs.UID = types.UID("uid-" + rs.Name)
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": rs.Name}}
		rs.Spec.Template.Labels = map[string]string{"app": rs.Name}
		owners = append(owners, rs)
	}
	for i := range others {
		rs := owners[1+i%fleetOthers]
		p := podtest.New(rs.Name+"-"+strconv.Itoa(i),
			podtest.ControlledBy(rs, "ReplicaSet", "apps/v1"),
			podtest.Labels(map[string]string{"app": rs.Name}),
			podtest.Ready(podtest.Epoch))
		pods = append(pods, p)
	}
	return web, owners, pods
}

// BenchmarkFleet measures, in a namespace that holds 0, 10,000 or 100,000
// other pods spread over 1,000 other ReplicaSets (none in the first case):
//   - Sync: one Controller.Sync of a ReplicaSet whose 10 pods are all in
//     place, through lookups indexed by controller reference (the goal:
//     the cost does not grow with the rest of the namespace);
//   - PodUpdated: one event handler call for an update of one of its pods
//     (the owner is found by name);
//   - OrphanAdded: one event handler call for a new orphan, which is
//     matched against every owner of the namespace, as upstream does.
func BenchmarkFleet(b *testing.B) {
	for _, others := range []int{0, 10_000, 100_000} {
		web, owners, pods := fleet(others)
		c := newFleetController(b, owners, pods, nil)
		ctx := context.Background()
		b.Run("others="+strconv.Itoa(others)+"/Sync", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.Sync(ctx, "default/web")
				if err != nil || len(res.Active) != 10 || res.Outcome.Expected != 0 {
					b.Fatalf("sync: %d active, %v", len(res.Active), err)
				}
			}
		})
		old := pods[0]
		cur := old.DeepCopy()
		cur.ResourceVersion = "2"
		b.Run("others="+strconv.Itoa(others)+"/PodUpdated", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if reqs := c.PodUpdated(old, cur); len(reqs) != 1 {
					b.Fatalf("requests %v", reqs)
				}
			}
		})
		orphan := podtest.New("stray", podtest.Labels(map[string]string{"app": web.Name}))
		b.Run("others="+strconv.Itoa(others)+"/OrphanAdded", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if reqs := c.PodAdded(orphan); len(reqs) != 1 {
					b.Fatalf("requests %v", reqs)
				}
			}
		})
	}
}

func newFleetController(b *testing.B, owners []*appsv1.ReplicaSet, pods []*corev1.Pod, tune func(*reconcile.Config[*appsv1.ReplicaSet])) *reconcile.Controller[*appsv1.ReplicaSet] {
	b.Helper()
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = newFleetOwners(owners)
	cfg.Cluster.CachesSynced = alwaysSynced
	cfg.Cluster.Pods = newFleetPods(pods)
	cfg.Cluster.PodClient = podClient{recNopPods{}, &recPatcher{}}
	cfg.Clock = fakeclock.New(podtest.Epoch.Add(time.Hour))
	noStatus(&cfg)
	if tune != nil {
		tune(&cfg)
	}
	c, err := reconcile.NewController(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}
