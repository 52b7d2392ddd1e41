package storeversion

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// minorOf reads N of v0.N.…, pseudo-versions and pre-releases included,
// and nothing else.
func TestMinorOf(t *testing.T) {
	tests := []struct {
		version string
		minor   int
		ok      bool
	}{
		{"v0.33.0", 33, true},
		{"v0.37.2", 37, true},
		{"v0.36.0-alpha.1", 36, true},
		{"v0.38.0-20261101000000-abcdef123456", 38, true},
		{"v1.2.3", 0, false},
		{"(devel)", 0, false},
		{"", 0, false},
		{"v0.x.1", 0, false},
	}
	for _, tt := range tests {
		minor, ok := minorOf(tt.version)
		assert.Equal(t, tt.ok, ok, tt.version)
		assert.Equal(t, tt.minor, minor, tt.version)
	}
}
