package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/podrank"
	"github.com/reconcilekit/reconcilekit/status"
)

// SyncResult reports what [Controller.Sync] saw and did. Config.Status
// receives it (StatusWritten, Written and RequeueAfter still zero) to
// compute the status; Sync returns it complete. Its slices are new; the
// pods in them are the caller's, or the [PodClient]'s returns.
type SyncResult struct {
	// Owner is what Config.Describe said about the owner, with Key, Object
	// and Kind filled in.
	Owner Owner
	// Deleting reports that the owner has a deletion timestamp: its pods
	// are counted but neither created, deleted, adopted nor released
	//
	Deleting bool
	// Expectations is the expectations check made before the pods were
	// read: whether the owner was Satisfied, why (e.g. Expired or
	// ResolvedByEvidence), and the pending counts at that moment.
	Expectations expectations.Status
	// Adopted are the orphans adopted in this sync, as the PodClient's PatchPod
	// returned them; Released are the owner's pods released because they
	// stopped matching the selector.
	Adopted, Released []*corev1.Pod
	// Active and Terminating are the owner's claimed pods that are active
	// (R-5.1, adopted orphans included) and terminating (R-5.2, owned and
	// matching only, R-10.5), in listing order; nil when there are none.
	// For a ReplicaSet, pass them to status.Calculate.
	Active, Terminating []*corev1.Pod
	// Diff is len(Active) − Owner.Replicas, the diff a status condition
	// reason is chosen by (R-8.4, status.SetReplicaFailure).
	Diff int
	// Managed reports that the manage step ran: Expectations.Satisfied and
	// not Deleting. Outcome and ManageErr are its results.
	Managed bool
	// Outcome is what the manage step did; the zero Outcome when it did
	// not run.
	Outcome Outcome
	// ManageErr is the manage step's error, nil when it succeeded or did
	// not run. Config.Status puts it in the ReplicaFailure condition
	// (status.Calculate's manageErr, status.SetReplicaFailure); Sync returns
	// it when the status write succeeded.
	ManageErr error
	// RelatedErr is the error of Config.Related (or of the default related
	// lookup), if it was called and failed; the deletion then used zero
	// ranks, as upstream.
	RelatedErr error
	// Counts are the replica counts of Active and Terminating at Now
	// for a custom resource's status.
	Counts status.Counts
	// Now is the single clock reading the status is computed at,
	// taken after the manage step.
	Now time.Time
	// Restamped are the owner's pods that had left its pod cache without
	// being deleted and lost a label its pod client stamps, which this
	// sync put back, as PatchPod returned them. They are not
	// replaced while they exist.
	Restamped []*corev1.Pod
	// StatusWritten reports that Config.Status asked for a write and
	// Config.Cluster.StatusWriter made it; false when the status was already right
	// or the write failed (Sync then returns its error).
	StatusWritten bool
	// StatusCoalesced reports that Config.Status asked for a write and
	// Config.StatusInterval held it back: the owner is still converging and
	// its status was written less than the interval ago. RequeueAfter is
	// then at most the rest of the interval, so the write is made then.
	StatusCoalesced bool
	// Written is the owner as the API server answered the status write,
	// a T; nil unless StatusWritten.
	Written Object
	// RequeueAfter > 0 asks the caller to sync the owner again after that
	// long, so that ready pods are counted available once MinReadySeconds
	// have passed. It is set only when the status write and the
	// manage step succeeded, MinReadySeconds > 0 and some ready pod is not
	// yet available. Where upstream requeues with no delay (the wait has
	// already passed), it is 1ns: still > 0, still at once. A coalesced
	// status write (StatusCoalesced) also sets it, to the rest of the
	// interval; the sooner of the two wins.
	RequeueAfter time.Duration
}

