package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/slowstart"
	"github.com/reconcilekit/reconcilekit/status"
)

// Config configures a [Controller] for owners of type T. Kind, Describe,
// Status and Cluster are required (NewController names the first part
// missing): [ReplicaSets] fills the first three for apps/v1 ReplicaSets, and
// the adapters fill Cluster (clientgo.NewConfig, ctrlruntime.NewConfig).
// Every other field is optional and its zero value is upstream's behaviour;
// a combination of opt-ins that cannot work together is rejected by
// NewController, named.
//
// The consistency gate of upstream v1.37 is on by default, and
// runs as soon as Cluster.CacheVersions supply the informers' versions: a
// sync is deferred while a cache is older than the controller's own last
// write for the owner. DisableConsistencyGate turns it off.
type Config[T Object] struct {
	// Kind is the owners' group, version and kind: written into the
	// controller ownerRef of created and adopted pods, and compared (the
	// kind only, as upstream, R-12.7) with the controller ownerRef of pods
	// in events. There is no default.
	Kind schema.GroupVersionKind
	// Describe returns the owner facts the Controller acts on: replicas,
	// template, selector, minReadySeconds ([Owner]). Owner.Object and
	// Owner.Kind may be left zero (the Controller fills in the object and
	// Kind); Owner.Key must be empty or OwnerKey(namespace, name). An
	// error makes Sync fail with [ErrTerminal]. It must not modify the
	// owner and must be safe for concurrent use.
	Describe func(owner T) (Owner, error)
	// Status computes the owner's status from what the sync saw and did
	// (a pure function, [StatusFunc]): a copy of the owner carrying the new
	// status, or false when it is already right. [ReplicaSets] sets
	// upstream's ([ReplicaSetStatus]).
	Status StatusFunc[T]
	// Cluster is how the Controller reads and writes the cluster: owner
	// and pod caches, the pod client, the status writer and the caches'
	// versions. The adapters fill it.
	Cluster Cluster[T]

	// Related returns the pods whose nodes count towards the deletion rank
	// of owner's pods. It is called only when pods must be deleted;
	// an error is reported in SyncResult.RelatedErr and the deletion uses
	// zero ranks, as upstream. Nil means upstream's rule: the pods, matched
	// by selector, of every owner of the namespace whose controller
	// ownerRef has the same UID as owner's, de-duplicated by UID; none for
	// an owner without a controller.
	Related func(ctx context.Context, owner T) ([]*corev1.Pod, error)
	// Clock is the time source of the Controller, its expectations and the
	// deletion ranking. Nil: real time.
	Clock Clock
	// BurstReplicas caps the creates, and separately the deletes, of one
	// sync. <= 0 means DefaultBurstReplicas (500).
	BurstReplicas int
	// Ranking configures the choice of pods to delete. The zero value is
	// upstream's ranking.
	Ranking RankingOptions
	// SlowStart configures the create batches. The zero value is
	// upstream's: a first batch of 1, doubling, no cap.
	SlowStart slowstart.Options
	// Expectations configures the Controller's expectations Tracker
	// (read it back with [Controller.Tracker]). The zero value is
	// upstream's: counted creations, one five-minute timeout per round.
	Expectations ExpectationOptions
	// DisableConsistencyGate turns the consistency gate off (R-10.9; read
	// the gate with [Controller.Gate]), as upstream's feature gate
	// StaleControllerConsistencyReplicaSet=false does: Sync never defers
	// for a cache behind the controller's own writes. The writes are still
	// recorded, for Expectations.Exact. The zero value is upstream v1.37's:
	// the gate runs whenever Cluster.CacheVersions supply versions. It does
	// not turn off the unsynced-cache guard (Cluster.CachesSynced).
	DisableConsistencyGate bool
	// StatusInterval, beyond upstream, coalesces the status writes of an
	// owner that is still converging: a status change is written at most
	// once per StatusInterval, and the sync that skips a write asks to be
	// requeued when the interval ends (SyncResult.StatusCoalesced), so the
	// latest status is always written. The first write for an owner, the
	// first after a spec change, a write that carries a manage error and
	// the converged status are never delayed. Zero or negative: every
	// change is written at once, as upstream (docs/rules.md, R-13.3).
	StatusInterval time.Duration
	// Hooks receives every notification of the Controller, for metrics
	// and events: the manage step's, the expectations' and the consistency
	// gate's. The zero Hooks calls nothing.
	Hooks Hooks
	// Fence, when set, answers "may this replica still write?" (e.g. does
	// it still hold its leader lease): Sync calls it immediately before
	// each write (adoption and release patches, pod creates and deletes,
	// the status write), and a non-nil error refuses that write and every
	// later write of the sync; Sync then returns an error for which
	// errors.Is(err, ErrFenced) and errors.Is(err, reason) hold. Reads are
	// never fenced. It must be safe for concurrent use and fast. The
	// adapters' fencing package fills it from client-go's leader election.
	// Nil never refuses: upstream's behaviour. Beyond upstream
	// (docs/rules.md, R-13.1; the details are [Manager].Fence's).
	Fence func() error

	// trackCreations and nameGenerator turn on tracked creations without
	// Exact and name them: reachable from this package's tests only
	// (export_test.go), for fakes that ignore GenerateName and for
	// deterministic names.
	trackCreations bool
	nameGenerator  func(prefix string) string
}

