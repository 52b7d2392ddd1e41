package expectations_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// TestTrackerManyKeysModel stores, overwrites and deletes thousands of keys
// (dozens per shard, so the shards' tables grow and shift entries on delete)
// and checks every key against a plain map after each batch.
func TestTrackerManyKeysModel(t *testing.T) {
	const pool = 3000
	keys := make([]string, pool)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/rs-%d", i%7, i)
	}
	rapid.Check(t, func(t *rapid.T) {
		var tr expectations.Tracker
		model := map[string]int{}
		batches := rapid.IntRange(1, 4).Draw(t, "batches")
		for range batches {
			ops := rapid.IntRange(0, 4000).Draw(t, "ops")
			lo := rapid.IntRange(0, pool-1).Draw(t, "lo")
			span := rapid.IntRange(1, pool).Draw(t, "span")
			deleteShare := rapid.IntRange(0, 3).Draw(t, "deleteShare") // out of 4
			seed := rapid.Int().Draw(t, "seed")
			for i := range ops {
				x := uint64(seed) ^ uint64(i)*0x9e3779b97f4a7c15
				x ^= x >> 29
				key := keys[(lo+int(x%uint64(span)))%pool]
				if int(x>>40)%4 < deleteShare {
					tr.Delete(key)
					delete(model, key)
				} else {
					tr.Set(key, i+1, 0)
					model[key] = i + 1
				}
			}
			for _, key := range keys {
				adds, _, ok := tr.Pending(key)
				want, wantOK := model[key]
				if ok != wantOK || adds != want {
					t.Fatalf("key %q: Pending = (%d, %v), want (%d, %v)", key, adds, ok, want, wantOK)
				}
			}
		}
	})
}
