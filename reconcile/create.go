package reconcile

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/panics"
	"github.com/reconcilekit/reconcilekit/slowstart"
)

// createState is what happened to one planned create.
type createState uint8

const (
	notAttempted createState = iota
	createdOK
	namespaceTerminating
	alreadyExisted // a retried name met AlreadyExists
	createFailed   // includes a panicking call
	createFenced   // refused by Manager.Fence: not made
	notSelected    // made, but the owner's selector does not match it: deleted again
)

// createResult is written by the goroutine of create i only; it is read
// after slowstart.Run has joined every call.
type createResult struct {
	state createState
	pod   *corev1.Pod
	err   error
	// panicked is set when the PodControl call panicked; the panic itself
	// is recorded in createPods' panics.Set.
	panicked bool
}

// errCreatePanicked stops the slow start after a PodControl panic; the
// panic itself is re-raised by createPods.
var errCreatePanicked = errors.New("reconcile: CreatePod panicked")

// errNotSelected stops the slow start after a create returned a pod the
// owner's selector does not match; createPods reports it as a
// [stoppedError].
var errNotSelected = errors.New("reconcile: created pod not selected")

// createPods expects n creations for o and makes them in slow-start
// batches.
func (m *Manager) createPods(ctx context.Context, o *Owner, n int, active []*corev1.Pod, out Outcome) (Outcome, error) {
	if err := o.validateTemplate(); err != nil {
		return out, err
	}
	tracker := m.Tracker()
	var keys []string
	if m.TrackCreations {
		names, retried, err := m.podNames(o, n, active)
		if err != nil {
			return out, err
		}
		out.Names, out.Retried = names, retried
		keys = make([]string, n)
		ns := o.Object.GetNamespace()
		for i, name := range names {
			keys[i] = ns + "/" + name
		}
		tracker.ExpectCreationKeys(o.Key, keys)
	} else {
		tracker.ExpectCreations(o.Key, n)
	}
	out.Expected = n

	results := make([]createResult, n)
	var panicked panics.Set
	gate := fenceGate{fence: m.Fence, key: o.Key}
	check := createdPodCheck(o)
	_, runErr := slowstart.Run(ctx, n, m.SlowStart, func(ctx context.Context, i int) (err error) {
		r := &results[i]
		r.state = createFailed // until the call returns normally
		if !panicked.Call(i, func() { err = m.createOne(ctx, o, out.Names, i < out.Retried, i, r, &gate, check) }) {
			r.panicked = true
			return errCreatePanicked
		}
		return err
	})

	var (
		failures []error
		failed   []int    // indices to lower: failed, then never attempted
		retry    []string // names of creates that may have happened unseen
		again    []string // those of them already retried this round
	)
	calls := 0
	for i := range results {
		r := &results[i]
		switch r.state {
		case notAttempted, createFenced:
			out.Skipped++
			failed = append(failed, i)
			if i < out.Retried {
				again = append(again, out.Names[i]) // still uncertain
			}
			continue
		case createdOK:
			out.Created = append(out.Created, r.pod)
			if i < out.Retried {
				m.retriedMade(o.Key, r.pod)
			}
		case notSelected:
			out.NotSelected = append(out.NotSelected, r.pod)
			failed = append(failed, i)
			if r.err != nil {
				failures = append(failures, r.err) // the delete of the pod failed
			}
		case namespaceTerminating:
			out.NamespaceTerminating++
		case alreadyExisted:
			out.AlreadyExisted++
		case createFailed:
			out.CreateFailed++
			failed = append(failed, i)
			switch {
			case out.Names == nil || apierrors.IsAlreadyExists(r.err):
			case i < out.Retried:
				again = append(again, out.Names[i])
			default:
				retry = append(retry, out.Names[i])
			}
			if !r.panicked {
				failures = append(failures, r.err)
			}
		}
		calls++
	}
	out.Batches = batchesRun(n, calls, m.SlowStart)

	// step 5: every create that did not happen is lowered, so that
	// the owner is not left waiting for an add event that cannot come.
	for _, i := range failed {
		if keys != nil {
			tracker.CreationObservedKey(o.Key, keys[i])
		} else {
			tracker.CreationObserved(o.Key)
		}
	}
	m.keepUncertain(o.Key, retry, again)
	if out.NamespaceTerminating > 0 {
		// Counted as done, yet no pod and no event will follow: the
		// cache passing our writes must not resolve the round as a missed
		// event, or another wave of creates would meet the same refusal.
		tracker.RecordUnverifiable(o.Key)
	}
	if gate := tracker.Gate(); gate != nil {
		for _, p := range out.Created {
			if p.ResourceVersion != "" {
				gate.Wrote(o.Key, o.Object.GetUID(), expectations.PodsResource, p.ResourceVersion)
			}
		}
	}
	if r, ok := m.Pods.(BatchReporter); ok {
		reportBatches(ctx, r, results, out.Batches)
	}
	m.Hooks.created(o.Key, out)
	m.Hooks.repanic(o.Key, &panicked)

	if err := gate.refusal(); err != nil {
		out.Fenced = out.Skipped // no create was made after the refusal
		failures = append(failures, err)
	}
	if len(out.NotSelected) > 0 {
		failures = append(failures, &stoppedError{key: o.Key, cause: causeNotSelected, count: len(out.NotSelected)})
	}
	switch {
	case len(failures) == 1:
		return out, failures[0]
	case len(failures) > 1:
		return out, errors.Join(failures...)
	case runErr != nil:
		// No call failed, so Run stopped on ctx between batches.
		return out, runErr
	}
	return out, nil
}

