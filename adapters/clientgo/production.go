package clientgo

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/adapters/internal/storeversion"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// productionStatusInterval is the Config.StatusInterval of the
// [Production] profile: the interval docs/compare.md measured as
// `-status-interval=3s`.
const productionStatusInterval = 3 * time.Second

// Production is the configuration reconcilekit recommends for a client-go
// controller in production, as one value; the zero ConfigOptions stay
// upstream's behaviour. Build it with [NewProduction] from the labels
// stamped on every pod the controller creates, then use it twice, for
// the pods' informer factory and for [NewConfig]:
//
//	prod, err := clientgo.NewProduction(map[string]string{"example.com/managed-by": "webapp"})
//	pods := prod.Factory(client, 0) // the pods' own factory; the owners keep theirs
//	cfg, err := clientgo.NewConfig(client, pods, kind, clientgo.ConfigOptions{Production: prod})
//
// It turns on what package ctrlruntime's Production does, each measured
// in docs/choosing.md:
//   - an owned-only pod informer: the stamp on every created pod, the pod
//     informer restricted to stamped pods that have not finished
//     ([OwnedPods], docs/rules.md );
//   - lean pods: [LeanPods] on that informer;
//   - exact expectations (Config.Expectations.Exact, which the consistency
//     gate's versions feed) and the gate itself, on by default;
//   - status coalescing: Config.StatusInterval of 3 seconds;
//   - one SuccessfulCreate event per slow-start batch
//     (ConfigOptions.EventPerBatch).
//
// NewConfig refuses it, with a message, where it cannot be honoured: with
// a pod informer factory other than this value's Factory (its pods would
// not be the profile's), and on client-go before v0.36, or with its
// AtomicFIFO feature gate off, where the informer stores track no
// resourceVersion (exact expectations would silently fall back to the
// TTL). The fields NewConfig sets (Expectations.Exact,
// StatusInterval) can still be changed on the Config it returns. Two
// things stay the caller's: the pods' stamp must not be a key the owners'
// selectors use, and the pods' factory serves the pods alone. The zero
// Production turns nothing on. A Production is immutable and safe for
// concurrent use.
type Production struct {
	owned OwnedPods
}

// NewProduction returns the [Production] profile whose created pods carry
// stamp (copied), a valid, non-empty label set.
func NewProduction(stamp map[string]string) (Production, error) {
	if len(stamp) == 0 {
		return Production{}, errors.New("clientgo: NewProduction: no stamp: the owned-only pod informer needs a label carried by every pod the controller creates, e.g. {\"example.com/managed-by\": \"webapp\"}")
	}
	owned, err := NewOwnedPods(stamp, true)
	if err != nil {
		return Production{}, fmt.Errorf("clientgo: NewProduction: %w", err)
	}
	return Production{owned: owned}, nil
}

// Factory returns a new informer factory for the pods of the profile,
// over client, with resync and options (e.g. informers.WithNamespace):
// its informers list and watch only stamped pods that have not finished
// ([OwnedPods.Factory]) and store them through [LeanPods], which replaces
// any informers.WithTransform among options. Use it for the pods alone.
// The zero Production returns a factory that selects every object, as
// upstream, which NewConfig does not take as the profile's.
func (p Production) Factory(client kubernetes.Interface, resync time.Duration, options ...informers.SharedInformerOption) informers.SharedInformerFactory {
	if p.isZero() {
		return informers.NewSharedInformerFactoryWithOptions(client, resync, options...)
	}
	return p.owned.factory(client, resync, true, options)
}

// isZero reports whether p is the zero Production.
func (p Production) isZero() bool {
	return p.owned.owned.Stamp == nil && !p.owned.owned.DropFinished
}

// check refuses pods for p where the profile cannot be honoured: a factory
// that is not p's Factory, a client-go whose stores track no version. The
// zero Production accepts anything.
func (p Production) check(pods informers.SharedInformerFactory) error {
	if p.isZero() {
		return nil
	}
	owned, lean := ownedOf(pods)
	if !lean || !sameOwned(owned, p.owned) {
		return errors.New("clientgo: NewConfig: ConfigOptions.Production needs the pods' informer factory from the same Production's Factory " +
			"(stamped, unfinished, lean pods); this one is another factory")
	}
	if err := storeversion.ErrUntracked(pods.Core().V1().Pods().Informer().GetStore()); err != nil {
		return fmt.Errorf("clientgo: NewConfig: %w", err)
	}
	return nil
}

// tune sets cfg's fields the profile turns on, once build has filled it
// with opts whose EventPerBatch the profile set.
func tune[T reconcile.Object](p Production, cfg *reconcile.Config[T]) {
	if p.isZero() {
		return
	}
	cfg.Expectations.Exact = true
	cfg.StatusInterval = productionStatusInterval
}

// sameOwned reports whether a and b stamp and select the same pods.
func sameOwned(a, b OwnedPods) bool {
	return maps.Equal(a.owned.Stamp, b.owned.Stamp) && a.owned.DropFinished == b.owned.DropFinished && a.shard == b.shard
}
