package controlplane

import (
	"slices"
	"strings"
	"testing"
)

// TestAuditLogNeverRotates: the audit counts scan the log from its start,
// so kube-apiserver must not rotate it (its default rotates at 100 MB).
func TestAuditLogNeverRotates(t *testing.T) {
	cp := &ControlPlane{dir: t.TempDir(), ports: map[string]int{}, opts: Options{AuditWrites: true}}
	args := cp.args(KubeAPIServer)
	if !slices.Contains(args, "--audit-log-maxsize=0") {
		t.Errorf("kube-apiserver's flags lack --audit-log-maxsize=0: %q", args)
	}
	cp.opts.AuditWrites = false
	if args := cp.args(KubeAPIServer); slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--audit-log") }) {
		t.Errorf("without AuditWrites, kube-apiserver's flags name an audit log: %q", args)
	}
}