// RankingOptions configures how a [Controller] or a [Manager] chooses the
// pods to delete ([podrank.ForDeletion]); the ranking's time is the Clock's.
// The zero value is upstream's ranking: deletion cost and logarithmic
// scale-down on.
type RankingOptions struct {
	// DisableDeletionCost ignores the controller.kubernetes.io/pod-deletion-cost
	// annotation, as upstream's PodDeletionCost feature gate off.
	DisableDeletionCost bool
	// DisableLogarithmicScaleDown compares creation times exactly instead
	// of in logarithmic buckets, as upstream's LogarithmicScaleDown feature
	// gate off.
	DisableLogarithmicScaleDown bool
}

// podrank returns the podrank.Options of o at now.
func (o RankingOptions) podrank(now time.Time) podrank.Options {
	return podrank.Options{
		Now:                         now,
		DisableDeletionCost:         o.DisableDeletionCost,
		DisableLogarithmicScaleDown: o.DisableLogarithmicScaleDown,
	}
}

// ExpectationOptions configures a [Controller]'s expectations Tracker. The
// Tracker's clock is Config.Clock and its evidence the Controller's own
// consistency gate. The zero value is upstream's: counted creations, one
// timeout of expectations.DefaultTTL per round. A round stops
// blocking after the TTL, or, with Exact, when the evidence says so (or
// after the SafetyLimit): one answer for creations and deletions alike.
type ExpectationOptions struct {
	// TTL is how long a round of pending expectations blocks before it
	// counts as satisfied. 0 means expectations.DefaultTTL (5 minutes);
	// NewController rejects a negative TTL and one above an hour.
	TTL time.Duration
	// Exact turns on reconcilekit's exact expectations (beyond upstream):
	// creations tracked by pod key, a failed create's name retried first,
	// and a round decided from the pod cache's version
	// (expectations.EvidenceFirst) instead of waiting out the TTL. It needs
	// Cluster.CacheVersions.Pods (the adapters set it). See
	// docs/beyond-upstream.md.
	Exact bool
	// SafetyLimit bounds, under Exact, how long a round waits for a pod
	// cache that is behind the controller's own writes
	// (expectations.Options.SafetyLimit). 0 means
	// expectations.DefaultSafetyLimit; NewController rejects a negative
	// SafetyLimit and one above an hour.
	SafetyLimit time.Duration
}

// replicaSetsResource is the group/resource of apps/v1 ReplicaSets.
var replicaSetsResource = schema.GroupResource{Group: "apps", Resource: "replicasets"}

// ReplicaSets returns a Config for apps/v1 ReplicaSets with Kind, Describe
// ([ReplicaSetOwner]), Status (upstream's, [ReplicaSetStatus]) and
// Cluster.Resource filled in; the caller (or an adapter) sets the rest of
// Cluster.
func ReplicaSets() Config[*appsv1.ReplicaSet] {
	return Config[*appsv1.ReplicaSet]{
		Kind:    replicaSetKind,
		Cluster: Cluster[*appsv1.ReplicaSet]{Resource: replicaSetsResource},
		Status:  ReplicaSetStatus(status.Options{}),
		Describe: func(rs *appsv1.ReplicaSet) (Owner, error) {
			if rs == nil {
				return Owner{}, errors.New("reconcile: nil ReplicaSet")
			}
			return ReplicaSetOwner(rs), nil
		},
	}
}

