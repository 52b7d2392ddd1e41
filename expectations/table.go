package expectations

// table is a shard's index from controller key to record: open addressing
// with linear probing over slots that carry the key's hash. The Tracker
// hashes a key once, picking the shard with the hash's top bits and the slot
// with its low bits, where a Go map would hash it a second time. Its zero
// value is an empty table. It is not safe for concurrent use; the shard's
// mutex guards it.
type table struct {
	slots []slot // nil or a power-of-two length; a nil rec marks a free slot
	n     int    // occupied slots
}

type slot struct {
	hash uint64
	key  string
	rec  *record
}

// minSlots is the size of a table's first allocation.
const minSlots = 8

// find returns the record stored under key (whose hash is h), or nil.
func (tb *table) find(h uint64, key string) *record {
	if tb.slots == nil {
		return nil
	}
	mask := uint64(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &tb.slots[i]
		if s.rec == nil {
			return nil
		}
		if s.hash == h && s.key == key {
			return s.rec
		}
	}
}

// insert stores r under key, which must not be present.
func (tb *table) insert(h uint64, key string, r *record) {
	// Keep the load at most 3/4 so that probe sequences stay short and a
	// free slot always ends them.
	if 4*(tb.n+1) > 3*len(tb.slots) {
		tb.grow()
	}
	tb.place(slot{hash: h, key: key, rec: r})
	tb.n++
}

// place puts s into the first free slot of its probe sequence.
func (tb *table) place(s slot) {
	mask := uint64(len(tb.slots) - 1)
	i := s.hash & mask
	for tb.slots[i].rec != nil {
		i = (i + 1) & mask
	}
	tb.slots[i] = s
}

// grow doubles the table and re-places every entry.
func (tb *table) grow() {
	old := tb.slots
	tb.slots = make([]slot, max(minSlots, 2*len(old)))
	for _, s := range old {
		if s.rec != nil {
			tb.place(s)
		}
	}
}

// remove deletes key's entry, if any. It shifts later entries of the probe
// run back into the gap (no tombstones), so that find still reaches them.
func (tb *table) remove(h uint64, key string) {
	if tb.slots == nil {
		return
	}
	mask := uint64(len(tb.slots) - 1)
	i := h & mask
	for {
		s := &tb.slots[i]
		if s.rec == nil {
			return // not present
		}
		if s.hash == h && s.key == key {
			break
		}
		i = (i + 1) & mask
	}
	// i is the gap. An entry at j may move back into it only if its home
	// slot does not lie cyclically within (i, j]: it would then be found
	// before reaching the gap's position.
	for j := (i + 1) & mask; tb.slots[j].rec != nil; j = (j + 1) & mask {
		home := tb.slots[j].hash & mask
		if (j-home)&mask >= (j-i)&mask {
			tb.slots[i] = tb.slots[j]
			i = j
		}
	}
	tb.slots[i] = slot{}
	tb.n--
}
