package rv

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is wrapped by the error [Compare] returns for a version that
// is not a positive decimal integer written without leading zeros.
var ErrMalformed = errors.New("rv: malformed resource version")

// Compare orders two resource versions of the same resource: -1 when a is
// older than b, 0 when they are equal, +1 when a is newer. It returns 0 and an
// error wrapping [ErrMalformed] when either is malformed (a is checked
// first). Compare allocates only for that error.
func Compare(a, b string) (int, error) {
	if !wellFormed(a) {
		return 0, fmt.Errorf("%w: %q", ErrMalformed, a)
	}
	if !wellFormed(b) {
		return 0, fmt.Errorf("%w: %q", ErrMalformed, b)
	}
	// Without leading zeros, more digits means a larger number; for the same
	// number of digits, byte order is numeric order.
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c, nil
	}
	return strings.Compare(a, b), nil
}

// wellFormed reports whether s is a non-empty run of ASCII digits that does
// not start with '0' (which also rules out "0" itself, never a live version).
func wellFormed(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != "" && s[0] != '0'
}