// Sync runs one sync of the owner with key "namespace/name" in upstream's
// order (docs/rules.md §10): check the expectations, describe and validate
// the owner, claim its pods (adoption and release), create or delete pods
// ([Manager.ManageReplicas]), then compute and write the status. The steps
// with their rules, and why each guard is there: docs/design/sync.md.
//
// Errors: nil when the owner is no longer in the cache (everything
// remembered for it is forgotten). [ErrDeferred] while the caches have not
// loaded or are older than the controller's own writes: nothing was read;
// retry with backoff. [ErrTerminal] when retrying cannot help: an invalid
// spec ([ErrInvalidSpec], written to the status, no pod touched; a missing
// template only blocks creating), pods it created that did not become the
// owner's ([ErrCreationsStopped], written to the status, creating
// stopped), a malformed key, a key without a namespace ([ErrClusterScoped]).
// [ErrFenced] once Config.Fence refused a write. Else the status write's error, else the manage step's.
// SyncResult.RequeueAfter > 0 asks for the availability requeue. Syncs of
// different keys may run concurrently; two Syncs of one key must not.
func (c *Controller[T]) Sync(ctx context.Context, key string) (SyncResult, error) {
	if !c.usable() {
		return SyncResult{}, errors.New("reconcile: Sync on a Controller not built by NewController")
	}
	namespace, name, err := splitKey(key)
	if err != nil {
		return SyncResult{}, terminal(err)
	}
	if namespace == "" {
		return SyncResult{}, terminal(&ownerErr{key: key, err: ErrClusterScoped})
	}
	if !c.cfg.Cluster.CachesSynced() {
		return SyncResult{}, &deferredError{key: key, cause: ErrNotSynced}
	}
	if !c.cfg.DisableConsistencyGate {
		// first, before anything is read from a cache.
		if err := c.gate.Ready(key); err != nil {
			return SyncResult{}, &deferredError{key: key, cause: err}
		}
	}
	obj, err := c.cfg.Cluster.Owners.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		c.gate.Clear(key, "")
		c.forget(key)
		return SyncResult{}, nil
	}
	if err != nil {
		return SyncResult{}, ownerErrorf(key, "reading the owner: %w", err)
	}
	if isNilValue(obj) {
		return SyncResult{}, ownerErrorf(key, "Owners.Get returned neither an owner nor an error")
	}
	c.remember(key)
	// before the pods are read, so that a pod observed in between
	// cannot be missed.
	check := c.tracker.Check(key)
	res := SyncResult{Expectations: check, Deleting: obj.GetDeletionTimestamp() != nil}

	o, err := c.describe(key, obj)
	if err != nil {
		return res, terminal(err)
	}
	res.Owner = o
	stamp := stampOf(c.cfg.Cluster.PodClient, obj)
	// noCreate blocks creating but not deleting: a missing template
	// an open creation breaker.
	var noCreate error
	if errs := o.validateSpec(stamp); len(errs) > 0 {
		if !onlyTemplateMissing(errs) {
			return c.syncInvalid(ctx, key, obj, res, &specError{key: key, errs: errs})
		}
		noCreate = &specError{key: key, errs: errs}
	}
	selector, err := selectorOf(o.Selector)
	if err != nil {
		return res, terminal(ownerErrorf(key, "invalid selector: %w", err))
	}

	pods, err := c.podsOf(obj)
	if err != nil {
		return res, ownerErrorf(key, "listing pods: %w", err)
	}
	cl := claimer[T]{c: c, owner: obj, key: key, selector: selector, stamp: stamp, gate: fenceGate{fence: c.cfg.Fence, key: key}}
	claimed, err := cl.claimPods(ctx, pods)
	res.Adopted, res.Released = claimed.adopted, claimed.released
	if err != nil {
		return res, err
	}
	res.Active, res.Terminating = claimed.active, claimed.terminating
	res.Diff = len(res.Active) - int(o.Replicas)

	held, stopped, err := c.guardCreates(ctx, key, obj, &o, selector, stamp, pods, &res)
	if err != nil {
		return res, err
	}
	if noCreate == nil {
		noCreate = stopped
	}

	if res.Expectations.Satisfied && !res.Deleting {
		var related []*corev1.Pod
		if res.Diff > 0 {
			related, res.RelatedErr = c.related(ctx, obj, &o)
			if res.RelatedErr != nil {
				related = nil
			}
		}
		res.Managed = true
		res.Outcome, res.ManageErr = c.manager.manageListed(ctx, o, res.Active, related, held, noCreate)
		c.breaker.created(key, obj, res.Outcome.Created, c.manager.now())
		var stopped *stoppedError
		if len(res.Outcome.NotSelected) > 0 && errors.As(res.ManageErr, &stopped) && c.breaker.trip(key, obj, stopped) {
			c.manager.Hooks.stopped(key, stopped)
		}
	}

	if errors.Is(res.ManageErr, ErrFenced) {
		// The manage step was fenced: no further write, not even the
		// status. Its error already names the owner.
		res.Now = c.manager.now()
		res.Counts = c.count(&res)
		return res, res.ManageErr
	}
	if err := c.statusStep(ctx, key, obj, &res); err != nil {
		return res, err
	}
	if res.ManageErr != nil {
		return res, ownerError(key, res.ManageErr)
	}
	if d, ok := status.RequeueAfter(res.Counts.Ready, res.Counts.Available, res.Active, o.MinReadySeconds, res.Now, c.manager.now()); ok {
		d = max(d, time.Nanosecond)
		if res.RequeueAfter == 0 || d < res.RequeueAfter {
			res.RequeueAfter = d // the sooner of R-10.8's and a coalesced write's
		}
	}
	return res, nil
}

