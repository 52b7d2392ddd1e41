package status

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxMessageBytes is the longest ReplicaFailure message [Calculate] and
// [SetReplicaFailure] write, well under the 32,768 bytes a
// metav1.Condition may hold. Upstream writes the whole error text, so an
// aggregate of many failures (a webhook denying a batch of creates) makes
// a condition the API server refuses, and the failure is never shown.
const maxMessageBytes = 4096

// summarizedErrors is how many of a joined error's parts a summarized
// message lists.
const summarizedErrors = 3

// truncatedMarker ends a message cut at maxMessageBytes.
const truncatedMarker = " … (truncated)"

// maxReasonBytes is the longest reason a metav1.Condition may hold.
const maxReasonBytes = 1024

// reasonPattern is the form of a metav1.Condition reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// reasoner is an error that names the reason of the failure condition it
// causes, as the reconcile package's errors do.
type reasoner interface {
	error
	ConditionReason() string
}

// conditionReason returns the reason err names, else fallback: the first
// error of err's tree with a ConditionReason method, as [errors.As] finds
// it, names it when the method returns a valid metav1.Condition reason.
// [errors.AsType] finds it without allocating for a plain error.
func conditionReason(err error, fallback string) string {
	if r, ok := errors.AsType[reasoner](err); ok {
		if reason := r.ConditionReason(); validReason(reason) {
			return reason
		}
	}
	return fallback
}

// validReason reports whether s may be a metav1.Condition reason: non-empty,
// CamelCase-like and at most maxReasonBytes long.
func validReason(s string) bool {
	return len(s) <= maxReasonBytes && reasonPattern.MatchString(s)
}

// conditionMessage returns the message of a failure condition for err.
//
// A text of at most maxMessageBytes is returned verbatim, as upstream
// does. A longer one is summarized when the first error of err's chain
// (following Unwrap() error) that has an Unwrap() []error method, the
// joining error, holds more than summarizedErrors non-nil errors:
//
//	<prefix><first>; <second>; <third> … and <N> more errors
//
// where N counts the remaining non-nil errors and prefix is the text
// before the first error: err's text up to where the joining error's
// text starts (a %w wrapper's words), then the joining error's text up to
// where the first error's text starts (a joining error that writes its
// own words), each empty when the inner text does not occur. Without
// more than summarizedErrors errors the text is kept whole. Either way a
// result still over maxMessageBytes is cut on a rune boundary to at most
// maxMessageBytes bytes ending with truncatedMarker. When err's text is
// valid UTF-8 so is the result.
func conditionMessage(err error) string {
	msg := err.Error()
	if len(msg) <= maxMessageBytes {
		return msg
	}
	valid := utf8.ValidString(msg)
	if parts, joined := joinedParts(err); len(parts) > summarizedErrors {
		first := parts[0].Error()
		var b strings.Builder
		jt := joined.Error()
		if i := strings.Index(msg, jt); i > 0 {
			b.WriteString(msg[:i])
		}
		if i := strings.Index(jt, first); i > 0 {
			b.WriteString(jt[:i])
		}
		b.WriteString(first)
		for _, part := range parts[1:summarizedErrors] {
			b.WriteString("; ")
			b.WriteString(part.Error())
		}
		b.WriteString(" … and ")
		b.WriteString(strconv.Itoa(len(parts) - summarizedErrors))
		b.WriteString(" more errors")
		msg = b.String()
		if valid {
			// A part's own text need not be valid where the whole is.
			msg = strings.ToValidUTF8(msg, "\uFFFD")
		}
	}
	return truncate(msg, maxMessageBytes)
}

// joinedParts returns the non-nil errors joined by the first error of
// err's Unwrap() error chain that has an Unwrap() []error method, and
// that error; nil and nil when there is none.
func joinedParts(err error) ([]error, error) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		j, ok := e.(interface{ Unwrap() []error })
		if !ok {
			continue
		}
		var parts []error
		for _, part := range j.Unwrap() {
			if part != nil {
				parts = append(parts, part)
			}
		}
		return parts, e
	}
	return nil, nil
}

// truncate returns s when it has at most n bytes, else s cut on a rune
// boundary followed by truncatedMarker, n bytes at most in all. n must
// exceed len(truncatedMarker).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(truncatedMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncatedMarker
}
