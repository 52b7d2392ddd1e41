package ctrlruntime

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
)

// managerRecorder is the record.EventRecorder [NewConfig] gives the
// [PodControl]: core/v1 Events, as upstream's ReplicaSet controller records
// them, sent through the manager's rest.Config by a broadcaster that runs
// while the manager does (it is a manager Runnable, started once elected).
// Events recorded while it is not running are dropped, as a stopped
// broadcaster drops them. It builds no client and starts no goroutine
// before Start. It is safe for concurrent use.
//
// Why not the manager's own recorder: controller-runtime v0.21 and v0.22
// hand out a record.EventRecorder only (GetEventRecorderFor), which later
// releases deprecate for GetEventRecorder (events.k8s.io); one broadcaster
// of ours works the same on every supported release.
type managerRecorder struct {
	config     *rest.Config
	httpClient *http.Client
	scheme     *runtime.Scheme
	component  string

	mu  sync.Mutex
	rec record.EventRecorder // nil while not running
}

var _ record.EventRecorder = (*managerRecorder)(nil)

func (r *managerRecorder) current() record.EventRecorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

func (r *managerRecorder) set(rec record.EventRecorder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec = rec
}

// Event implements record.EventRecorder.
func (r *managerRecorder) Event(obj runtime.Object, eventtype, reason, message string) {
	if rec := r.current(); rec != nil {
		rec.Event(obj, eventtype, reason, message)
	}
}

// Eventf implements record.EventRecorder.
func (r *managerRecorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	if rec := r.current(); rec != nil {
		rec.Eventf(obj, eventtype, reason, messageFmt, args...)
	}
}

// AnnotatedEventf implements record.EventRecorder.
func (r *managerRecorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	if rec := r.current(); rec != nil {
		rec.AnnotatedEventf(obj, annotations, eventtype, reason, messageFmt, args...)
	}
}

// Start runs the broadcaster until ctx is done (manager.Runnable).
func (r *managerRecorder) Start(ctx context.Context) error {
	stop, err := r.run(ctx)
	if err != nil {
		return err
	}
	<-ctx.Done()
	stop()
	return nil
}

// run starts the broadcaster and returns the func that stops it.
func (r *managerRecorder) run(ctx context.Context) (stop func(), err error) {
	cs, err := kubernetes.NewForConfigAndClient(r.config, r.httpClient)
	if err != nil {
		return nil, fmt.Errorf("ctrlruntime: the event recorder's client: %w", err)
	}
	b := record.NewBroadcaster(record.WithContext(ctx))
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: cs.CoreV1().Events("")})
	r.set(b.NewRecorder(r.scheme, corev1.EventSource{Component: r.component}))
	return func() {
		r.set(nil)
		b.Shutdown()
	}, nil
}
