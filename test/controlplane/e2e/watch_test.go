package e2e_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podWatch watches every pod of a namespace for the whole test, in the order
// kube-apiserver reports the changes, and checks that the live pods
// controlled by each owner (active: no deletion timestamp, not terminal)
// never outnumber what the test allows for that owner at that moment.
type podWatch struct {
	t  *testing.T
	mu sync.Mutex
	// pods is the last seen state of every pod.
	pods map[string]*corev1.Pod
	// allowed is the bound per owner name; owners without one are not checked.
	allowed map[string]int
	max     map[string]int
	// everOwned is every pod name ever seen controlled by the owner.
	everOwned  map[string]map[string]bool
	violations []string
	synced     cache.InformerSynced
}

func watchPods(t *testing.T, ctx context.Context, client kubernetes.Interface, ns string) *podWatch {
	t.Helper()
	w := &podWatch{t: t, pods: map[string]*corev1.Pod{}, allowed: map[string]int{}, max: map[string]int{},
		everOwned: map[string]map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.set(obj.(*corev1.Pod)) },
		UpdateFunc: func(_, obj any) { w.set(obj.(*corev1.Pod)) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if p, ok := obj.(*corev1.Pod); ok {
				w.remove(p.Name)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.synced = inf.HasSynced
	factory.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		factory.Shutdown()
		w.mu.Lock()
		defer w.mu.Unlock()
		assert.Empty(t, w.violations, "live pods outnumbered the desired count")
		t.Logf("pod watch of %s: most live pods per owner %v", ns, w.max)
	})
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	return w
}

func controllerName(p *corev1.Pod) string {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.Kind + "/" + ref.Name
	}
	return ""
}

// live is R-5.1's "active" written out on purpose rather than imported from
// podrank: this module watches both our controller and
// kube-controller-manager from outside and does not depend on the library
// it judges.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func (w *podWatch) set(p *corev1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pods[p.Name] = p
	if owner := controllerName(p); owner != "" {
		if w.everOwned[owner] == nil {
			w.everOwned[owner] = map[string]bool{}
		}
		w.everOwned[owner][p.Name] = true
		w.checkLocked(owner)
	}
}

func (w *podWatch) remove(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pods, name)
}

func (w *podWatch) liveLocked(owner string) []string {
	var names []string
	for _, p := range w.pods {
		if live(p) && controllerName(p) == owner {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names
}

func (w *podWatch) checkLocked(owner string) {
	n := len(w.liveLocked(owner))
	if n > w.max[owner] {
		w.max[owner] = n
	}
	if bound, ok := w.allowed[owner]; ok && n > bound {
		w.violations = append(w.violations, fmt.Sprintf("%s: %d live pods, at most %d allowed", owner, n, bound))
	}
}

// allow sets the bound on owner's live pods from now on; owner is
// "Kind/name". It checks the current count against it at once.
func (w *podWatch) allow(owner string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.allowed[owner] = n
	w.checkLocked(owner)
}

// live returns the names of owner's live pods ("" for pods without a controller).
func (w *podWatch) live(owner string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.liveLocked(owner)
}

// get returns the last seen state of a pod, nil when it is gone.
func (w *podWatch) get(name string) *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pods[name]
}

// all returns the last seen state of every pod.
func (w *podWatch) all() []*corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(w.pods))
	for _, p := range w.pods {
		out = append(out, p)
	}
	return out
}

// everOwnedBy returns every pod name ever seen controlled by owner.
func (w *podWatch) everOwnedBy(owner string) map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]bool{}
	for n := range w.everOwned[owner] {
		out[n] = true
	}
	return out
}

func (w *podWatch) maxLive(owner string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max[owner]
}
