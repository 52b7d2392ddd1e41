package expectations_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reconcilekit/reconcilekit/expectations"
)

func TestWroteRoundEvidence(t *testing.T) {
	tests := []struct {
		name    string
		writes  []string
		wantRV  string
		invalid bool
	}{
		{name: "none"},
		{name: "one", writes: []string{"42"}, wantRV: "42"},
		{name: "the highest wins", writes: []string{"42", "100", "99"}, wantRV: "100"},
		{name: "numeric order, not string order", writes: []string{"9", "10", "8"}, wantRV: "10"},
		{name: "equal versions", writes: []string{"7", "7"}, wantRV: "7"},
		{name: "empty is malformed", writes: []string{"5", ""}, invalid: true},
		{name: "leading zeros are malformed", writes: []string{"007"}, invalid: true},
		{name: "zero is malformed", writes: []string{"0"}, invalid: true},
		{name: "non-numeric is malformed", writes: []string{"abc", "12"}, invalid: true},
		{name: "malformed sticks for the round", writes: []string{"1x", "99"}, invalid: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := newTracker(0)
			tr.ExpectCreations(rsKey, 1)
			for _, rv := range tc.writes {
				tr.Gate().Wrote(rsKey, "", expectations.PodsResource, rv)
			}
			snap, _ := tr.Snapshot(rsKey)
			assert.Equal(t, tc.wantRV, snap.WriteRV)
			assert.Equal(t, tc.invalid, snap.WriteRVInvalid)

			tr.Set(rsKey, 1, 0) // a new round starts without evidence
			snap, _ = tr.Snapshot(rsKey)
			assert.Empty(t, snap.WriteRV)
			assert.False(t, snap.WriteRVInvalid)
		})
	}
}

func TestWroteWithoutRoundRecord(t *testing.T) {
	tr, _ := newTracker(0)
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "10")
	_, ok := tr.Snapshot(rsKey)
	assert.False(t, ok, "Wrote creates no expectations record")

	tr.ExpectCreations(rsKey, 1)
	tr.Delete(rsKey)
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "10")
	_, _, ok = tr.Pending(rsKey)
	assert.False(t, ok)
}

// TestEvidenceSnapshotString shows the "why" line for each EvidenceFirst verdict.
func TestEvidenceSnapshotString(t *testing.T) {
	cache := &fakeCache{}
	tr, clk := newTrackerWith(expectations.Options{Policy: expectations.EvidenceFirst, Gate: podsGate(cache.Version)})
	tr.ExpectCreationKeys(rsKey, []string{"default/web-b", "default/web-a"})
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "120")
	clk.Step(expectations.DefaultTTL * 2)

	cache.rv = "118"
	snap, _ := tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: waiting for 2 creations [default/web-a default/web-b] for 10m0s: "+
		"the cache (RV 118) is behind the controller's writes (RV 120) (gives up after 30m0s)", snap.String())
	assert.Equal(t, "118", snap.CacheRV)

	cache.rv = "121"
	snap, _ = tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: satisfied: the cache (RV 121) has reached the controller's writes (RV 120), "+
		"so the events for 2 creations [default/web-a default/web-b] were missed", snap.String())

	cache.rv = "118"
	clk.Step(expectations.DefaultSafetyLimit)
	snap, _ = tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: satisfied: expired after 40m0s (limit 30m0s) with 2 creations "+
		"[default/web-a default/web-b] still pending", snap.String())
}

func TestNeverExpireSnapshotString(t *testing.T) {
	tr, clk := newTrackerWith(expectations.Options{Policy: expectations.NeverExpire})
	tr.ExpectCreations(rsKey, 1)
	clk.Step(expectations.DefaultTTL * 3)
	snap, _ := tr.Snapshot(rsKey)
	assert.Equal(t, "default/web: waiting for 1 creation for 15m0s (never expires)", snap.String())
	assert.Equal(t, expectations.NeverExpire, snap.Policy)
}

// FuzzWrote feeds arbitrary resourceVersions to Wrote: it never
// panics, keeps the highest well-formed one, and marks the round's evidence
// unusable as soon as one is malformed.
func FuzzWrote(f *testing.F) {
	for _, seed := range [][2]string{
		{"1", "2"}, {"10", "9"}, {"", "5"}, {"007", "7"}, {"0", "1"}, {"18446744073709551616", "99"}, {"-1", "+1"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		tr, _ := newTracker(0)
		tr.ExpectCreations(rsKey, 1)
		tr.Gate().Wrote(rsKey, "", expectations.PodsResource, a)
		tr.Gate().Wrote(rsKey, "", expectations.PodsResource, b)
		snap, _ := tr.Snapshot(rsKey)
		if !wellFormedRV(a) || !wellFormedRV(b) {
			assert.True(t, snap.WriteRVInvalid, "%q, %q", a, b)
			assert.Empty(t, snap.WriteRV)
			return
		}
		want := a
		if len(b) > len(a) || (len(b) == len(a) && b > a) {
			want = b
		}
		assert.False(t, snap.WriteRVInvalid)
		assert.Equal(t, want, snap.WriteRV)
	})
}

