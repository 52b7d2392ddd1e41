package status_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/status"
)

// reasonedErr names its condition's reason with a value receiver.
type reasonedErr struct{ reason string }

func (e reasonedErr) Error() string           { return "reasoned: " + e.reason }
func (e reasonedErr) ConditionReason() string { return e.reason }

// specErr names its reason with a pointer receiver, as the reconcile
// package's errors do, and joins its causes.
type specErr struct{ causes []error }

func (e *specErr) Error() string {
	var texts []string
	for _, c := range e.causes {
		texts = append(texts, c.Error())
	}
	return "owner default/web: invalid spec: " + strings.Join(texts, ", ")
}
func (e *specErr) ConditionReason() string { return status.InvalidSpec }
func (e *specErr) Unwrap() []error         { return e.causes }

// multiErr joins errs (nil entries too) but writes its own text.
type multiErr struct {
	text string
	errs []error
}

func (e multiErr) Error() string   { return e.text }
func (e multiErr) Unwrap() []error { return e.errs }

// nilUnwrapErr has an Unwrap method that returns nil.
type nilUnwrapErr struct{ text string }

func (e nilUnwrapErr) Error() string { return e.text }
func (e nilUnwrapErr) Unwrap() error { return nil }

// validateCondition returns what the API server's metav1.Condition
// validation says of c.
func validateCondition(c metav1.Condition) field.ErrorList {
	return validation.ValidateConditions([]metav1.Condition{c}, field.NewPath("status", "conditions"))
}

// sameText fails t unless got is want, showing where long texts differ
// rather than the whole of them.
func sameText(t *testing.T, want, got string) {
	t.Helper()
	if got == want {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-40)
	t.Errorf("texts of %d bytes (want %d) differ at byte %d:\n got …%q\nwant …%q",
		len(got), len(want), i, got[from:min(len(got), i+60)], want[from:min(len(want), i+60)])
}

// failureOf returns the ReplicaFailure condition SetReplicaFailure adds
// for err at diff, and the apps/v1 one Calculate adds for err with a
// ReplicaSet whose active pods minus desired replicas are diff.
func failureOf(t *testing.T, err error, diff int) (metav1.Condition, appsv1.ReplicaSetCondition) {
	t.Helper()
	conds, changed := status.SetReplicaFailure(nil, err, diff, 3, now)
	require.True(t, changed)
	require.Len(t, conds, 1)
	desired, found := max(0, -diff), max(0, diff)
	if diff == 0 {
		desired, found = 1, 1
	}
	var active []*corev1.Pod
	for i := range found {
		active = append(active, podtest.New(fmt.Sprintf("web-%d", i), podtest.Labels(web)))
	}
	st := status.Calculate(replicaSet(int32(desired), 0), active, nil, err, now, status.Options{})
	require.Len(t, st.Conditions, 1)
	return conds[0], st.Conditions[0]
}

