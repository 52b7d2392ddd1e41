package election

import (
	"context"
	"errors"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// watchReleases watches the one Lease of f (a list and watch with a field
// selector on its name, through f.Leases) until ctx is done, and sends on
// released, without blocking, each time it sees the Lease released: its
// holder identity empty, which is what a leader stopping with
// ReleaseOnCancel writes. A deleted Lease is not a release: the leader may
// still be running and recreates it at its next renewal, so a standby that
// jumped at a deletion could lead beside it; client-go's own retry handles
// that case as upstream does.
func (f *Flags) watchReleases(ctx context.Context, logger klog.Logger, released chan<- struct{}) {
	leases := f.Leases.Leases(f.Namespace)
	byName := fields.OneTermEqualSelector("metadata.name", f.Name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = byName
			return leases.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.FieldSelector = byName
			return leases.Watch(ctx, opts)
		},
	}
	seen := func(obj any) {
		lease, ok := obj.(*coordinationv1.Lease)
		if !ok || lease.Name != f.Name {
			return
		}
		if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
			return
		}
		select {
		case released <- struct{}{}:
		default: // one pending signal is enough
		}
	}
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		Logger: &logger,
		// A client that cannot stream a watch list (client-go's fake
		// clientset) says so through f.Leases; the reflector then lists.
		ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, f.Leases),
		ObjectType:    &coordinationv1.Lease{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    seen,
			UpdateFunc: func(_, obj any) { seen(obj) },
		},
	})
	informer.RunWithContext(ctx)
}

// errRetired refuses a write of an elector that [Flags.Run] has stopped to
// start a fresh one.
var errRetired = errors.New("election: this elector was stopped for a fresh one")

// attempt is the lock one elector of [Flags.Run] uses: the shared
// fencing.Lock, plus whether this elector acquired the lease and whether
// Run retired it. The two exclude each other: retire refuses once a write
// in this replica's name has succeeded, and a retired attempt writes
// nothing, so an elector is never stopped after it acquired, and never
// acquires after it was stopped.
type attempt struct {
	*fencing.Lock

	mu       sync.Mutex // held across each write, so retire waits for it
	acquired bool
	retired  bool
}

func (a *attempt) Create(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return a.write(ctx, rec, a.Lock.Create)
}

func (a *attempt) Update(ctx context.Context, rec resourcelock.LeaderElectionRecord) error {
	return a.write(ctx, rec, a.Lock.Update)
}

func (a *attempt) write(ctx context.Context, rec resourcelock.LeaderElectionRecord, fn func(context.Context, resourcelock.LeaderElectionRecord) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.retired {
		return errRetired
	}
	err := fn(ctx, rec)
	if err == nil && rec.HolderIdentity == a.Identity() {
		a.acquired = true
	}
	return err
}

// retire stops this attempt from acquiring the lease; it reports false,
// and retires nothing, when the attempt already acquired it.
func (a *attempt) retire() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acquired {
		return false
	}
	a.retired = true
	return true
}

// won reports whether this attempt acquired the lease.
func (a *attempt) won() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.acquired
}
