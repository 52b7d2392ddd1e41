package expectations

import (
	"slices"
	"strings"
)

// KeysWithPrefix returns the keys that have a record and start with prefix,
// sorted; nil when there are none. With keys built as owner key plus a
// suffix per pod group ("namespace/name/group"), the owner key and its
// separator list every group of one owner; "" lists every key. It scans
// every record under the Tracker's lock: O(keys). Safe for concurrent use.
func (t *Tracker) KeysWithPrefix(prefix string) []string {
	var keys []string
	t.mu.Lock()
	for k := range t.records {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	t.mu.Unlock()
	slices.Sort(keys)
	return keys
}

// DeletePrefix is Delete for every key that starts with prefix ("" for all),
// in one critical section, and returns how many it forgot: what a
// controller calls when an owner with one key per pod group goes away. It
// scans every record: O(keys). Safe for concurrent use.
func (t *Tracker) DeletePrefix(prefix string) (deleted int) {
	t.mu.Lock()
	for k := range t.records {
		if strings.HasPrefix(k, prefix) {
			delete(t.records, k)
			deleted++
		}
	}
	t.mu.Unlock()
	return deleted
}
