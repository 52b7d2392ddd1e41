package cluster

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// Clock is the time source of the simulated cluster: the library's one
// clock interface, [expectations.Clock]. *fakeclock.Clock satisfies it.
type Clock = expectations.Clock

// podsResource is the group/resource the API's errors name.
var podsResource = schema.GroupResource{Resource: "pods"}

// nameAlphabet is the API server's alphabet for generateName suffixes (no
// vowels, no confusable characters).
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateNameTries is how often the API retries a generated name that
// clashes before it gives up with a GenerateNameConflict error.
const generateNameTries = 8

// EventType is the kind of change a watch event reports.
type EventType int

// The three kinds of watch event.
const (
	Added EventType = iota + 1
	Modified
	Deleted
)

// String returns "ADDED", "MODIFIED" or "DELETED", like the watch API.
func (e EventType) String() string {
	switch e {
	case Added:
		return "ADDED"
	case Modified:
		return "MODIFIED"
	case Deleted:
		return "DELETED"
	}
	return "EventType(" + strconv.Itoa(int(e)) + ")"
}

// Event is one change the API made, as a watch would report it.
type Event struct {
	Type EventType
	// Pod is the object after the change; for Deleted, its final state.
	// Consumers must treat it as read-only: it is shared.
	Pod *corev1.Pod
	// RV is the resourceVersion of the change (Pod.ResourceVersion).
	RV string
	// At is the virtual time the API made the change.
	At time.Time
}

// Key returns the event's pod key, "namespace/name".
func (e Event) Key() string { return Key(e.Pod) }

// Key returns a pod's "namespace/name" key.
func Key(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// APIOptions configure an [API]. The zero value is usable.
type APIOptions struct {
	// Clock stamps creation and deletion timestamps and events. Nil: a
	// clock that always reads the zero time.
	Clock Clock
	// Seed seeds the generator of generateName suffixes.
	Seed uint64
	// GracefulDeletion makes Delete set a deletionTimestamp (a Modified
	// event) and leave the pod in place until [API.Finalize] removes it
	// (a Deleted event). False: Delete removes the pod at once.
	GracefulDeletion bool
}

// API is an in-memory pod store with API-server semantics for the few
// operations a ReplicaSet controller uses: create (with generateName),
// get, list, update and delete. Every write gets the next integer
// resourceVersion and is reported, in order, to the watchers.
//
// The zero API is not usable; use [NewAPI]. It is safe for concurrent use.
// Watchers are called with the API's lock held, so they must not call back
// into the API.
type API struct {
	opts APIOptions

	mu          sync.Mutex
	rv          int64
	uid         int64
	rng         *rand.Rand
	pods        map[string]*corev1.Pod
	terminating map[string]bool // namespaces being deleted
	watchers    []func(Event)
}

// NewAPI returns an empty API whose resourceVersion is "1".
func NewAPI(opts APIOptions) *API {
	return &API{
		opts:        opts,
		rv:          1,
		rng:         rand.New(rand.NewPCG(opts.Seed, 0x5eed)),
		pods:        map[string]*corev1.Pod{},
		terminating: map[string]bool{},
	}
}

func (a *API) now() time.Time {
	if a.opts.Clock == nil {
		return time.Time{}
	}
	return a.opts.Clock.Now()
}

// Watch registers fn to receive every later event, in resourceVersion order.
func (a *API) Watch(fn func(Event)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watchers = append(a.watchers, fn)
}

// ResourceVersion returns the resourceVersion of the latest write ("1" when
// nothing was written).
func (a *API) ResourceVersion() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strconv.FormatInt(a.rv, 10)
}

// SetNamespaceTerminating marks ns as being deleted (or not): creates in it
// fail with a NamespaceTerminating cause, as the API server's admission does.
func (a *API) SetNamespaceTerminating(ns string, terminating bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.terminating[ns] = terminating
}