// with reconcilekit's difference: an error that names a valid
// reason gives it, in both flavours; any other keeps upstream's choice.
func TestFailureReasonFromTheError(t *testing.T) {
	plain := errors.New("boom")
	cases := []struct {
		name    string
		err     error
		diff    int
		crd, rs string
	}{
		{name: "R-8.4 plain error, too few pods: upstream's FailedCreate", err: plain, diff: -1,
			crd: status.FailedCreate, rs: status.FailedCreate},
		{name: "R-8.4 plain error, too many pods: upstream's FailedDelete", err: plain, diff: 2,
			crd: status.FailedDelete, rs: status.FailedDelete},
		{name: "R-8.4 plain error, count right: ReconcileError, apps/v1 upstream's empty reason", err: plain,
			crd: status.ReconcileError, rs: ""},
		{name: "R-8.4 a named reason replaces FailedCreate", err: reasonedErr{status.CreatedPodsNotSelected}, diff: -1,
			crd: status.CreatedPodsNotSelected, rs: status.CreatedPodsNotSelected},
		{name: "R-8.4 a named reason replaces the reason of a matching count", err: &specErr{}, diff: 0,
			crd: status.InvalidSpec, rs: status.InvalidSpec},
		{name: "R-8.4 a named reason under fmt.Errorf %w", err: fmt.Errorf("sync: %w", reasonedErr{status.CreatedPodsNotObserved}), diff: 1,
			crd: status.CreatedPodsNotObserved, rs: status.CreatedPodsNotObserved},
		{name: "R-8.4 a named reason inside errors.Join", err: errors.Join(plain, reasonedErr{status.CreatedPodsNotSelected}), diff: -2,
			crd: status.CreatedPodsNotSelected, rs: status.CreatedPodsNotSelected},
		{name: "R-8.4 a named reason inside errors.Join under %w",
			err: fmt.Errorf("sync: %w", errors.Join(plain, fmt.Errorf("create: %w", &specErr{causes: []error{plain}}))), diff: -1,
			crd: status.InvalidSpec, rs: status.InvalidSpec},
		{name: "R-8.4 an empty reason: upstream's", err: reasonedErr{""}, diff: -1,
			crd: status.FailedCreate, rs: status.FailedCreate},
		{name: "R-8.4 a reason with a space: upstream's", err: reasonedErr{"Not Valid"}, diff: 1,
			crd: status.FailedDelete, rs: status.FailedDelete},
		{name: "R-8.4 a reason starting with a digit: upstream's", err: reasonedErr{"1Reason"}, diff: -1,
			crd: status.FailedCreate, rs: status.FailedCreate},
		{name: "R-8.4 a reason ending with a colon: upstream's", err: reasonedErr{"Reason:"}, diff: 0,
			crd: status.ReconcileError, rs: ""},
		{name: "R-8.4 a reason of 1025 bytes: upstream's", err: reasonedErr{strings.Repeat("A", 1025)}, diff: -1,
			crd: status.FailedCreate, rs: status.FailedCreate},
		{name: "R-8.4 a reason of 1024 bytes is valid", err: reasonedErr{strings.Repeat("A", 1024)}, diff: -1,
			crd: strings.Repeat("A", 1024), rs: strings.Repeat("A", 1024)},
		{name: "R-8.4 the first error with the method decides, as errors.As finds it",
			err: errors.Join(reasonedErr{"Not Valid"}, reasonedErr{status.InvalidSpec}), diff: -1,
			crd: status.FailedCreate, rs: status.FailedCreate},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crd, rs := failureOf(t, tc.err, tc.diff)
			assert.Equal(t, tc.crd, crd.Reason)
			assert.Equal(t, tc.rs, string(rs.Reason))
			assert.Equal(t, tc.err.Error(), crd.Message, "short messages are verbatim")
			assert.Equal(t, tc.err.Error(), rs.Message, "short messages are verbatim")
			assert.Empty(t, validateCondition(crd))
		})
	}
}

// issue 40: a webhook denying 200 creates of a batch made an
// 84 KB message, which the API server refuses in a metav1.Condition (the
// old code wrote it whole). It is summarized: the text before the joined
// errors, the first three and a count.
func TestFailureMessageOfManyErrorsIsBounded(t *testing.T) {
	denial := func(i int) string {
		return fmt.Sprintf(`pods "web-%03d" is forbidden: admission webhook "deny.example.com" denied the request: `, i) +
			strings.Repeat("policy says no; ", 21)
	}
	var errs []error
	for i := range 200 {
		errs = append(errs, errors.New(denial(i)))
	}
	require.Len(t, denial(0), 422)
	const prefix = "reconcile: owner default/web: "
	err := fmt.Errorf(prefix+"%w", errors.Join(errs...))
	require.Greater(t, len(err.Error()), 32768, "the text upstream would write")

	want := prefix + denial(0) + "; " + denial(1) + "; " + denial(2) + " … and 197 more errors"
	crd, rs := failureOf(t, err, -200)
	sameText(t, want, crd.Message)
	sameText(t, want, rs.Message)
	assert.LessOrEqual(t, len(crd.Message), 4096)
	assert.Empty(t, validateCondition(crd), "the API server accepts it")
}

