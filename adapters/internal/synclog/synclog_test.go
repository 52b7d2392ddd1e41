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

// sentinel is an error that matches the sentinels it wraps, as the
// library's deferral and invalid-spec errors do.
type sentinel struct {
	msg  string
	errs []error
}

func (e *sentinel) Error() string   { return e.msg }
func (e *sentinel) Unwrap() []error { return e.errs }

// At the default level: expired expectations acted on, an invalid owner
// spec and failures (when asked); at V(2) a deferral, the gate's with the
// cache behind, the caches' not synced yet, never at the
// default level; at V(4) one line per sync with owner, action and outcome;
// never a line per pod by default.
func TestSyncLines(t *testing.T) {
	stale := &expectations.StaleCacheError{Key: "ns/a", Resource: expectations.PodsResource, Written: "9", Read: "7"}
	gate := &sentinel{"reconcile: owner ns/a: sync deferred: the pods cache is behind", []error{reconcile.ErrDeferred, stale}}
	notSynced := &sentinel{"reconcile: owner ns/a: sync deferred: the informer caches have not synced yet", []error{reconcile.ErrDeferred, reconcile.ErrNotSynced}}
	invalid := &sentinel{"reconcile: owner ns/a: invalid spec: spec.template.metadata.labels: Invalid value", []error{reconcile.ErrInvalidSpec, reconcile.ErrTerminal}}
	created := reconcile.SyncResult{Owner: reconcile.Owner{Key: "ns/a"}, Expectations: expectations.Status{Satisfied: true}, Managed: true,
		Outcome: reconcile.Outcome{Diff: -500, Expected: 500, Created: make([]*corev1.Pod, 500)}}
	expired := created
	expired.Expectations = expectations.Status{Satisfied: true, Resolution: expectations.Expired, Adds: 2, Age: 6 * time.Minute}
	tests := []struct {
		name      string
		res       reconcile.SyncResult
		err       error
		logErrors bool
		want      []string // substrings of the default-level lines, in order
		wantV2    []string // substrings of the lines at V(2) and below
	}{
		{"ok: nothing by default", created, nil, true, nil, nil},
		{"R-10.9 gate deferral: V(2) only", reconcile.SyncResult{}, gate, true, nil,
			[]string{`"msg"="Sync deferred: an informer cache is behind`, `"owner"="ns/a" "resource"="pods" "cacheResourceVersion"="7" "writtenResourceVersion"="9"`}},
		{"R-10.9 a bare StaleCacheError is a deferral too", reconcile.SyncResult{}, fmt.Errorf("deferred: %w", stale), true, nil,
			[]string{`"msg"="Sync deferred: an informer cache is behind`}},
		{"R-14.8 caches not synced: V(2) only", reconcile.SyncResult{}, notSynced, true, nil,
			[]string{`"msg"="Sync deferred: the informer caches have not synced yet; retrying with backoff" "owner"="ns/a"`}},
		{"expired", expired, nil, false, []string{`"msg"="Expectations expired`, `"pendingCreates"=2`}, nil},
		{"R-14.7 invalid spec, logged with the field", reconcile.SyncResult{}, invalid, true,
			[]string{`"msg"="Owner spec is invalid`, `spec.template.metadata.labels`}, nil},
		{"R-14.7 invalid spec, left to the framework", reconcile.SyncResult{}, invalid, false, nil, nil},
		{"terminal, logged", reconcile.SyncResult{}, fmt.Errorf("bad: %w", reconcile.ErrTerminal), true, []string{`will not be retried`}, nil},
		{"terminal, left to the framework", reconcile.SyncResult{}, fmt.Errorf("bad: %w", reconcile.ErrTerminal), false, nil, nil},
		{"error, logged", reconcile.SyncResult{}, errors.New("conflict"), true, []string{`retrying with backoff`, `"error"="conflict"`}, nil},
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

			logger, lines = capture(synclog.DeferralLevel)
			synclog.Sync(logger, "ns/a", tt.res, tt.err, time.Millisecond, tt.logErrors)
			all = strings.Join(*lines, "\n")
			for _, w := range append(tt.want, tt.wantV2...) {
				assert.Contains(t, all, w)
			}
			assert.LessOrEqual(t, len(*lines), 1, "at most one line per sync at V(2)")

			logger, lines = capture(4)
			synclog.Sync(logger, "ns/a", tt.res, tt.err, time.Millisecond, tt.logErrors)
			last := (*lines)[len(*lines)-1]
			assert.Contains(t, last, `"msg"="Synced" "owner"="ns/a"`)
			assert.Contains(t, last, `"action"=`)
			assert.Contains(t, last, `"result"=`)
		})
	}
}