// Create stores a copy of pod and returns the stored object. A pod with no
// name gets GenerateName plus five random characters; the API assigns the
// UID, resourceVersion and creation timestamp. Errors: AlreadyExists when the
// name is taken, a NamespaceTerminating StatusError when the namespace is
// being deleted, BadRequest when pod is nil or has neither name nor
// generateName.
func (a *API) Create(pod *corev1.Pod) (*corev1.Pod, error) {
	if pod == nil {
		return nil, apierrors.NewBadRequest("cluster: nil pod")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.terminating[pod.Namespace] {
		return nil, namespaceTerminating(pod.Namespace)
	}
	p := pod.DeepCopy()
	if p.Name == "" {
		if p.GenerateName == "" {
			return nil, apierrors.NewBadRequest("cluster: name or generateName is required")
		}
		for try := 0; ; try++ {
			if try == generateNameTries {
				return nil, apierrors.NewGenerateNameConflict(podsResource, p.GenerateName, 1)
			}
			p.Name = p.GenerateName + a.suffix()
			if _, taken := a.pods[Key(p)]; !taken {
				break
			}
		}
	}
	if _, taken := a.pods[Key(p)]; taken {
		return nil, apierrors.NewAlreadyExists(podsResource, p.Name)
	}
	a.uid++
	p.UID = types.UID(fmt.Sprintf("uid-%06d", a.uid))
	p.CreationTimestamp = metav1.NewTime(a.now())
	p.DeletionTimestamp = nil
	a.pods[Key(p)] = p
	a.emit(Added, p)
	return p.DeepCopy(), nil
}

func (a *API) suffix() string {
	var b [5]byte
	for i := range b {
		b[i] = nameAlphabet[a.rng.IntN(len(nameAlphabet))]
	}
	return string(b[:])
}

// Update replaces the stored pod of the same key with a copy of pod (the
// status too: there is no status subresource) and returns the stored
// object. The resourceVersion of pod is ignored (no optimistic
// concurrency). NotFound when no such pod exists. Identity fields (UID,
// creation and deletion timestamps) cannot be changed.
func (a *API) Update(pod *corev1.Pod) (*corev1.Pod, error) {
	if pod == nil {
		return nil, apierrors.NewBadRequest("cluster: nil pod")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	old, ok := a.pods[Key(pod)]
	if !ok {
		return nil, apierrors.NewNotFound(podsResource, pod.Name)
	}
	p := pod.DeepCopy()
	p.UID, p.CreationTimestamp, p.DeletionTimestamp = old.UID, old.CreationTimestamp, old.DeletionTimestamp
	a.pods[Key(p)] = p
	a.emit(Modified, p)
	return p.DeepCopy(), nil
}

// Delete deletes the pod namespace/name: at once, or, with
// GracefulDeletion, by setting its deletionTimestamp (a second Delete of a
// terminating pod changes nothing). NotFound when no such pod exists.
func (a *API) Delete(namespace, name string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	key := namespace + "/" + name
	p, ok := a.pods[key]
	if !ok {
		return apierrors.NewNotFound(podsResource, name)
	}
	if !a.opts.GracefulDeletion {
		a.remove(key, p)
		return nil
	}
	if p.DeletionTimestamp != nil {
		return nil
	}
	p = p.DeepCopy()
	t := metav1.NewTime(a.now())
	p.DeletionTimestamp = &t
	a.pods[key] = p
	a.emit(Modified, p)
	return nil
}

// Finalize removes every pod that has a deletionTimestamp (what the kubelet
// does once containers stopped) and returns how many it removed, in key
// order.
func (a *API) Finalize() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, key := range a.keys() {
		if p := a.pods[key]; p.DeletionTimestamp != nil {
			a.remove(key, p)
			n++
		}
	}
	return n
}

func (a *API) remove(key string, p *corev1.Pod) {
	delete(a.pods, key)
	// The Deleted event carries the final state with a fresh resourceVersion.
	p = p.DeepCopy()
	a.emit(Deleted, p)
}

// emit stamps p with the next resourceVersion and reports the change.
// Callers hold a.mu and have already stored p (for Added and Modified).
func (a *API) emit(typ EventType, p *corev1.Pod) {
	a.rv++
	p.ResourceVersion = strconv.FormatInt(a.rv, 10)
	ev := Event{Type: typ, Pod: p.DeepCopy(), RV: p.ResourceVersion, At: a.now()}
	for _, w := range a.watchers {
		w(ev)
	}
}

// Get returns a copy of the pod namespace/name.
func (a *API) Get(namespace, name string) (*corev1.Pod, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pods[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

// List returns copies of every stored pod, in key order, and the
// resourceVersion they were read at.
func (a *API) List() ([]*corev1.Pod, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(a.pods))
	for _, key := range a.keys() {
		out = append(out, a.pods[key].DeepCopy())
	}
	return out, strconv.FormatInt(a.rv, 10)
}

// Each calls fn with every stored pod (terminating ones included), in key
// order, without copying them: fn must neither modify nor keep the pod,
// and must not call the API. It is List for a caller that only reads, at
// no copy per pod: the simulations count live pods after every step.
func (a *API) Each(fn func(p *corev1.Pod)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, key := range a.keys() {
		fn(a.pods[key])
	}
}

// Len returns the number of stored pods (terminating ones included).
func (a *API) Len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pods)
}

func (a *API) keys() []string {
	keys := make([]string, 0, len(a.pods))
	for k := range a.pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// namespaceTerminating builds the Forbidden error the API server's
// namespace lifecycle admission returns, with the NamespaceTerminating cause.
func namespaceTerminating(ns string) error {
	err := apierrors.NewForbidden(podsResource, "",
		fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: "namespace " + ns + " is being terminated",
		Field:   "metadata.namespace",
	})
	return err
}