// describe calls Config.Describe and completes and checks its answer.
func (c *Controller[T]) describe(key string, obj T) (Owner, error) {
	o, err := c.cfg.Describe(obj)
	if err != nil {
		return Owner{}, ownerErrorf(key, "Describe: %w", err)
	}
	switch {
	case o.Key == "":
		o.Key = key
	case o.Key != key:
		return Owner{}, ownerErrorf(key, "Describe returned key %q; it must be empty or %q", o.Key, key)
	}
	if isNil(o.Object) {
		o.Object = obj
	} else if o.Object.GetUID() != obj.GetUID() {
		return Owner{}, ownerErrorf(key, "Describe returned another object (uid %s, want %s)", o.Object.GetUID(), obj.GetUID())
	}
	if o.Kind.Empty() {
		o.Kind = c.cfg.Kind
	} else if o.Kind.Kind != c.cfg.Kind.Kind {
		// Pods created with that kind would never resolve to this owner.
		return Owner{}, ownerErrorf(key, "Describe returned kind %s; Config.Kind is %s", o.Kind, c.cfg.Kind)
	}
	return o, nil // Owner.Validate checks the spec
}

// syncInvalid ends the sync of an owner whose spec fails [Owner.Validate]
// no pod is adopted, released, created or deleted, and the
// expectations are left alone. The pods the owner controls are counted
// for the status (the selector cannot be trusted to match them), which is
// written with specErr as SyncResult.ManageErr, so that Config.Status
// writes the failure condition in this sync. The error is specErr
// (terminal) once the status is written, the status step's otherwise.
func (c *Controller[T]) syncInvalid(ctx context.Context, key string, obj T, res SyncResult, specErr error) (SyncResult, error) {
	pods, err := c.podsOf(obj)
	if err != nil {
		return res, ownerErrorf(key, "listing pods: %w", err)
	}
	uid := obj.GetUID()
	for _, pod := range pods {
		if pod == nil || !controlledBy(pod, uid) {
			continue
		}
		switch {
		case podrank.IsActive(pod):
			res.Active = append(res.Active, pod)
		case podrank.IsTerminating(pod):
			res.Terminating = append(res.Terminating, pod)
		}
	}
	res.Diff = len(res.Active) - int(res.Owner.Replicas)
	res.ManageErr = specErr
	if err := c.statusStep(ctx, key, obj, &res); err != nil {
		return res, err
	}
	return res, specErr
}

// statusStep reads the clock once, counts the pods and runs the
// status write.
func (c *Controller[T]) statusStep(ctx context.Context, key string, obj T, res *SyncResult) error {
	res.Now = c.manager.now()
	res.Counts = c.count(res)
	err := c.writeStatus(ctx, key, obj, res)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFenced):
		return err // it names the owner and the write
	}
	return statusError(key, err)
}

