package ctrlruntime

import (
	"errors"
	"fmt"
	"time"

	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Combine returns what a Reconcile that ran two steps returns: the pod
// step ([Reconciler], the pods argument of Options.NewReconciler) and one
// of yours, each with its result and error. It is a pure function, safe
// for concurrent use.
//
//   - Neither failed: the result that asks for the sooner requeue (the
//     smaller positive RequeueAfter, a negative one being none; Requeue if either asks for it).
//   - Either failed with an error that is not terminal: that error (both,
//     joined, when both failed), which controller-runtime retries with
//     backoff, running both steps again. A terminal error of the other
//     step is kept as text only, so that it cannot stop the retry.
//   - Only terminal errors (crreconcile.TerminalError: an invalid spec,
//     creations stopped): they are returned as one terminal error, not
//     retried, unless a step that succeeded asked for a requeue (the
//     consistency gate's deferral, the availability requeue): then the
//     error, as text only, is retried, so the requeue is not lost.
//
// The result is zero whenever the error is not nil: controller-runtime
// ignores it then.
func Combine(pods crreconcile.Result, podsErr error, own crreconcile.Result, ownErr error) (crreconcile.Result, error) {
	if podsErr == nil && ownErr == nil {
		return sooner(pods, own), nil
	}
	var retryable, terminal []error
	requeue := false
	for _, step := range []struct {
		res crreconcile.Result
		err error
	}{{pods, podsErr}, {own, ownErr}} {
		switch {
		case step.err == nil:
			//lint:ignore SA1019 deprecated, but controller-runtime still honours a Requeue a step sets
			requeue = requeue || step.res.RequeueAfter > 0 || step.res.Requeue
		case errors.Is(step.err, crreconcile.TerminalError(nil)):
			terminal = append(terminal, step.err)
		default:
			retryable = append(retryable, step.err)
		}
	}
	if len(retryable) == 0 && !requeue {
		if len(terminal) == 1 {
			return crreconcile.Result{}, terminal[0]
		}
		return crreconcile.Result{}, crreconcile.TerminalError(errors.Join(terminal...))
	}
	for _, err := range terminal {
		retryable = append(retryable, textOnly{msg: err.Error()})
	}
	if len(retryable) == 1 {
		return crreconcile.Result{}, retryable[0]
	}
	return crreconcile.Result{}, errors.Join(retryable...)
}

// sooner returns the result that asks for the sooner requeue.
func sooner(a, b crreconcile.Result) crreconcile.Result {
	//lint:ignore SA1019 deprecated, but controller-runtime still honours a Requeue a step sets
	out := crreconcile.Result{Requeue: a.Requeue || b.Requeue}
	for _, d := range []time.Duration{a.RequeueAfter, b.RequeueAfter} {
		if d > 0 && (out.RequeueAfter == 0 || d < out.RequeueAfter) {
			out.RequeueAfter = d
		}
	}
	return out
}

// textOnly is a terminal error's message without its chain, so that
// errors.Is finds no crreconcile.TerminalError in it.
type textOnly struct{ msg string }

func (e textOnly) Error() string {
	return fmt.Sprintf("ctrlruntime: retried with the other step: %s", e.msg)
}
