package consumer

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/rv"
)

// The root module builds on apimachinery v0.33, which lacks
// resourceversion.CompareResourceVersion (v0.35+), so it carries its own
// internal/rv.Compare. This module builds against the newest apimachinery:
// here both must agree on every input, result and validity alike.

// rvGen draws strings that are often well-formed versions, often nearly so
// (a leading zero, a sign, a stray byte), and sometimes anything.
func rvGen() *rapid.Generator[string] {
	digits := rapid.StringOfN(rapid.RuneFrom([]rune("0123456789")), 1, 30, -1)
	return rapid.OneOf(
		digits,
		rapid.Custom(func(t *rapid.T) string {
			return rapid.SampledFrom([]string{"", "0", "-", "+", " ", "x"}).Draw(t, "prefix") +
				digits.Draw(t, "digits") +
				rapid.SampledFrom([]string{"", "0", "9", "e3", " ", "\x00"}).Draw(t, "suffix")
		}),
		rapid.String(),
	)
}

func same(t require.TestingT, a, b string) {
	want, wantErr := resourceversion.CompareResourceVersion(a, b)
	got, gotErr := rv.Compare(a, b)
	assert.Equal(t, wantErr == nil, gotErr == nil, "validity of Compare(%q, %q): apimachinery %v, rv %v", a, b, wantErr, gotErr)
	if wantErr == nil {
		assert.Equal(t, want, got, "Compare(%q, %q)", a, b)
	} else {
		assert.True(t, errors.Is(gotErr, rv.ErrMalformed), "rv error %v", gotErr)
	}
}

func TestCompareMatchesApimachinery(t *testing.T) {
	for _, c := range [][2]string{
		{"1", "1"}, {"9", "10"}, {"10", "9"}, {"123", "124"},
		{"0", "1"}, {"1", "0"}, {"", "1"}, {"1", ""}, {"01", "1"}, {"1", "01"},
		{"-1", "1"}, {"+1", "1"}, {"1a", "1"}, {"x", "y"},
		{strings.Repeat("9", 40), "1" + strings.Repeat("0", 40)},
	} {
		same(t, c[0], c[1])
	}
	rapid.Check(t, func(t *rapid.T) {
		a := rvGen().Draw(t, "a")
		b := rapid.OneOf(rvGen(), rapid.Just(a)).Draw(t, "b")
		same(t, a, b)
	})
}