// count returns the replica counts of res's pods at res.Now.
func (c *Controller[T]) count(res *SyncResult) status.Counts {
	o := res.Owner
	var templateLabels map[string]string
	if o.Template != nil {
		templateLabels = o.Template.Labels
	}
	return status.Count(res.Active, res.Terminating, templateLabels, o.MinReadySeconds, res.Now)
}

// controlledBy reports whether pod's controller ownerRef names uid.
func controlledBy(pod *corev1.Pod, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(pod)
	return ref != nil && ref.UID == uid
}

// ownerError names the owner in err, unless err already names it (the
// errors of the manage step and the breaker do).
func ownerError(key string, err error) error {
	if namesOwner(err) {
		return err
	}
	return &ownerErr{key: key, err: err}
}

// splitKey splits "namespace/name" or "name".
func splitKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch {
	case len(parts) == 1 && parts[0] != "":
		return "", parts[0], nil
	case len(parts) == 2 && parts[1] != "":
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("reconcile: malformed owner key %q: want \"namespace/name\" or \"name\"", key)
}

// guardCreates runs the creation breaker's part of a sync, after
// the claim: it settles the pods the Controller created against what the
// sync listed, reads live the controlled pods that left the pod cache
// without being deleted (stamping back or releasing them), and returns how
// many existing pods are held out of the cache's view (not to be
// replaced) and, when the owner must stop creating, the error that says
// why. err is a live read that failed: the sync is retried.
func (c *Controller[T]) guardCreates(ctx context.Context, key string, obj T, o *Owner, selector labels.Selector, stamp map[string]string, pods []*corev1.Pod, res *SyncResult) (held int, stop, err error) {
	if res.Deleting {
		return 0, nil, nil
	}
	var stopped *stoppedError
	if c.breaker.tracks(key) {
		var opened bool
		stopped, opened = c.breaker.settle(key, obj, pods, res.Active, res.Released, c.podCacheVersion(), c.manager.now(), c.creationWait(), int(o.Replicas), c.manager.burst(), c.canReadLive())
		if opened {
			c.manager.Hooks.stopped(key, stopped)
		}
	}
	if res.Diff >= 0 {
		// Nothing would replace them; those that hold a strike are read
		// again when the owner wants pods, or the breaker could not close.
		c.breaker.dropVanished(key)
	} else {
		var unseen, suspect []*corev1.Pod
		held, unseen, suspect, res.Restamped, err = c.recheckVanished(ctx, key, obj, selector, stamp, pods, -res.Diff)
		if err != nil {
			return held, nil, err
		}
		s, opened := c.breaker.strikeExisting(key, obj, suspect, int(o.Replicas), c.manager.burst())
		if u, o := c.breaker.unseen(key, obj, unseen); u != nil {
			s, opened = u, opened || o
		}
		if opened {
			c.manager.Hooks.stopped(key, s)
		}
		if stopped == nil {
			stopped = s
		}
	}
	if stopped == nil {
		return held, nil, nil // no typed nil in the error
	}
	return held, stopped, nil
}

// onlyTemplateMissing reports whether the one failure of errs is a missing
// template, which blocks creating pods but not deleting them.
func onlyTemplateMissing(errs field.ErrorList) bool {
	return len(errs) == 1 && errs[0].Type == field.ErrorTypeRequired && errs[0].Field == "spec.template"
}

// podCacheVersion returns the pod cache's version, "" when unknown.
func (c *Controller[T]) podCacheVersion() string {
	if f := c.cfg.Cluster.CacheVersions.Pods; f != nil {
		return f()
	}
	return ""
}

// creationWait is how long a created pod may stay out of the pod cache
// before the breaker counts it as not observed, when versions cannot tell:
// the expectations' TTL.
func (c *Controller[T]) creationWait() time.Duration {
	if ttl := c.cfg.Expectations.TTL; ttl > 0 {
		return ttl
	}
	return expectations.DefaultTTL
}

// canReadLive reports whether the pod client can read pods live: a
// [PodGetter] that has not said errors.ErrUnsupported.
func (c *Controller[T]) canReadLive() bool {
	_, ok := c.cfg.Cluster.PodClient.(PodGetter)
	return ok && !c.noLiveReads.Load()
}
