package rv_test

import (
	"errors"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/internal/rv"
)

func TestCompare(t *testing.T) {
	cases := []struct {
		name string
		a, b string
		want int
		bad  bool
	}{
		{name: "equal", a: "42", b: "42", want: 0},
		{name: "older", a: "41", b: "42", want: -1},
		{name: "newer", a: "43", b: "42", want: 1},
		{name: "numeric, not string, order", a: "9", b: "10", want: -1},
		{name: "longer is newer", a: "100000000000000000000000000", b: "99999999999999999999999999", want: 1},
		{name: "beyond uint64", a: "18446744073709551616", b: "18446744073709551615", want: 1},
		{name: "empty a", a: "", b: "1", bad: true},
		{name: "empty b", a: "1", b: "", bad: true},
		{name: "zero", a: "0", b: "1", bad: true},
		{name: "leading zero", a: "1", b: "01", bad: true},
		{name: "sign", a: "+1", b: "1", bad: true},
		{name: "minus", a: "-1", b: "1", bad: true},
		{name: "space", a: " 1", b: "1", bad: true},
		{name: "trailing letter", a: "1", b: "1x", bad: true},
		{name: "exponent", a: "1e3", b: "1", bad: true},
		{name: "non-ASCII digit", a: "１", b: "1", bad: true},
		{name: "both malformed", a: "x", b: "y", bad: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rv.Compare(c.a, c.b)
			if c.bad {
				require.ErrorIs(t, err, rv.ErrMalformed)
				assert.Contains(t, err.Error(), "rv: ")
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestCompareErrorNamesTheFirstMalformed pins which version the error quotes.
func TestCompareErrorNamesTheFirstMalformed(t *testing.T) {
	_, err := rv.Compare("0x", "y0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"0x"`)
	_, err = rv.Compare("5", "y0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"y0"`)
}

// versionGen draws a well-formed version: a positive integer of up to 40
// digits, so lengths differ often and equal lengths are common too.
func versionGen() *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		first := rapid.IntRange(1, 9).Draw(t, "first")
		rest := rapid.SliceOfN(rapid.IntRange(0, 9), 0, 39).Draw(t, "rest")
		b := []byte{byte('0' + first)}
		for _, d := range rest {
			b = append(b, byte('0'+d))
		}
		return string(b)
	})
}

// TestCompareIsIntegerOrder: on well-formed versions Compare is the order of
// the integers they spell, hence antisymmetric and total.
func TestCompareIsIntegerOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := versionGen().Draw(t, "a")
		b := rapid.OneOf(versionGen(), rapid.Just(a)).Draw(t, "b")
		x, ok := new(big.Int).SetString(a, 10)
		require.True(t, ok)
		y, ok := new(big.Int).SetString(b, 10)
		require.True(t, ok)

		got, err := rv.Compare(a, b)
		require.NoError(t, err)
		assert.Equal(t, x.Cmp(y), got, "Compare(%s, %s)", a, b)
		back, err := rv.Compare(b, a)
		require.NoError(t, err)
		assert.Equal(t, -got, back, "antisymmetry")
	})
}

// TestCompareRejectsMalformed: any string with a byte outside 0-9, a leading
// zero, or no bytes at all is an error on either side.
func TestCompareRejectsMalformed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.StringOf(rapid.RuneFrom([]rune("0123456789+-x é"))).Draw(t, "s")
		good := versionGen().Draw(t, "good")
		x, ok := new(big.Int).SetString(s, 10)
		wellFormed := ok && x.Sign() > 0 && x.String() == s

		_, errA := rv.Compare(s, good)
		_, errB := rv.Compare(good, s)
		assert.Equal(t, wellFormed, errA == nil, "Compare(%q, %q)", s, good)
		assert.Equal(t, wellFormed, errB == nil, "Compare(%q, %q)", good, s)
		if !wellFormed {
			assert.True(t, errors.Is(errA, rv.ErrMalformed) && errors.Is(errB, rv.ErrMalformed))
		}
	})
}

func BenchmarkCompare(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_, _ = rv.Compare("123456789", "123456790")
	}
}