// the forms of a long message. Whatever the error, the message is
// at most 4096 bytes, cut on a rune boundary.
func TestFailureMessageForms(t *testing.T) {
	const marker = " … (truncated)"
	long := func(s string, n int) error { return errors.New(strings.Repeat(s, n)) }
	four := []error{long("b", 10), long("c", 10), long("d", 10), long("a", 5000)}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{name: "R-8.4 exactly 4096 bytes is verbatim", err: long("x", 4096), want: strings.Repeat("x", 4096)},
		{name: "R-8.4 one long error is cut", err: long("x", 4097), want: strings.Repeat("x", 4080) + marker},
		{name: "R-8.4 a cut never splits a rune", err: errors.New("a" + strings.Repeat("€", 2000)),
			want: "a" + strings.Repeat("€", 1359) + marker},
		{name: "R-8.4 three joined errors are cut, not summarized",
			err:  errors.Join(long("a", 2000), long("b", 2000), long("c", 2000)),
			want: strings.Repeat("a", 2000) + "\n" + strings.Repeat("b", 2000) + "\n" + strings.Repeat("c", 78) + marker},
		{name: "R-8.4 four joined errors are summarized", err: errors.Join(four...),
			want: "bbbbbbbbbb; cccccccccc; dddddddddd … and 1 more errors"},
		{name: "R-8.4 the text before the joined errors is kept", err: fmt.Errorf("sync: %w", errors.Join(four...)),
			want: "sync: bbbbbbbbbb; cccccccccc; dddddddddd … and 1 more errors"},
		{name: "R-8.4 the joined errors nested under two wrappers",
			err:  fmt.Errorf("a: %w", fmt.Errorf("b: %w", errors.Join(four...))),
			want: "a: b: bbbbbbbbbb; cccccccccc; dddddddddd … and 1 more errors"},
		{name: "R-8.4 nil parts are not counted",
			err:  multiErr{text: strings.Repeat("m", 5000), errs: []error{nil, four[0], nil, four[1], four[2], nil, four[0], four[1]}},
			want: "bbbbbbbbbb; cccccccccc; dddddddddd … and 2 more errors"},
		{name: "R-8.4 a joining error with its own text: the text before its first part",
			err:  &specErr{causes: []error{long("x", 3000), long("y", 3000), four[0], four[1]}},
			want: "owner default/web: invalid spec: " + strings.Repeat("x", 3000) + "; " + strings.Repeat("y", 1045) + marker},
		{name: "R-8.4 a summary still too long is cut",
			err:  fmt.Errorf("sync: %w", errors.Join(long("x", 5000), four[0], four[1], four[2])),
			want: "sync: " + strings.Repeat("x", 4074) + marker},
		{name: "R-8.4 an Unwrap returning nil is cut", err: nilUnwrapErr{strings.Repeat("n", 5000)},
			want: strings.Repeat("n", 4080) + marker},
		{name: "R-8.4 an Unwrap returning no errors is cut", err: multiErr{text: strings.Repeat("m", 5000)},
			want: strings.Repeat("m", 4080) + marker},
		{name: "R-8.4 empty texts in a summary", err: fmt.Errorf("%s%w", strings.Repeat("p", 5000),
			errors.Join(errors.New(""), errors.New(""), errors.New(""), errors.New(""))),
			want: strings.Repeat("p", 4080) + marker},
		{name: "R-8.4 invalid UTF-8 is cut without panicking", err: long("\xff", 5000),
			want: strings.Repeat("\xff", 4080) + marker},
		{name: "R-8.4 continuation bytes only leave the marker", err: long("\x80", 5000), want: marker},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			crd, rs := failureOf(t, tc.err, -1)
			sameText(t, tc.want, crd.Message)
			sameText(t, tc.want, rs.Message)
			assert.LessOrEqual(t, len(crd.Message), 4096)
			if utf8.ValidString(tc.err.Error()) {
				assert.True(t, utf8.ValidString(crd.Message))
			}
		})
	}
}