// wellFormedRV is the test's own statement of a well-formed resourceVersion:
// a positive decimal integer without leading zeros, of any length.
func wellFormedRV(rv string) bool {
	if rv == "" || rv[0] == '0' {
		return false
	}
	for _, c := range []byte(rv) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// A round marked unverifiable falls back to the TTL under EvidenceFirst,
// however far the cache has passed the round's writes; the next round starts
// without the mark.
func TestRecordUnverifiable(t *testing.T) {
	cache := &fakeCache{rv: "500"}
	tr, clk := newTrackerWith(expectations.Options{Policy: expectations.EvidenceFirst, Gate: podsGate(cache.Version)})
	tr.RecordUnverifiable(rsKey) // no record: nothing to mark
	_, ok := tr.Snapshot(rsKey)
	assert.False(t, ok)

	tr.ExpectCreationKeys(rsKey, []string{"default/web-a", "default/web-b"})
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "120")
	tr.RecordUnverifiable(rsKey)
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "130") // later writes do not restore the evidence
	st := tr.Check(rsKey)
	assert.False(t, st.Satisfied, "the cache (RV 500) passed the writes, but the round cannot be settled by them")
	assert.Equal(t, expectations.Waiting, st.Resolution)
	snap, _ := tr.Snapshot(rsKey)
	assert.True(t, snap.WriteRVInvalid)

	clk.Step(expectations.DefaultTTL + 1)
	st = tr.Check(rsKey)
	assert.True(t, st.Satisfied)
	assert.Equal(t, expectations.Expired, st.Resolution)

	tr.ExpectCreationKeys(rsKey, []string{"default/web-c"})
	tr.Gate().Wrote(rsKey, "", expectations.PodsResource, "140")
	st = tr.Check(rsKey)
	assert.True(t, st.Satisfied, "a new round uses evidence again")
	assert.Equal(t, expectations.ResolvedByEvidence, st.Resolution)
}

// TestEvidenceComesFromTheGate: an EvidenceFirst Tracker reads its evidence
// from the Gate in Options.Gate — the pod writes recorded there and its pods
// cache — and from no other Gate; without a Gate it decides by the TTL.
func TestEvidenceComesFromTheGate(t *testing.T) {
	cache := &fakeCache{rv: "200"}
	mine, other := podsGate(cache.Version), podsGate(cache.Version)
	tr, clk := newTrackerWith(expectations.Options{Policy: expectations.EvidenceFirst, Gate: mine})
	require.Same(t, mine, tr.Gate())

	tr.ExpectCreationKeys(rsKey, []string{"default/web-a"})
	other.Wrote(rsKey, "u1", expectations.PodsResource, "120")
	assert.Equal(t, expectations.Waiting, tr.Check(rsKey).Resolution, "another Gate's write is no evidence")
	mine.Wrote(rsKey, "u1", gateRS, "120")
	assert.Equal(t, expectations.Waiting, tr.Check(rsKey).Resolution, "a write of another resource is no evidence")
	mine.Wrote(rsKey, "u1", expectations.PodsResource, "120")
	assert.Equal(t, expectations.ResolvedByEvidence, tr.Check(rsKey).Resolution, "the Gate's pod write, passed by its pods cache")

	t.Run("a Gate clear keeps the round's evidence; Delete keeps the Gate's record", func(t *testing.T) {
		tr.ExpectCreationKeys(rsKey, []string{"default/web-b"})
		mine.Wrote(rsKey, "u1", expectations.PodsResource, "150")
		mine.Clear(rsKey, "")
		assert.Equal(t, expectations.ResolvedByEvidence, tr.Check(rsKey).Resolution)
		mine.Wrote(rsKey, "u1", expectations.PodsResource, "160")
		tr.Delete(rsKey)
		v, ok := mine.Written(rsKey, expectations.PodsResource)
		assert.True(t, ok)
		assert.Equal(t, "160", v)
	})

	t.Run("a Gate without a pods cache gives no evidence", func(t *testing.T) {
		tr, clk := newTrackerWith(expectations.Options{Policy: expectations.EvidenceFirst}) // a zero Gate
		tr.ExpectCreationKeys(rsKey, []string{"default/web-a"})
		tr.Gate().Wrote(rsKey, "u1", expectations.PodsResource, "120")
		assert.Equal(t, expectations.Waiting, tr.Check(rsKey).Resolution)
		clk.Step(expectations.DefaultTTL + 1)
		assert.Equal(t, expectations.Expired, tr.Check(rsKey).Resolution, "the TTL applies")
	})

	t.Run("no Gate: EvidenceFirst decides by the TTL", func(t *testing.T) {
		tr := expectations.New(expectations.Options{Policy: expectations.EvidenceFirst, Clock: clk})
		assert.Nil(t, tr.Gate())
		tr.ExpectCreationKeys(rsKey, []string{"default/web-a"})
		mine.Wrote(rsKey, "u1", expectations.PodsResource, "120")
		snap, _ := tr.Snapshot(rsKey)
		assert.Empty(t, snap.WriteRV, "no Gate, no evidence")
		assert.Equal(t, expectations.Waiting, snap.Resolution)
		clk.Step(expectations.DefaultTTL + 1)
		assert.Equal(t, expectations.Expired, tr.Check(rsKey).Resolution)
	})

	t.Run("every Tracker on a Gate receives its pod writes", func(t *testing.T) {
		g := podsGate(cache.Version)
		a := expectations.New(expectations.Options{Policy: expectations.EvidenceFirst, Gate: g})
		b := expectations.New(expectations.Options{Policy: expectations.EvidenceFirst, Gate: g})
		a.ExpectCreations(rsKey, 1)
		b.ExpectCreations(rsKey, 1)
		g.Wrote(rsKey, "u1", expectations.PodsResource, "120")
		assert.Equal(t, expectations.ResolvedByEvidence, a.Check(rsKey).Resolution)
		assert.Equal(t, expectations.ResolvedByEvidence, b.Check(rsKey).Resolution)
	})
}
