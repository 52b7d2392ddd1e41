package reconcile

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestOwnerErrorNamesTheOwnerOnce: Sync's error names the owner exactly
// once, decided by the error's type, not by its text: an error of a pod
// client whose own message begins with "reconcile: " is still named.
func TestOwnerErrorNamesTheOwnerOnce(t *testing.T) {
	const key = "ns/web"
	client := errors.New("pods is forbidden")
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"a pod client's error", client, "reconcile: owner ns/web: pods is forbidden"},
		{"joined pod client errors", errors.Join(client, errors.New("timeout")), "reconcile: owner ns/web: pods is forbidden\ntimeout"},
		{"a client error worded like ours", errors.New("reconcile: PodControlFuncs.Create is nil"), "reconcile: owner ns/web: reconcile: PodControlFuncs.Create is nil"},
		{"already named", ownerErrorf(key, "listing pods: %w", client), "reconcile: owner ns/web: listing pods: pods is forbidden"},
		{"named, then terminal", terminal(ownerErrorf(key, "invalid selector")), "reconcile: owner ns/web: invalid selector"},
		{"the fence's refusal", &fencedError{key: key, what: "create", reason: client}, "reconcile: owner ns/web: fenced before create, no further write made: pods is forbidden"},
		{"a spec error", &specError{key: key, errs: field.ErrorList{field.Required(field.NewPath("spec", "selector"), "")}}, "reconcile: owner ns/web: invalid spec: spec.selector: Required value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ownerError(key, tc.err)
			require.Equal(t, tc.want, got.Error())
			require.ErrorIs(t, got, tc.err, "the owner's name wraps; errors.Is still reaches the cause")
		})
	}
}

// TestOwnerErrorfUnwraps: the %w of an owner's error reaches errors.Is
// and errors.As as fmt.Errorf's would.
func TestOwnerErrorfUnwraps(t *testing.T) {
	err := ownerErrorf("ns/web", "reading the owner: %w", ErrNotSynced)
	require.ErrorIs(t, err, ErrNotSynced)
	require.Equal(t, "reconcile: owner ns/web: reading the owner: "+ErrNotSynced.Error(), err.Error())
	var named *ownerErr
	require.ErrorAs(t, fmt.Errorf("outer: %w", err), &named)
	require.Equal(t, "ns/web", named.key)
}
