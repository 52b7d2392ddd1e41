package clientgo_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/record"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// TestEventPerBatch: with EventPerBatch a scale-up records one
// SuccessfulCreate per slow-start batch (1, 2, 4, 3 for 10 pods), without
// it one per pod, as upstream.
func TestEventPerBatch(t *testing.T) {
	for _, c := range []struct {
		perBatch bool
		want     int
	}{{false, 10}, {true, 4}} {
		rec := record.NewFakeRecorder(100)
		pc := clientgo.PodControl{Client: fakecluster.New(1, fakecluster.Faults{}).Clientset, Recorder: rec, EventPerBatch: c.perBatch}
		m := &reconcile.Manager{Pods: pc}
		out, err := m.ManageReplicas(t.Context(), reconcile.ReplicaSetOwner(replicaSet("web", 10)), nil, nil)
		require.NoError(t, err)
		require.Len(t, out.Created, 10)
		close(rec.Events)
		var events []string
		for e := range rec.Events {
			events = append(events, e)
		}
		assert.Len(t, events, c.want, "EventPerBatch %v: %q", c.perBatch, events)
		if c.perBatch {
			assert.Regexp(t, `^Normal SuccessfulCreate Created pod: web-\w+$`, events[0])
			assert.Regexp(t, `^Normal SuccessfulCreate Created 3 pods: web-\w+, web-\w+, web-\w+$`, events[3])
		}
	}
}
