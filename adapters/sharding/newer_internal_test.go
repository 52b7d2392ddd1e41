package sharding

import (
	"math/big"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestNewer(t *testing.T) {
	// newer's doc comment: decimal integers without leading zeros in
	// integer order; "" is older than any version; a malformed a is never
	// newer, a malformed b is older than a well-formed a.
	for _, tc := range []struct {
		name string
		a, b string
		want bool
	}{
		{"greater", "10", "9", true},
		{"smaller", "9", "10", false},
		{"equal", "42", "42", false},
		{"same length", "124", "123", true},
		{"longer than uint64", "100000000000000000000", "18446744073709551615", true},
		{"anything newer than empty", "1", "", true},
		{"empty never newer", "", "1", false},
		{"empty against empty", "", "", false},
		{"leading zero a", "01", "", false},
		{"leading zero b", "2", "01", true},
		{"zero a", "0", "", false},
		{"zero b", "1", "0", true},
		{"letters a", "abc", "1", false},
		{"letters b", "1", "abc", true},
		{"negative a", "-1", "1", false},
		{"negative b", "1", "-1", true},
		{"sign a", "+5", "1", false},
		{"space a", " 5", "1", false},
		{"digits then letters a", "12a", "1", false},
		{"both malformed", "abc", "-1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, newer(tc.a, tc.b), "newer(%q, %q)", tc.a, tc.b)
		})
	}
}

// wellFormedGen draws decimal integers without leading zeros, of any length.
func wellFormedGen() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return strconv.FormatUint(rapid.Uint64Min(1).Draw(t, "n"), 10)
		}),
		rapid.StringMatching(`[1-9][0-9]{0,40}`),
	)
}

func TestNewerIsIntegerOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := wellFormedGen().Draw(t, "a")
		b := wellFormedGen().Draw(t, "b")
		if rapid.Bool().Draw(t, "sameLength") && len(a) > 1 {
			b = a[:len(a)-1] + strconv.Itoa(rapid.IntRange(0, 9).Draw(t, "lastDigit"))
		}
		x, ok := new(big.Int).SetString(a, 10)
		require.True(t, ok)
		y, ok := new(big.Int).SetString(b, 10)
		require.True(t, ok)
		require.Equal(t, x.Cmp(y) > 0, newer(a, b), "newer(%q, %q)", a, b)
		require.False(t, newer(a, a), "irreflexive")
		require.False(t, newer(a, b) && newer(b, a), "asymmetric")
		if u, err := strconv.ParseUint(a, 10, 64); err == nil {
			if v, err := strconv.ParseUint(b, 10, 64); err == nil {
				require.Equal(t, u > v, newer(a, b))
			}
		}
	})
}

func TestNewerMalformed(t *testing.T) {
	malformed := rapid.OneOf(
		rapid.Just(""),
		rapid.StringMatching(`0[0-9]{0,5}`),
		rapid.StringMatching(`-[0-9]{1,5}`),
		rapid.String().Filter(func(s string) bool {
			_, err := strconv.ParseUint(s, 10, 64)
			return err != nil
		}),
	)
	rapid.Check(t, func(t *rapid.T) {
		good := wellFormedGen().Draw(t, "good")
		bad := malformed.Draw(t, "bad")
		other := rapid.OneOf(wellFormedGen(), malformed).Draw(t, "other")
		require.False(t, newer(bad, other), "newer(%q, %q)", bad, other)
		require.True(t, newer(good, bad), "newer(%q, %q)", good, bad)
	})
}
