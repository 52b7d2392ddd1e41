package synclog_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/reconcilekit/reconcilekit/adapters/internal/synclog"
	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// capture returns a logger at verbosity v and the lines it wrote.
func capture(v int) (logr.Logger, *[]string) {
	var lines []string
	return funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: v}), &lines
}

// At the default level: a deferral with the cache behind, expired
// expectations acted on, failures (when asked); at V(4) one line per sync
// with owner, action and outcome; never a line per pod by default.
func TestSyncLines(t *testing.T) {
	stale := &expectations.StaleCacheError{Key: "ns/a", Resource: expectations.PodsResource, Written: "9", Read: "7"}
	created := reconcile.SyncResult{Owner: reconcile.Owner{Key: "ns/a"}, Satisfied: true, Managed: true,
		Outcome: reconcile.Outcome{Diff: -500, Expected: 500, Created: make([]*corev1.Pod, 500)}}
	expired := created
	expired.Expectations = expectations.Status{Satisfied: true, Resolution: expectations.Expired, Adds: 2, Age: 6 * time.Minute}
	tests := []struct {
		name      string
		res       reconcile.SyncResult
		err       error
		logErrors bool
		want      []string // substrings of the default-level lines, in order
	}{
		{"ok: nothing by default", created, nil, true, nil},
		{"deferred", reconcile.SyncResult{}, fmt.Errorf("deferred: %w", stale), false,
			[]string{`"msg"="Sync deferred`, `"owner"="ns/a" "resource"="pods" "cacheResourceVersion"="7" "writtenResourceVersion"="9"`}},
		{"expired", expired, nil, false, []string{`"msg"="Expectations expired`, `"pendingCreates"=2`}},
		{"terminal, logged", reconcile.SyncResult{}, fmt.Errorf("bad: %w", reconcile.ErrTerminal), true, []string{`will not be retried`}},
		{"terminal, left to the framework", reconcile.SyncResult{}, fmt.Errorf("bad: %w", reconcile.ErrTerminal), false, nil},
		{"error, logged", reconcile.SyncResult{}, errors.New("conflict"), true, []string{`retrying with backoff`, `"error"="conflict"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, lines := capture(0)
			synclog.Sync(logger, "ns/a", tt.res, tt.err, time.Millisecond, tt.logErrors)
			all := strings.Join(*lines, "\n")
			for _, w := range tt.want {
				assert.Contains(t, all, w)
			}
			if tt.want == nil {
				assert.Empty(t, *lines)
			}
			assert.LessOrEqual(t, len(*lines), 1, "at most one default-level line per sync")
			assert.NotContains(t, all, "ns/a-", "a pod named at the default level")

			logger, lines = capture(4)
			synclog.Sync(logger, "ns/a", tt.res, tt.err, time.Millisecond, tt.logErrors)
			last := (*lines)[len(*lines)-1]
			assert.Contains(t, last, `"msg"="Synced" "owner"="ns/a"`)
			assert.Contains(t, last, `"action"=`)
			assert.Contains(t, last, `"result"=`)
		})
	}
}
