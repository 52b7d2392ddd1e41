package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPodTallyOneOwner(t *testing.T) {
	tl := newPodTally()
	tl.setDesired(3)
	for _, p := range []string{"p1", "p2", "p3", "p4"} {
		tl.observe(p, "web", true, true)
	}
	tl.observe("orphan", "", true, true)
	assert.Equal(t, 5, tl.added)
	assert.Equal(t, 4, len(tl.owner), "an orphan is not live for any owner")
	assert.Equal(t, 1, tl.peakSum)
	assert.Equal(t, 1, tl.peakOne)

	tl.observe("p4", "web", true, false) // an update: no new pod, no new peak
	tl.observe("p4", "web", false, false)
	tl.forget("p3")
	tl.forget("nope")
	assert.Equal(t, 2, tl.live["web"])
	assert.Equal(t, 0, tl.sum)

	tl.setDesired(1) // scaling down: surplus no longer tracked
	tl.observe("p5", "web", true, true)
	assert.Equal(t, 1, tl.peakSum)
	assert.Equal(t, 1, tl.peakOne)
}

func TestPodTallyFleet(t *testing.T) {
	tl := newPodTally()
	tl.setDesired(2)
	// a has 3 (one above), b has 1 (one short): the sum counts a's surplus.
	for _, p := range []string{"a1", "a2", "a3"} {
		tl.observe(p, "a", true, true)
	}
	tl.observe("b1", "b", true, true)
	assert.Equal(t, 1, tl.sum)
	assert.Equal(t, 1, tl.peakSum, "b's shortfall does not hide a's surplus")
	// c goes to 4 while a is still above: 1 + 2 at once.
	for _, p := range []string{"c1", "c2", "c3", "c4"} {
		tl.observe(p, "c", true, true)
	}
	assert.Equal(t, 3, tl.peakSum)
	assert.Equal(t, 2, tl.peakOne)
	// a's surplus goes, then c's; the peaks stay.
	tl.observe("a3", "a", false, false)
	tl.forget("c4")
	tl.forget("c3")
	assert.Equal(t, 0, tl.sum)
	assert.Equal(t, 3, tl.peakSum)
	assert.Equal(t, 2, tl.peakOne)
	assert.Equal(t, map[string]int{"a": 2, "b": 1, "c": 2}, tl.live)

	// Raising the desired count re-reads every owner's surplus.
	tl.setDesired(1)
	assert.Equal(t, 2, tl.sum, "a and c one above each")
	tl.setDesired(5)
	assert.Equal(t, 0, tl.sum)
	assert.Equal(t, 3, tl.peakSum)
}
