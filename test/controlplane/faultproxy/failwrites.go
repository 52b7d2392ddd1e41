package faultproxy

import (
	"errors"
	"fmt"
	"math"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// million is the denominator of the fraction of writes to fail.
const million = 1_000_000

// FailWrites makes the proxy refuse a fraction of the writes (POST, PUT,
// PATCH, DELETE, to any resource: events and leases included) from now on:
// it answers a refused write in the API server's place, without forwarding
// it, so nothing is applied. code is the status: 500 (a Status of reason
// InternalError) or 429 (reason TooManyRequests, with Retry-After: 1).
// client-go's REST client retries a 429 with Retry-After by itself, after
// the second, up to 10 times; a 500 it returns to its caller.
//
// Which writes fail is deterministic, with no randomness and no seed: of
// the first n writes after the call, exactly ⌈n·fraction⌉ fail, the first
// write among them, with fraction rounded to millionths. So 1 fails every
// write, 0.5 writes 1, 3, 5, …, 0.25 writes 1, 5, 9, …. Under concurrent
// writes, which requests those are depends on the order in which they reach
// the proxy.
//
// fraction 0 turns the fault off. A fraction outside [0, 1] or NaN, or a
// code other than 500 or 429 while fraction > 0, is an error and changes
// nothing.
func (p *Proxy) FailWrites(fraction float64, code int) error {
	if !(fraction >= 0 && fraction <= 1) {
		return fmt.Errorf("faultproxy: FailWrites: fraction %v is not in [0, 1]", fraction)
	}
	if fraction > 0 && code != http.StatusInternalServerError && code != http.StatusTooManyRequests {
		return errors.New("faultproxy: FailWrites: code must be 500 or 429")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failPPM = int64(math.Round(fraction * million))
	p.failCode = code
	p.writes, p.failed = 0, 0
	return nil
}

// failNextWrite counts a write and reports whether it fails; p.mu is held.
func (p *Proxy) failNextWrite() bool {
	if p.failPPM == 0 {
		return false
	}
	p.writes++
	if owed := (p.writes*p.failPPM + million - 1) / million; owed > p.failed {
		p.failed++
		return true
	}
	return false
}

// failedWrite is the answer to a write [Proxy.FailWrites] refuses.
func failedWrite(code int) *status {
	if code == http.StatusTooManyRequests {
		return &status{code, metav1.StatusReasonTooManyRequests, "faultproxy: injected write failure, try again later"}
	}
	return &status{code, metav1.StatusReasonInternalError, "Internal error occurred: faultproxy: injected write failure"}
}

// isWrite reports whether method changes state.
func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}
