package clientgo

import (
	"context"
	"fmt"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/internal/podops"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Kind is an owner kind as [NewConfig] reads and writes it: a
// ReplicaSet, or a custom resource with a generated clientset and
// informers. Every field is required; the zero value is refused. A Kind
// is read once by NewConfig.
type Kind[T reconcile.Object] struct {
	// GroupVersionKind is written into the controller ownerRef of every
	// pod created and adopted, e.g. v1.SchemeGroupVersion.WithKind("WebApp").
	GroupVersionKind schema.GroupVersionKind
	// Resource names the owners in NotFound errors and in the consistency
	// gate's record of status writes, e.g. v1.Resource("webapps").
	Resource schema.GroupResource
	// Informer is the owners' informer, e.g.
	// factory.Example().V1().WebApps().Informer() of a generated informer
	// factory; the caller starts it.
	Informer cache.SharedIndexInformer
	// Client returns the owners' typed client in a namespace ([OwnerClient]:
	// the live read before adoption and the status write), e.g.
	// func(ns string) clientgo.OwnerClient[*v1.WebApp] { return clientset.ExampleV1().WebApps(ns) }.
	Client func(namespace string) OwnerClient[T]
}

// ConfigOptions tune [NewConfig]. The zero value is upstream's behaviour:
// one event per pod, no events recorded without a Recorder, the
// consistency gate on. [Production] is the combination we recommend.
type ConfigOptions struct {
	// Production turns on the recommended profile ([Production]): the
	// owned-only, lean pod informer of its stamp (the pods' factory must
	// be the same value's [Production.Factory]), exact expectations,
	// status coalescing and one event per batch. The zero Production turns
	// nothing on.
	Production Production
	// EventPerBatch records one SuccessfulCreate event per slow-start
	// batch instead of one per pod ([PodControl].EventPerBatch).
	EventPerBatch bool
	// Recorder records the controller's events: the pod control's (e.g.
	// SuccessfulCreate) and the Warning when the creation breaker stops an
	// owner's creates. Nil, the default, records none. It must be safe for
	// concurrent use.
	Recorder record.EventRecorder
}

// NewConfig returns a [reconcile.Config] for the owners of kind with Kind
// and Cluster filled from client-go: Owners ([Owners] over
// kind.Informer's indexer, GetLive through kind.Client), Pods (over the pod
// informer of pods, a shared informer factory), PodClient ([PodControl]
// over client, recording with opts.Recorder), StatusWriter ([StatusWriter]
// over kind.Client, upstream's one retry, R-8.7), Resource, CacheVersions
// and CachesSynced (the two informers' store versions and sync state,
// [CacheVersions], [CachesSynced], R-14.8), and Hooks.CreationsStopped,
// which records a Warning event on an owner whose creates the creation
// breaker stopped. The caller sets Describe and Status
// (reconcile.ReplicaSets() has upstream's for ReplicaSets) and any
// tuning, then calls [reconcile.NewController] and [Register], and starts
// both factories. The consistency gate is on, as in upstream v1.37.
//
// It is the one way this package builds a Cluster; [ReplicaSets] is
// NewConfig for apps/v1 ReplicaSets.
//
// When pods was made by [OwnedPods.Factory] or [Production.Factory], the
// PodControl stamps that value's labels on every pod it creates: the pod
// informer and the stamp come from one value and cannot disagree (unlike
// package ctrlruntime, whose manager cannot say how its cache was built,
// so its ConfigOptions take the OwnedPods again). Any other factory
// selects every pod and nothing is stamped, as upstream.
//
// A nil client or pods, a Kind with a field missing, or a T that is not a
// pointer to a struct with a Status field ([StatusWriter]) is an error; so is
// opts.Production where it cannot be honoured ([Production] says when).
func NewConfig[T reconcile.Object](client kubernetes.Interface, pods informers.SharedInformerFactory, kind Kind[T], opts ConfigOptions) (reconcile.Config[T], error) {
	if err := validate(client, pods, kind); err != nil {
		return reconcile.Config[T]{}, err
	}
	if err := opts.Production.check(pods); err != nil {
		return reconcile.Config[T]{}, err
	}
	if !opts.Production.isZero() {
		opts.EventPerBatch = true
	}
	cfg := build(client, pods, kind, opts)
	tune(opts.Production, &cfg)
	return cfg, nil
}

// validate names the first missing argument of NewConfig.
func validate[T reconcile.Object](client kubernetes.Interface, pods informers.SharedInformerFactory, kind Kind[T]) error {
	var missing string
	switch {
	case client == nil:
		missing = "a nil client"
	case pods == nil:
		missing = "a nil pod informer factory"
	case kind.GroupVersionKind.Kind == "" || kind.GroupVersionKind.Version == "":
		missing = "no Kind.GroupVersionKind (the owners' group, version and kind, for the pods' ownerRefs)"
	case kind.Resource.Resource == "":
		missing = "no Kind.Resource (the owners' group and resource, e.g. apps, replicasets)"
	case kind.Informer == nil:
		missing = "no Kind.Informer (the owners' informer)"
	case kind.Client == nil:
		missing = "no Kind.Client (the owners' typed client, for the live read and the status write)"
	case !hasStatusField[T]():
		missing = fmt.Sprintf("an owner type %v without a Status field (StatusWriter's retry carries the status onto a fresh object)", reflect.TypeFor[T]())
	default:
		return nil
	}
	return fmt.Errorf("clientgo: NewConfig: %s", missing)
}

// build fills a Config from arguments validate accepted (ReplicaSets
// passes its own); it does not read opts.Production.
func build[T reconcile.Object](client kubernetes.Interface, pods informers.SharedInformerFactory, kind Kind[T], opts ConfigOptions) reconcile.Config[T] {
	owned, _ := ownedOf(pods)
	podInf, ownerInf := pods.Core().V1().Pods().Informer(), kind.Informer
	ownerClient := kind.Client
	cfg := reconcile.Config[T]{
		Kind: kind.GroupVersionKind,
		Cluster: reconcile.Cluster[T]{
			Owners: Owners[T]{
				Indexer:  ownerInf.GetIndexer(),
				Resource: kind.Resource,
				Live: func(ctx context.Context, namespace, name string) (T, error) {
					return ownerClient(namespace).Get(ctx, name, metav1.GetOptions{})
				},
			},
			Pods:          Pods{Indexer: podInf.GetIndexer()},
			PodClient:     PodControl{Client: client, Recorder: opts.Recorder, Labels: owned.Labels(), EventPerBatch: opts.EventPerBatch},
			StatusWriter:  StatusWriter[T]{Client: ownerClient},
			Resource:      kind.Resource,
			CacheVersions: CacheVersions(podInf, ownerInf),
			CachesSynced:  CachesSynced(podInf, ownerInf),
		},
	}
	cfg.Hooks = podops.StoppedEvents(cfg.Hooks, opts.Recorder, cfg.Kind)
	return cfg
}
