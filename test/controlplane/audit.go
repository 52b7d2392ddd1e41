package controlplane

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// auditPolicy records, at Metadata level, every write to pods and
// ReplicaSets (and their subresources) once its response is complete.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted", "Panic"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: ""
    resources: ["pods", "pods/*"]
  - group: "apps"
    resources: ["replicasets", "replicasets/*"]
- level: None
`

// AdminUser is the user of RESTConfig and KubeconfigPath. The components
// authenticate as their own names (KubeControllerManager, KubeScheduler,
// Kwok); every one of them is in system:masters.
const AdminUser = "admin"

// ControllerUser is a user of its own for the controller under test (in
// system:masters like every user here), so that its writes stand apart from
// the admin's and kube-controller-manager's in [ControlPlane.Writes]: give
// it a kubeconfig from [ControlPlane.FaultProxy] or [ControlPlane.Kubeconfig].
const ControllerUser = "controller-under-test"

// Write is one kind of write in kube-apiserver's audit log.
type Write struct {
	User        string // AdminUser, or a component name (KubeControllerManager, KubeScheduler, Kwok)
	Verb        string // create, update, patch, delete, deletecollection
	Resource    string // pods, replicasets
	Subresource string // status, binding, …
	Code        int    // HTTP status code of the response
}

// WriteCounts maps each kind of write to how often it happened.
type WriteCounts map[Write]int

// Sum adds the writes by user (any user when "") with this verb, resource
// and subresource, over every code; code, when non-zero, restricts the sum to it.
func (c WriteCounts) Sum(user, verb, resource, subresource string, code int) int {
	n := 0
	for w, v := range c {
		if (user == "" || w.User == user) && w.Verb == verb && w.Resource == resource &&
			w.Subresource == subresource && (code == 0 || w.Code == code) {
			n += v
		}
	}
	return n
}

// Since returns c minus earlier, kind by kind.
func (c WriteCounts) Since(earlier WriteCounts) WriteCounts {
	out := make(WriteCounts, len(c))
	for w, v := range c {
		if d := v - earlier[w]; d != 0 {
			out[w] = d
		}
	}
	return out
}

func (cp *ControlPlane) auditPaths() (policy, log string) {
	return filepath.Join(cp.dir, "audit-policy.yaml"), filepath.Join(cp.dir, "audit.log")
}

// Writes reads kube-apiserver's audit log and counts the writes to pods and
// ReplicaSets by user, verb, resource, subresource and response code; it
// tells which client did what, which apiserver_request_total cannot. It
// needs [Options.AuditWrites]. kube-apiserver logs a write after answering
// it, so a write that has only just returned may not be counted yet.
func (cp *ControlPlane) Writes() (WriteCounts, error) {
	if !cp.opts.AuditWrites {
		return nil, fmt.Errorf("controlplane: Writes needs Options.AuditWrites")
	}
	_, path := cp.auditPaths()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("controlplane: audit log: %w", err)
	}
	defer f.Close()
	out := WriteCounts{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev struct {
			Stage string
			Verb  string
			User  struct {
				Username string
			}
			ObjectRef struct {
				Resource    string
				Subresource string
			}
			ResponseStatus struct {
				Code int
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			// kube-apiserver may be writing the last line right now.
			continue
		}
		if ev.Stage != "ResponseComplete" {
			continue
		}
		out[Write{User: ev.User.Username, Verb: ev.Verb, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Code: ev.ResponseStatus.Code}]++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("controlplane: audit log: %w", err)
	}
	return out, nil
}