// errGen draws an error tree: texts of any runes (and now and then
// invalid bytes, empty or long), wrapped with %w, joined, under errors
// whose Unwrap returns nil or holds nil entries, and errors that name a
// valid or invalid reason.
func errGen() *rapid.Generator[error] {
	text := rapid.OneOf(
		rapid.String(),
		rapid.StringN(0, 3000, -1),
		rapid.SampledFrom([]string{"", strings.Repeat("é", 3000), strings.Repeat("x", 4096), strings.Repeat("€", 1400)}),
		rapid.Map(rapid.SliceOfN(rapid.Byte(), 0, 5000), func(b []byte) string { return string(b) }),
	)
	reason := rapid.SampledFrom([]string{status.InvalidSpec, status.CreatedPodsNotSelected, "", "Not Valid", "Ends:", "Ok_1"})
	var draw func(t *rapid.T, depth int) error
	draw = func(t *rapid.T, depth int) error {
		kind := "text"
		if depth < 3 {
			kind = rapid.SampledFrom([]string{"text", "join", "wrap", "multi", "nilUnwrap", "reasoned"}).Draw(t, "kind")
		}
		children := func() []error {
			var es []error
			for range rapid.IntRange(0, 8).Draw(t, "parts") {
				if rapid.IntRange(0, 5).Draw(t, "nilPart") == 0 {
					es = append(es, nil)
					continue
				}
				es = append(es, draw(t, depth+1))
			}
			return es
		}
		switch kind {
		case "join":
			if err := errors.Join(children()...); err != nil {
				return err
			}
		case "wrap":
			return fmt.Errorf("%s%w%s", text.Draw(t, "before"), draw(t, depth+1), text.Draw(t, "after"))
		case "multi":
			return multiErr{text: text.Draw(t, "text"), errs: children()}
		case "nilUnwrap":
			return nilUnwrapErr{text.Draw(t, "text")}
		case "reasoned":
			return reasonedErr{reason.Draw(t, "reason")}
		}
		return errors.New(text.Draw(t, "text"))
	}
	return rapid.Custom(func(t *rapid.T) error { return draw(t, 0) })
}

// for any error the condition is one the API server accepts, in
// both flavours alike: the text itself when it has at most 4096 bytes,
// else at most 4096 bytes; valid UTF-8 when the text is; the reason the
// error names when valid, else upstream's.
func TestFailureMessageProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		err := errGen().Draw(t, "err")
		diff := rapid.IntRange(-2, 2).Draw(t, "diff")
		conds, _ := status.SetReplicaFailure(nil, err, diff, 1, now)
		st := status.Calculate(replicaSet(2, 0), nil, nil, err, now, status.Options{})
		crd, rs := conds[0], st.Conditions[0]

		text, msg := err.Error(), crd.Message
		if rs.Message != msg {
			t.Fatalf("Calculate's message differs: %q, SetReplicaFailure's %q", rs.Message, msg)
		}
		if len(text) <= 4096 && msg != text {
			t.Fatalf("a short message changed: %q → %q", text, msg)
		}
		if len(msg) > 4096 {
			t.Fatalf("message of %d bytes", len(msg))
		}
		if utf8.ValidString(text) && !utf8.ValidString(msg) {
			t.Fatalf("invalid UTF-8 from valid text %q: %q", text, msg)
		}

		want := map[int]string{-2: status.FailedCreate, -1: status.FailedCreate, 0: status.ReconcileError, 1: status.FailedDelete, 2: status.FailedDelete}[diff]
		wantRS := status.FailedCreate // no pods of 2
		var named interface{ ConditionReason() string }
		if errors.As(err, &named) {
			if r := named.ConditionReason(); r == status.InvalidSpec || r == status.CreatedPodsNotSelected || r == "Ok_1" {
				want, wantRS = r, r
			}
		}
		if crd.Reason != want || string(rs.Reason) != wantRS {
			t.Fatalf("reasons %q and %q, want %q and %q", crd.Reason, rs.Reason, want, wantRS)
		}
		if errs := validateCondition(crd); len(errs) > 0 {
			t.Fatalf("condition refused: %v", errs)
		}
	})
}
