package ctrlruntime

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// productionStatusInterval is the Config.StatusInterval of the
// [Production] profile: the interval docs/compare.md measured as
// `-status-interval=3s`.
const productionStatusInterval = 3 * time.Second

// Production is the configuration reconcilekit recommends for a
// controller-runtime controller in production, as one value; the zero
// ConfigOptions stay upstream's behaviour. Build it with [NewProduction]
// from the labels stamped on every pod the controller creates, then use
// it twice, before and after the manager is built:
//
//	prod, err := ctrlruntime.NewProduction(map[string]string{"example.com/managed-by": "webapp"})
//	opts.Cache, err = prod.CacheOptions(opts.Cache) // the manager's options, before ctrl.NewManager
//	cfg, err := ctrlruntime.NewConfig[*v1.WebApp](mgr, ctrlruntime.ConfigOptions{Production: prod})
//
// It turns on, each measured in docs/choosing.md:
//   - an owned-only pod cache: the stamp on every created pod, the manager's
//     pod cache restricted to stamped pods that have not finished
//     ([OwnedPods], docs/rules.md );
//   - lean pods: [LeanPods] on that cache;
//   - exact expectations (Config.Expectations.Exact, which the consistency
//     gate's versions feed) and the gate itself, on by default;
//   - status coalescing: Config.StatusInterval of 3 seconds;
//   - one SuccessfulCreate event per slow-start batch
//     (ConfigOptions.EventPerBatch).
//
// NewConfig refuses it, with a message, where it cannot be honoured: with
// ConfigOptions.NoCacheVersions, with ConfigOptions.OwnedPods other than
// the profile's own, and on client-go before v0.36 or with its AtomicFIFO
// feature gate off, where the informer stores track no resourceVersion
// (exact expectations would silently fall back to the TTL). The fields NewConfig sets (Expectations.Exact, StatusInterval)
// can still be changed on the Config it returns. Two things stay the
// caller's: the pods' stamp must not be a key the owners' selectors use,
// and nothing else may read pods through the same manager cache expecting
// whole pods. The zero Production turns nothing on. A Production is
// immutable and safe for concurrent use.
type Production struct {
	owned OwnedPods
}

// NewProduction returns the [Production] profile whose created pods carry
// stamp (copied), a valid, non-empty label set.
func NewProduction(stamp map[string]string) (Production, error) {
	if len(stamp) == 0 {
		return Production{}, errors.New("ctrlruntime: NewProduction: no stamp: the owned-only pod cache needs a label carried by every pod the controller creates, e.g. {\"example.com/managed-by\": \"webapp\"}")
	}
	owned, err := NewOwnedPods(stamp, true)
	if err != nil {
		return Production{}, fmt.Errorf("ctrlruntime: NewProduction: %w", err)
	}
	return Production{owned: owned}, nil
}

// CacheOptions returns opts, a manager's cache options, with the pod cache
// of the profile: restricted to stamped, unfinished pods
// ([OwnedPods.CacheOptions], whose refusals it keeps) and reduced by
// [LeanPods], after any Transform opts already has for pods. opts itself is
// not modified. The zero Production returns opts as they are.
func (p Production) CacheOptions(opts cache.Options) (cache.Options, error) {
	if p.isZero() {
		return opts, nil
	}
	out, err := p.owned.CacheOptions(opts)
	if err != nil {
		return cache.Options{}, err
	}
	for obj, by := range out.ByObject {
		if _, ok := obj.(*corev1.Pod); !ok {
			continue
		}
		by.Transform = leanAfter(by.Transform)
		out.ByObject[obj] = by
	}
	return out, nil
}

// leanAfter returns a transform that applies prev (if any), then LeanPods.
func leanAfter(prev toolscache.TransformFunc) toolscache.TransformFunc {
	if prev == nil {
		return LeanPods
	}
	return func(obj any) (any, error) {
		obj, err := prev(obj)
		if err != nil {
			return nil, err
		}
		return LeanPods(obj)
	}
}

// isZero reports whether p is the zero Production (a shard restriction
// alone turns nothing on).
func (p Production) isZero() bool {
	return p.owned.owned.Stamp == nil && !p.owned.owned.DropFinished
}

// apply resolves opts' Production into the options it implies (the stamp,
// EventPerBatch), or refuses a combination it cannot honour.
func (p Production) apply(opts ConfigOptions) (ConfigOptions, error) {
	if p.isZero() {
		return opts, nil
	}
	if opts.NoCacheVersions {
		return opts, errors.New("ctrlruntime: NewConfig: ConfigOptions.Production with NoCacheVersions: the profile's exact expectations need the caches' versions; " +
			"drop NoCacheVersions (build the manager's cache over all namespaces) or the profile")
	}
	if !reflect.DeepEqual(opts.OwnedPods, OwnedPods{}) && !sameOwned(opts.OwnedPods, p.owned) {
		return opts, errors.New("ctrlruntime: NewConfig: ConfigOptions.OwnedPods differs from ConfigOptions.Production's stamp: set the stamp once, in NewProduction, and leave OwnedPods zero")
	}
	opts.OwnedPods = p.owned
	opts.EventPerBatch = true
	return opts, nil
}

// tune sets cfg's fields the profile turns on, once NewConfig has filled
// the Cluster; informers are the manager cache's, whose pod store must
// track its resourceVersion.
func tune[T reconcile.Object](p Production, cfg *reconcile.Config[T], informers cache.Informers) error {
	if p.isZero() {
		return nil
	}
	pods, err := informerOf(informers, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("ctrlruntime: NewConfig: ConfigOptions.Production: %w", err)
	}
	if err := storeversion.ErrUntracked(pods.store); err != nil {
		return fmt.Errorf("ctrlruntime: NewConfig: %w", err)
	}
	cfg.Expectations.Exact = true
	cfg.StatusInterval = productionStatusInterval
	return nil
}