// validate names the first required field that is missing.
func (c *Config[T]) validate() error {
	var missing, hint string
	switch {
	case c.Kind.Kind == "" || c.Kind.Version == "":
		missing, hint = "Kind", " (the owners' group, version and kind; there is no default: use ReplicaSets() for apps/v1 ReplicaSets)"
	case c.Describe == nil:
		missing = "Describe"
	case c.Status == nil:
		missing = "Status"
	case isNilValue(c.Cluster.Owners):
		missing, hint = "Cluster.Owners", clusterHint
	case isNilValue(c.Cluster.Pods):
		missing, hint = "Cluster.Pods", clusterHint
	case isNilValue(c.Cluster.PodClient):
		missing, hint = "Cluster.PodClient", clusterHint
	case isNilValue(c.Cluster.StatusWriter):
		missing, hint = "Cluster.StatusWriter", clusterHint
	case c.Cluster.CachesSynced == nil:
		missing, hint = "Cluster.CachesSynced", " (the unsynced-cache guard: without it, a sync before the pod cache has listed would create every pod again; the adapters set it, and a cache that is complete from the start answers true)"
	default:
		if err := c.validateCaches(); err != nil {
			return err
		}
		return c.validateOptIns()
	}
	return fmt.Errorf("reconcile: NewController: Config.%s is required%s", missing, hint)
}

// clusterHint tells where a Cluster usually comes from.
const clusterHint = " (the adapters fill Config.Cluster: clientgo.NewConfig, ctrlruntime.NewConfig)"

// validateCaches checks that the cache versions can be told apart.
func (c *Config[T]) validateCaches() error {
	cl := c.Cluster
	switch {
	case cl.CacheVersions.Owners != nil && cl.Resource.Resource == "":
		return errors.New("reconcile: NewController: Config.Cluster.CacheVersions.Owners is set without Config.Cluster.Resource (the owners' group and resource, e.g. apps/replicasets)")
	case cl.CacheVersions.Owners != nil && cl.Resource == expectations.PodsResource:
		return errors.New("reconcile: NewController: Config.Cluster.Resource is pods; the owners' writes must be told apart from the pods'")
	}
	return nil
}

// validateOptIns rejects the combinations of opt-ins that cannot work,
// naming them.
func (c *Config[T]) validateOptIns() error {
	if c.Expectations.Exact && c.Cluster.CacheVersions.Pods == nil {
		return errors.New("reconcile: NewController: Config.Expectations.Exact without Config.Cluster.CacheVersions.Pods: the evidence is the pod cache's version " +
			"(the adapters set it; clientgo.CacheVersions or ctrlruntime.CacheVersions otherwise)")
	}
	return c.Expectations.validate()
}

// maxExpiry is the longest duration [ExpectationOptions] accepts for TTL
// and SafetyLimit: an owner whose pod event was lost waits at most that
// long before its next round. Upstream's one timeout is 5 minutes.
const maxExpiry = time.Hour

// validate rejects the durations that would stall an owner or never let
// its creations be seen, saying what to use instead.
func (e *ExpectationOptions) validate() error {
	durations := []struct {
		name string
		d    time.Duration
		zero string
	}{
		{"TTL", e.TTL, "expectations.DefaultTTL, 5m"},
		{"SafetyLimit", e.SafetyLimit, "expectations.DefaultSafetyLimit"},
	}
	for _, f := range durations {
		switch {
		case f.d < 0:
			return fmt.Errorf("reconcile: NewController: Config.Expectations.%s is %v: a pending expectation that never waits lets the next sync create again before the cache shows the pods; use a positive duration, or 0 for %s", f.name, f.d, f.zero)
		case f.d > maxExpiry:
			return fmt.Errorf("reconcile: NewController: Config.Expectations.%s is %v, above the limit of %v: one lost pod event would stall the owner that long; use at most %v, or 0 for %s", f.name, f.d, maxExpiry, maxExpiry, f.zero)
		}
	}
	return nil
}

// trackerOptions returns the expectations.Options of the Controller's
// Tracker, on gate.
func (c *Config[T]) trackerOptions(gate *expectations.Gate) expectations.Options {
	e := c.Expectations
	opts := expectations.Options{
		TTL:         e.TTL,
		Clock:       c.Clock,
		SafetyLimit: e.SafetyLimit,
		Gate:        gate,
		Hooks:       expectations.Hooks{Resolved: c.Hooks.ExpectationsResolved},
	}
	if e.Exact {
		opts.Policy = expectations.EvidenceFirst
	}
	return opts
}

// caches returns the Gate's Caches for c, built from Cluster.CacheVersions
// (nil when it supplies nothing).
func (c *Config[T]) caches() map[schema.GroupResource]func() string {
	cv := c.Cluster.CacheVersions
	if cv.Pods == nil && cv.Owners == nil {
		return nil
	}
	m := make(map[schema.GroupResource]func() string, 2)
	if cv.Pods != nil {
		m[expectations.PodsResource] = cv.Pods
	}
	if cv.Owners != nil {
		m[c.Cluster.Resource] = cv.Owners
	}
	return m
}
