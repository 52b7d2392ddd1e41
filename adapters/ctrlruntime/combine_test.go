package ctrlruntime_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Combine joins the pod step's outcome with the user's step's: the sooner
// requeue, a retryable error before a terminal one, and a terminal error
// that never swallows the other step's retry or requeue.
func TestCombine(t *testing.T) {
	retry := errors.New("service: conflict")
	invalid := crreconcile.TerminalError(reconcile.ErrInvalidSpec)
	badPDB := crreconcile.TerminalError(errors.New("pdb: minAvailable out of range"))
	after := func(d time.Duration) crreconcile.Result { return crreconcile.Result{RequeueAfter: d} }
	cases := []struct {
		name         string
		pods         crreconcile.Result
		podsErr      error
		own          crreconcile.Result
		ownErr       error
		want         crreconcile.Result
		wantErr      []error // each must be found by errors.Is
		wantTerminal bool
	}{
		{name: "neither asks for anything"},
		{name: "the pod step's availability requeue (R-10.8)", pods: after(time.Second), want: after(time.Second)},
		{name: "the sooner of two requeues", pods: after(3 * time.Second), own: after(time.Second), want: after(time.Second)},
		{name: "the sooner of two requeues, the other way", pods: after(time.Second), own: after(3 * time.Second), want: after(time.Second)},
		{name: "yours only", own: after(2 * time.Second), want: after(2 * time.Second)},
		//lint:ignore SA1019 a step may still set the deprecated Requeue
		{name: "a Requeue is kept", own: crreconcile.Result{Requeue: true}, pods: after(time.Second), want: crreconcile.Result{Requeue: true, RequeueAfter: time.Second}},
		{name: "your error, retried", pods: after(time.Second), ownErr: retry, wantErr: []error{retry}},
		{name: "the pod step's terminal error alone (R-14.7)", podsErr: invalid, wantErr: []error{reconcile.ErrInvalidSpec}, wantTerminal: true},
		{name: "two terminal errors, one terminal error", podsErr: invalid, ownErr: badPDB, wantErr: []error{reconcile.ErrInvalidSpec}, wantTerminal: true},
		{name: "a terminal pod step does not stop your retry", podsErr: invalid, ownErr: retry, wantErr: []error{retry}},
		{name: "your terminal error does not stop the pod step's retry", podsErr: retry, ownErr: badPDB, wantErr: []error{retry}},
		{name: "your terminal error does not drop the gate's deferral (R-10.9)", pods: after(5 * time.Millisecond), ownErr: badPDB},
		{name: "both retryable, joined", podsErr: reconcile.ErrFenced, ownErr: retry, wantErr: []error{reconcile.ErrFenced, retry}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ctrlruntime.Combine(tc.pods, tc.podsErr, tc.own, tc.ownErr)
			assert.Equal(t, tc.want, res)
			if tc.podsErr == nil && tc.ownErr == nil {
				assert.NoError(t, err)
				return
			}
			assert.Error(t, err)
			for _, want := range tc.wantErr {
				assert.ErrorIs(t, err, want)
			}
			assert.Equal(t, tc.wantTerminal, errors.Is(err, crreconcile.TerminalError(nil)))
		})
	}
}

// Whatever the two steps return: an error is returned iff a step failed,
// with a zero result (controller-runtime ignores it); it is terminal only
// when every failure is terminal and no step asked for a requeue; without
// an error, the requeue is the sooner positive one.
func TestCombineProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		draw := func(label string) (crreconcile.Result, error) {
			res := crreconcile.Result{RequeueAfter: time.Duration(rapid.IntRange(-1, 3).Draw(t, label+" requeueAfter")) * time.Second}
			var err error
			switch rapid.IntRange(0, 2).Draw(t, label+" error") {
			case 1:
				err = errors.New(label)
			case 2:
				err = crreconcile.TerminalError(errors.New(label))
			}
			return res, err
		}
		pods, podsErr := draw("pods")
		own, ownErr := draw("own")
		res, err := ctrlruntime.Combine(pods, podsErr, own, ownErr)
		if (err != nil) != (podsErr != nil || ownErr != nil) {
			t.Fatalf("error %v from %v and %v", err, podsErr, ownErr)
		}
		if err != nil {
			if res != (crreconcile.Result{}) {
				t.Fatalf("result %+v with an error", res)
			}
			isTerminal := func(e error) bool { return errors.Is(e, crreconcile.TerminalError(nil)) }
			requeued := (podsErr == nil && pods.RequeueAfter > 0) || (ownErr == nil && own.RequeueAfter > 0)
			wantTerminal := (podsErr == nil || isTerminal(podsErr)) && (ownErr == nil || isTerminal(ownErr)) && !requeued
			if isTerminal(err) != wantTerminal {
				t.Fatalf("terminal %v, want %v (%v, %v, requeued %v)", isTerminal(err), wantTerminal, podsErr, ownErr, requeued)
			}
			return
		}
		want := time.Duration(0)
		for _, d := range []time.Duration{pods.RequeueAfter, own.RequeueAfter} {
			if d > 0 && (want == 0 || d < want) {
				want = d
			}
		}
		if res.RequeueAfter != want {
			t.Fatalf("RequeueAfter %v, want %v", res.RequeueAfter, want)
		}
	})
}