// createdPodCheck returns the selector every created pod must match: the
// owner's, when it is set, valid and not empty; nil otherwise (nothing is
// checked, as upstream).
func createdPodCheck(o *Owner) labels.Selector {
	s := o.Selector
	if s == nil || len(s.MatchLabels)+len(s.MatchExpressions) == 0 {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil
	}
	return sel
}

// createOne makes create i, unless the fence refuses it, and records its
// result in r. A pod the API server returns with labels that check does
// not match (a stamp the selector excludes, a webhook rewriting labels) is
// deleted at once, unless the fence refuses that too, and stops the round
// the next sync would release it and create another.
func (m *Manager) createOne(ctx context.Context, o *Owner, names []string, retried bool, i int, r *createResult, gate *fenceGate, check labels.Selector) error {
	if err := gate.allow("creating a pod"); err != nil {
		r.state = createFenced
		return err
	}
	name := ""
	if names != nil {
		name = names[i]
	}
	pod := o.newPod(name)
	created, err := m.Pods.CreatePod(ctx, pod)
	switch {
	case err == nil && m.requireNames && created != nil && created.Name == "" && name == "":
		// The API in front of the PodControl ignored GenerateName: every
		// later create would meet AlreadyExists on the empty name.
		r.err = ownerErrorf(o.Key, "CreatePod returned a pod without a name: "+
			"the API ignored GenerateName %q (client-go's fake clientset does); "+
			"turn on Config.Expectations.Exact, which names pods itself, or use a GenerateName-aware fake such as fakecluster", pod.GenerateName)
		return r.err
	case err == nil && created != nil && check != nil && !check.Matches(labels.Set(created.Labels)):
		r.state, r.pod = notSelected, created
		if gate.allow("deleting pod "+PodKey(created)+", which the selector does not match") != nil {
			return errNotSelected // the refusal is the gate's, reported once
		}
		if derr := m.Pods.DeletePod(ctx, created); derr != nil && !apierrors.IsNotFound(derr) {
			r.err = ownerErrorf(o.Key, "deleting created pod %s, which the selector does not match: %w", PodKey(created), derr)
		}
		return errNotSelected
	case err == nil:
		if created == nil {
			created = pod
		}
		r.state, r.pod = createdOK, created
		return nil
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// step 4: the namespace is going away; count it as done and
		// leave the expectation to expire.
		r.state = namespaceTerminating
		return nil
	case retried && apierrors.IsAlreadyExists(err):
		// The earlier create of this name succeeded unseen; its add event
		// will satisfy the key.
		r.state = alreadyExisted
		return nil
	default:
		r.err = err
		return err
	}
}

// batchesRun returns the sizes of the slow-start batches that made the
// first calls creates: batches are consecutive, so they are the prefix of
// the plan that adds up to calls.
func batchesRun(n, calls int, opts slowstart.Options) []int {
	if calls == 0 {
		return nil
	}
	plan := slowstart.Plan(n, opts)
	sum := 0
	for k, size := range plan {
		sum += size
		if sum >= calls {
			return plan[:k+1]
		}
	}
	return plan
}
