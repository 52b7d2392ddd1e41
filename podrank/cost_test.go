package podrank_test

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pt "github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/podrank"
)

func TestParseDeletionCost(t *testing.T) {
	cases := []struct {
		value string
		want  int32
		ok    bool
	}{
		{"0", 0, true},
		{"1", 1, true},
		{"10", 10, true},
		{"-1", -1, true},
		{"+10", 0, false},
		{"007", 0, false},
		{"00", 0, false},
		{"-007", -7, true},
		{"-0", 0, true},
		{"-00", 0, true},
		{"", 0, false},
		{"-", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1e3", 0, false},
		{"1_000", 0, false},
		{"0x10", 0, false},
		{"-+5", 0, false},
		{"--5", 0, false},
		{"2147483647", math.MaxInt32, true},
		{"2147483648", 0, false},
		{"-2147483648", math.MinInt32, true},
		{"-2147483649", 0, false},
		{"99999999999999999999999", 0, false},
		{"１", 0, false}, // a full-width digit
	}
	for _, c := range cases {
		t.Run("R-6.13 "+strconv.Quote(c.value), func(t *testing.T) {
			got, err := podrank.ParseDeletionCost(c.value)
			assert.Equal(t, c.want, got)
			if c.ok {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), "podrank: "), err.Error())
			}
			ref, refErr := upstreamCost(map[string]string{podrank.DeletionCostAnnotation: c.value})
			assert.Equal(t, c.want, ref, "the reference disagrees with the table")
			assert.Equal(t, c.ok, refErr == nil)
		})
	}
	t.Run("R-6.13 range errors wrap strconv.ErrRange", func(t *testing.T) {
		_, err := podrank.ParseDeletionCost("2147483648")
		assert.True(t, errors.Is(err, strconv.ErrRange), err)
	})
}

func TestDeletionCost(t *testing.T) {
	cases := []struct {
		name string
		pod  func() (int32, error)
		want int32
		ok   bool
	}{
		{"R-6.13 absent annotation is 0", func() (int32, error) { return podrank.DeletionCost(pt.New("a")) }, 0, true},
		{"R-6.13 other annotations are ignored", func() (int32, error) { return podrank.DeletionCost(pt.New("a", pt.Annotation("x", "5"))) }, 0, true},
		{"R-1.6 the key is exactly controller.kubernetes.io/pod-deletion-cost", func() (int32, error) {
			return podrank.DeletionCost(pt.New("a", pt.Annotation("controller.kubernetes.io/pod-deletion-cost", "5")))
		}, 5, true},
		{"R-1.6 a near miss of the key is ignored", func() (int32, error) {
			return podrank.DeletionCost(pt.New("a", pt.Annotation("controller.kubernetes.io/pod-deletion-costs", "5")))
		}, 0, true},
		{"R-6.13 present annotation is parsed", func() (int32, error) { return podrank.DeletionCost(pt.New("a", pt.DeletionCost("-42"))) }, -42, true},
		{"R-6.13 empty annotation is invalid", func() (int32, error) { return podrank.DeletionCost(pt.New("a", pt.DeletionCost(""))) }, 0, false},
		{"nil pod is 0", func() (int32, error) { return podrank.DeletionCost(nil) }, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.pod()
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.ok, err == nil, err)
		})
	}
}

// referenceCostPattern is a second, independent reading of: "0",
// or an optional minus sign followed by digits that do not start with 0
// unless the sign is present.
var referenceCostPattern = regexp.MustCompile(`^(0|-[0-9]+|[1-9][0-9]*)$`)

func referenceCost(s string) (int32, bool) {
	if !referenceCostPattern.MatchString(s) {
		return 0, false
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || !v.IsInt64() || v.Int64() < math.MinInt32 || v.Int64() > math.MaxInt32 {
		return 0, false
	}
	return int32(v.Int64()), true
}

// FuzzParseDeletionCost checks ParseDeletionCost against two readings of
// the regular-expression one above and upstream's strconv one.
func FuzzParseDeletionCost(f *testing.F) {
	for _, s := range []string{"0", "-0", "007", "-007", "+1", "", " 1", "1e3", "2147483647", "2147483648", "-2147483648", "-2147483649", "-", "9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := podrank.ParseDeletionCost(s)
		want, ok := referenceCost(s)
		if got != want || (err == nil) != ok {
			t.Fatalf("ParseDeletionCost(%q) = %d, %v; reference %d, %v", s, got, err, want, ok)
		}
		up, upErr := upstreamCost(map[string]string{podrank.DeletionCostAnnotation: s})
		if got != up || (err == nil) != (upErr == nil) {
			t.Fatalf("ParseDeletionCost(%q) = %d, %v; strconv reading %d, %v", s, got, err, up, upErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "podrank: ") {
			t.Fatalf("error without the package prefix: %v", err)
		}
	})
}
