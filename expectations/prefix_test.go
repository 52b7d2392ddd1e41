package expectations_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reconcilekit/reconcilekit/expectations"
)

func TestPrefix(t *testing.T) {
	var tr expectations.Tracker
	assert.Nil(t, tr.KeysWithPrefix(""), "zero Tracker: no keys")
	assert.Zero(t, tr.DeletePrefix(""), "zero Tracker: nothing to delete")

	for _, k := range []string{"ns/web/workers", "ns/web/ps", "ns/web", "ns/webby", "other/db"} {
		tr.AddCreationKey(k, k+"-pod")
	}
	assert.Equal(t, []string{"ns/web/ps", "ns/web/workers"}, tr.KeysWithPrefix("ns/web/"), "one owner's groups")
	assert.Equal(t, []string{"ns/web", "ns/web/ps", "ns/web/workers", "ns/webby", "other/db"}, tr.KeysWithPrefix(""))
	assert.Nil(t, tr.KeysWithPrefix("none/"))

	assert.Equal(t, 2, tr.DeletePrefix("ns/web/"))
	assert.True(t, tr.Satisfied("ns/web/workers"), "a deleted key has no record")
	assert.Equal(t, []string{"ns/web", "ns/webby", "other/db"}, tr.KeysWithPrefix(""))
	assert.Equal(t, 3, tr.DeletePrefix(""))
	assert.Nil(t, tr.KeysWithPrefix(""))
}
