package rv_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/reconcilekit/reconcilekit/internal/rv"
)

// FuzzCompareLaws feeds three arbitrary strings to Compare: it never
// panics; it fails exactly when one of the pair is not a positive decimal
// integer without leading zeros, with an "rv: " error wrapping ErrMalformed
// and a result of 0; otherwise it is antisymmetric, reflexive, transitive
// and agrees with numeric order.
func FuzzCompareLaws(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ab, errAB := rv.Compare(a, b)
		ba, errBA := rv.Compare(b, a)
		for _, e := range []error{errAB, errBA} {
			if e == nil {
				continue
			}
			if !errors.Is(e, rv.ErrMalformed) || !strings.HasPrefix(e.Error(), "rv: ") {
				t.Fatalf("error %q: want an \"rv: \" error wrapping ErrMalformed", e)
			}
		}
		na, okA := number(a)
		nb, okB := number(b)
		if !okA || !okB {
			if errAB == nil || errBA == nil || ab != 0 || ba != 0 {
				t.Fatalf("Compare(%q, %q) = %d, %v and reversed %d, %v: want 0 and an error", a, b, ab, errAB, ba, errBA)
			}
			return
		}
		if errAB != nil || errBA != nil {
			t.Fatalf("Compare(%q, %q): unexpected errors %v, %v", a, b, errAB, errBA)
		}
		if ab != -ba {
			t.Fatalf("not antisymmetric: Compare(%q, %q) = %d, reversed %d", a, b, ab, ba)
		}
		if want := na.Cmp(nb); ab != want {
			t.Fatalf("Compare(%q, %q) = %d, numeric order says %d", a, b, ab, want)
		}
		if aa, err := rv.Compare(a, a); aa != 0 || err != nil {
			t.Fatalf("Compare(%q, itself) = %d, %v", a, aa, err)
		}
		bc, errBC := rv.Compare(b, c)
		ac, errAC := rv.Compare(a, c)
		if errBC == nil && errAC == nil && ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q but Compare(a, c) = %d", a, b, c, ac)
		}
	})
}

// number is the test's own reading of a well-formed resourceVersion.
func number(s string) (*big.Int, bool) {
	if s == "" || s[0] == '0' || strings.TrimLeft(s, "0123456789") != "" {
		return nil, false
	}
	n, ok := new(big.Int).SetString(s, 10)
	return n, ok
}
