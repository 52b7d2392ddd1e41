package podrank

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"
)

// TestCompareMonotonicTimes checks that two times which both carry a
// monotonic clock reading are compared by time.Time itself, which then
// looks at the monotonic readings only. Such pairs cannot be made to
// disagree with their wall clocks from outside the time package, so the
// test corrupts the wall-clock copies in the keys instead: the answer
// must not change.
func TestCompareMonotonicTimes(t *testing.T) {
	base := time.Now()
	mk := func(ready, created time.Time) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
				Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready),
			}}},
		}
	}
	pods := []*corev1.Pod{
		mk(base, base),
		mk(base.Add(time.Second), base.Add(time.Second)),
		mk(base.Round(0), base.Round(0).Add(time.Second)),
	}
	c := newConfig(Options{}, pods) // zero Now: exact times, later first
	keys := []key{c.key(0, 0), c.key(1, 0), c.key(2, 0)}
	for i := range keys {
		c.tail(&keys[i])
	}
	require.Equal(t, uint8(readyMono|createdMono|tailDone), keys[0].flags)
	require.Equal(t, uint8(tailDone), keys[2].flags)

	// Ready times: pod 1 is later, so it goes first.
	assert.Equal(t, 1, c.compare(&keys[0], &keys[1]))
	keys[1].readySec = keys[0].readySec - 100 // a wall clock that disagrees
	assert.Equal(t, 1, c.compare(&keys[0], &keys[1]), "both monotonic: the wall copy is not used")
	keys[0].readySec, keys[0].readyNsec = keys[1].readySec, keys[1].readyNsec
	assert.Equal(t, 1, c.compare(&keys[0], &keys[1]), "both monotonic: equal wall copies do not make them equal")

	// One monotonic, one not: the wall clocks decide, as in time.Time.
	assert.Equal(t, 0, c.compare(&keys[2], &keys[2]))
	keys[2].readySec = keys[1].readySec + 1000
	assert.Equal(t, -1, c.compare(&keys[2], &keys[1]), "mixed: the wall copy is used")
}

// TestBucketMonotonic: with a monotonic Now and a monotonic t, Now.Sub(t)
// subtracts the monotonic readings, so the wall-clock shortcut must not be
// taken. The wall-clock copy passed in is corrupted to prove it.
func TestBucketMonotonic(t *testing.T) {
	base := time.Now()
	c := newConfig(Options{Now: base.Add(time.Hour)}, nil)
	at := base
	sec, nsec := instant(at)
	require.True(t, hasMono(at))
	_, ok := c.delta(sec, nsec, true)
	assert.False(t, ok, "both monotonic: Sub must decide")
	_, ok = c.delta(sec, nsec, false)
	assert.True(t, ok, "one monotonic: the shortcut applies")
}

// TestPropertyUIDPrefixOrder: different prefixes order as the strings.
func TestPropertyUIDPrefixOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := rapid.SampledFrom([]byte{0, 1, 'a', 'b', 0x7f, 0x80, 0xff})
		a := string(rapid.SliceOfN(alphabet, 0, 10).Draw(t, "a"))
		b := string(rapid.SliceOfN(alphabet, 0, 10).Draw(t, "b"))
		pa, pb := uidPrefix(a), uidPrefix(b)
		if pa == pb {
			n := min(len(a), len(b), 8)
			assert.Equal(t, a[:n], b[:n], "equal prefixes, different first bytes")
			return
		}
		assert.Equal(t, strings.Compare(a, b), cmp.Compare(pa, pb))
	})
}
