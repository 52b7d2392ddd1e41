package clientgo_test

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// WebApp is a custom resource for the tests and examples: what a
// generated clientset's type looks like, with its DeepCopyObject written
// by hand.
type WebApp struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Spec   WebAppSpec
	Status WebAppStatus
}

// WebAppSpec is what a WebApp asks for.
type WebAppSpec struct {
	Replicas int32
	Selector *metav1.LabelSelector
	Template corev1.PodTemplateSpec
}

// WebAppStatus counts a WebApp's pods.
type WebAppStatus struct {
	Replicas      int32
	ReadyReplicas int32
}

// DeepCopyObject implements runtime.Object.
func (in *WebApp) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Selector = in.Spec.Selector.DeepCopy()
	in.Spec.Template.DeepCopyInto(&out.Spec.Template)
	return &out
}

var (
	webAppGVK      = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "WebApp"}
	webAppResource = schema.GroupResource{Group: "example.com", Resource: "webapps"}
)

// webApp returns a WebApp of ns asking for replicas pods labelled app=name.
func webApp(name string, replicas int32) *WebApp {
	labels := map[string]string{"app": name}
	return &WebApp{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: WebAppSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}
}

// webAppLogic sets cfg's Describe and Status for WebApps: the spec's
// replicas and template, the pods counted into the status.
func webAppLogic(cfg reconcile.Config[*WebApp]) reconcile.Config[*WebApp] {
	cfg.Describe = func(app *WebApp) (reconcile.Owner, error) {
		return reconcile.Owner{Replicas: app.Spec.Replicas, Selector: app.Spec.Selector, Template: &app.Spec.Template}, nil
	}
	cfg.Status = func(app *WebApp, res reconcile.SyncResult) (*WebApp, bool) {
		next := app.DeepCopyObject().(*WebApp)
		next.Status = WebAppStatus{Replicas: res.Counts.Replicas, ReadyReplicas: res.Counts.Ready}
		return next, next.Status != app.Status
	}
	return cfg
}

// webApps stands in for a custom resource's API, its generated typed
// client and its informer: a client-go FakeControllerSource (lists and
// watches with resourceVersions) and the objects as last written. Safe
// for concurrent use. It does not model admission, defaulting or the
// generation of anything but a spec change through Scale.
type webApps struct {
	mu      sync.Mutex
	source  *fcache.FakeControllerSource
	items   map[string]*WebApp // by namespace/name; never modified once stored
	nextUID int
	// failUpdates fails that many UpdateStatus calls with a conflict.
	failUpdates int
	// getErr, when set, fails every Get.
	getErr error
	// calls counts Get and UpdateStatus calls.
	calls map[string]int
}

func newWebApps() *webApps {
	return &webApps{source: fcache.NewFakeControllerSource(), items: map[string]*WebApp{}, calls: map[string]int{}}
}

// Create stores app with a UID and generation 1 and returns what it stored.
func (w *webApps) Create(app *WebApp) *WebApp {
	w.mu.Lock()
	defer w.mu.Unlock()
	stored := app.DeepCopyObject().(*WebApp)
	w.nextUID++
	stored.UID = types.UID(fmt.Sprintf("webapp-%d", w.nextUID))
	stored.Generation = 1
	w.source.Add(stored) // sets its resourceVersion
	w.items[reconcile.OwnerKey(stored.Namespace, stored.Name)] = stored
	return stored.DeepCopyObject().(*WebApp)
}

// Scale sets the replicas of the WebApp namespace/name, a spec change.
func (w *webApps) Scale(namespace, name string, replicas int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stored := w.items[reconcile.OwnerKey(namespace, name)].DeepCopyObject().(*WebApp)
	stored.Spec.Replicas = replicas
	stored.Generation++
	w.source.Modify(stored)
	w.items[reconcile.OwnerKey(namespace, name)] = stored
}

// Get returns the WebApp namespace/name as last written.
func (w *webApps) Get(namespace, name string) (*WebApp, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stored, ok := w.items[reconcile.OwnerKey(namespace, name)]
	if !ok {
		return nil, false
	}
	return stored.DeepCopyObject().(*WebApp), true
}

// Calls returns how many calls of each kind the typed client answered.
func (w *webApps) Calls() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.calls {
		out[k] = v
	}
	return out
}

// Client is the generated typed client of namespace, as a Kind's Client.
func (w *webApps) Client(namespace string) clientgo.OwnerClient[*WebApp] {
	return webAppClient{apps: w, namespace: namespace}
}

// Informer is a WebApp informer over the source, with a namespace index
// (as a generated informer factory's).
func (w *webApps) Informer() cache.SharedIndexInformer {
	return cache.NewSharedIndexInformer(webAppListWatch{w.source}, &WebApp{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// Kind is the WebApps' Kind for NewConfig.
func (w *webApps) Kind(informer cache.SharedIndexInformer) clientgo.Kind[*WebApp] {
	return clientgo.Kind[*WebApp]{GroupVersionKind: webAppGVK, Resource: webAppResource, Informer: informer, Client: w.Client}
}

// webAppListWatch lists, then watches: from client-go v0.35 a reflector
// would first try a watch list, which the fake source does not serve.
type webAppListWatch struct{ *fcache.FakeControllerSource }

func (webAppListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// webAppClient is the typed client of one namespace.
type webAppClient struct {
	apps      *webApps
	namespace string
}

func (c webAppClient) Get(_ context.Context, name string, _ metav1.GetOptions) (*WebApp, error) {
	w := c.apps
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls["get"]++
	if w.getErr != nil {
		return nil, w.getErr
	}
	stored, ok := w.items[reconcile.OwnerKey(c.namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(webAppResource, name)
	}
	return stored.DeepCopyObject().(*WebApp), nil
}

// UpdateStatus writes app's status, as a status subresource: the rest of
// app is ignored; a stale resourceVersion is a conflict.
func (c webAppClient) UpdateStatus(_ context.Context, app *WebApp, _ metav1.UpdateOptions) (*WebApp, error) {
	w := c.apps
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls["update/status"]++
	stored, ok := w.items[reconcile.OwnerKey(c.namespace, app.Name)]
	if !ok {
		return nil, apierrors.NewNotFound(webAppResource, app.Name)
	}
	if w.failUpdates > 0 {
		w.failUpdates--
		return nil, apierrors.NewConflict(webAppResource, app.Name, fmt.Errorf("injected conflict"))
	}
	if app.ResourceVersion != stored.ResourceVersion {
		return nil, apierrors.NewConflict(webAppResource, app.Name, fmt.Errorf("the object has been modified"))
	}
	next := stored.DeepCopyObject().(*WebApp)
	next.Status = app.Status
	w.source.Modify(next)
	w.items[reconcile.OwnerKey(c.namespace, app.Name)] = next
	return next.DeepCopyObject().(*WebApp), nil
}
