package slowstart

import "strconv"

// BatchError is the error [Run] returns when calls of a batch failed. It lists
// every failure of that batch, in ascending call index order; [errors.Is] and
// [errors.As] reach each of them through Unwrap. Its message is the first
// failure plus how many more there were:
//
//	slowstart: call 3: quota exceeded (and 2 more)
//
// Callers that want just one error, as upstream's slowStartBatch returns
// use [BatchError.First]:
//
//	var be *slowstart.BatchError
//	if errors.As(err, &be) {
//		first := be.First()
//		...
//	}
//
// Upstream returns one nondeterministically chosen failure of the batch; this
// type returns all of them in a deterministic order (a documented improvement).
//
// Run fills every field; the zero value is a valid error whose First is nil.
// A BatchError is not modified after Run returns it, so it may be read from
// any number of goroutines.
type BatchError struct {
	// Start and Size describe the failing batch: it held the calls with
	// indices [Start, Start+Size).
	Start, Size int
	// Indices are the call indices that failed, ascending.
	Indices []int
	// Errs[j] is the non-nil error returned by the call with index Indices[j].
	Errs []error
}

// Error returns "slowstart: call I: <first failure>", followed by
// " (and N more)" when the batch had N > 0 further failures.
func (e *BatchError) Error() string {
	if e == nil || len(e.Errs) == 0 {
		return "slowstart: batch failed"
	}
	msg := "slowstart: "
	if len(e.Indices) > 0 {
		msg += "call " + strconv.Itoa(e.Indices[0]) + ": "
	}
	if e.Errs[0] != nil {
		msg += e.Errs[0].Error()
	} else {
		msg += "<nil>"
	}
	if more := len(e.Errs) - 1; more > 0 {
		msg += " (and " + strconv.Itoa(more) + " more)"
	}
	return msg
}

// Unwrap returns the failures in ascending call index order (the Errs field
// itself; callers must not modify it).
func (e *BatchError) Unwrap() []error {
	if e == nil {
		return nil
	}
	return e.Errs
}

// First returns the failure with the lowest call index, or nil for a
// BatchError without failures (or a nil *BatchError).
func (e *BatchError) First() error {
	if e == nil || len(e.Errs) == 0 {
		return nil
	}
	return e.Errs[0]
}
