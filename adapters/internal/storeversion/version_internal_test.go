package storeversion

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
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

// Whatever follows the minor version (patch, pre-release, pseudo-version),
// minorOf returns the minor version; a major version other than v0 is
// refused.
func TestMinorOfProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		minor := rapid.IntRange(0, 1000).Draw(t, "minor")
		suffix := rapid.StringMatching(`[0-9]+(-[a-z0-9.]+)?`).Draw(t, "suffix")
		got, ok := minorOf(fmt.Sprintf("v0.%d.%s", minor, suffix))
		if !ok || got != minor {
			t.Fatalf("minorOf(v0.%d.%s) = %d, %v", minor, suffix, got, ok)
		}
		major := rapid.IntRange(1, 1000).Draw(t, "major")
		if _, ok := minorOf(fmt.Sprintf("v%d.%d.%s", major, minor, suffix)); ok {
			t.Fatalf("v%d accepted", major)
		}
	})
}
