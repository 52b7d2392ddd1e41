package controlplane

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// auditPolicyFor returns the audit policy that records, at Metadata level,
// every request of the users (a watch once when its response starts and
// again when it ends, every other request when its response is complete),
// and every write to pods, ReplicaSets and the examples' PodSets (and their
// subresources) by anyone once its response is complete.
func auditPolicyFor(users []string) string {
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = strconv.Quote(u)
	}
	return auditPolicyHead + strings.Join(quoted, ", ") + auditPolicyTail
}

const auditPolicyHead = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "Panic"]
rules:
- level: Metadata
  users: [`

const auditPolicyTail = `]
- level: Metadata
  omitStages: ["ResponseStarted"]
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
  resources:
  - group: ""
    resources: ["pods", "pods/*"]
  - group: "apps"
    resources: ["replicasets", "replicasets/*"]
  - group: "demo.reconcilekit.dev"
    resources: ["podsets", "podsets/*"]
- level: None
`

// AdminUser is the user of RESTConfig and KubeconfigPath. The components
// authenticate as their own names (KubeControllerManager, KubeScheduler,
// Kwok); every one of them is in system:masters.
const AdminUser = "admin"

// ControllerUser is a user of its own for the controller under test (in
// system:masters like every built-in user), so that its writes stand apart from
// the admin's and kube-controller-manager's in [ControlPlane.Writes]: give
// it a kubeconfig from [ControlPlane.FaultProxy] or [ControlPlane.Kubeconfig].
const ControllerUser = "controller-under-test"

// Write is one kind of write in kube-apiserver's audit log.
type Write struct {
	User        string // AdminUser, ControllerUser or a component name (KubeControllerManager, KubeScheduler, Kwok)
	Verb        string // create, update, patch, delete, deletecollection
	Resource    string // pods, replicasets, podsets
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

// VerbCounts maps each verb (get, list, watch, create, update, patch,
// delete, …) to how many requests used it.
type VerbCounts map[string]int

// Since returns c minus earlier, verb by verb.
func (c VerbCounts) Since(earlier VerbCounts) VerbCounts {
	out := make(VerbCounts, len(c))
	for v, n := range c {
		if d := n - earlier[v]; d != 0 {
			out[v] = d
		}
	}
	return out
}

// AuditCounts is what [ControlPlane.Audit] reads from kube-apiserver's audit
// log.
type AuditCounts struct {
	// Writes are the writes to pods, ReplicaSets and PodSets, by every user.
	Writes WriteCounts
	// Requests are ControllerUser's requests of every kind, by verb: each
	// request once, a watch when its response starts (so an open watch
	// counts), any other request when its response is complete.
	Requests VerbCounts
	// UserRequests are the requests of ControllerUser and of every user of
	// [Options.Users], by user, counted as Requests.
	UserRequests map[string]VerbCounts
	// ResourceRequests are ControllerUser's requests counted as Requests,
	// by verb and resource: the key is the verb, a space and the resource,
	// with "/" and the subresource when there is one ("create pods",
	// "update podsets/status", "watch pods"); a request with no resource
	// (a discovery path) has the verb alone.
	ResourceRequests VerbCounts
}

func (cp *ControlPlane) auditPaths() (policy, log string) {
	return filepath.Join(cp.dir, "audit-policy.yaml"), filepath.Join(cp.dir, "audit.log")
}

// Writes reads kube-apiserver's audit log and counts the writes to pods,
// ReplicaSets and PodSets by user, verb, resource, subresource and response
// code; it tells which client did what, which apiserver_request_total
// cannot. It needs [Options.AuditWrites]. kube-apiserver logs a write after
// answering it, so a write that has only just returned may not be counted
// yet.
func (cp *ControlPlane) Writes() (WriteCounts, error) {
	c, err := cp.Audit()
	return c.Writes, err
}

// Audit reads kube-apiserver's audit log once: the writes, as [ControlPlane.Writes]
// counts them, and ControllerUser's requests by verb. It needs
// [Options.AuditWrites].
func (cp *ControlPlane) Audit() (AuditCounts, error) {
	if !cp.opts.AuditWrites {
		return AuditCounts{}, fmt.Errorf("controlplane: Audit needs Options.AuditWrites")
	}
	_, path := cp.auditPaths()
	f, err := os.Open(path)
	if err != nil {
		return AuditCounts{}, fmt.Errorf("controlplane: audit log: %w", err)
	}
	defer f.Close()
	return countAudit(f, cp.auditedUsers())
}

// auditedUsers are the users whose every request the audit policy records:
// ControllerUser and the users of Options.Users.
func (cp *ControlPlane) auditedUsers() []string {
	users := []string{ControllerUser}
	for _, u := range cp.opts.Users {
		users = append(users, u.Name)
	}
	return users
}

// countAudit counts the events of an audit log (one JSON event per line),
// with the requests of users by verb. A line that does not parse is skipped:
// kube-apiserver may be writing the last one right now.
func countAudit(r io.Reader, users []string) (AuditCounts, error) {
	out := AuditCounts{Writes: WriteCounts{}, UserRequests: map[string]VerbCounts{}, ResourceRequests: VerbCounts{}}
	for _, u := range users {
		out.UserRequests[u] = VerbCounts{}
	}
	out.Requests = out.UserRequests[ControllerUser]
	if out.Requests == nil {
		out.Requests = VerbCounts{}
	}
	// The requests counted when their response started, until it completes.
	started := map[string]bool{}
	err := scanAudit(r, func(ev *auditRecord) {
		user := ev.User.Username
		count := func(verbs VerbCounts) {
			verbs[ev.Verb]++
			if user == ControllerUser {
				out.ResourceRequests[verbResource(ev)]++
			}
		}
		switch ev.Stage {
		case "ResponseStarted":
			if verbs, ok := out.UserRequests[user]; ok {
				count(verbs)
				started[ev.AuditID] = true
			}
		case "ResponseComplete":
			if verbs, ok := out.UserRequests[user]; ok {
				if started[ev.AuditID] {
					delete(started, ev.AuditID)
				} else {
					count(verbs)
				}
			}
			if isWrite(ev.Verb) && writeAudited(ev.ObjectRef.Resource) {
				out.Writes[Write{User: user, Verb: ev.Verb, Resource: ev.ObjectRef.Resource,
					Subresource: ev.ObjectRef.Subresource, Code: ev.ResponseStatus.Code}]++
			}
		}
	})
	if err != nil {
		return AuditCounts{}, err
	}
	return out, nil
}

// verbResource is ev's key in AuditCounts.ResourceRequests.
func verbResource(ev *auditRecord) string {
	switch {
	case ev.ObjectRef.Resource == "":
		return ev.Verb
	case ev.ObjectRef.Subresource != "":
		return ev.Verb + " " + ev.ObjectRef.Resource + "/" + ev.ObjectRef.Subresource
	}
	return ev.Verb + " " + ev.ObjectRef.Resource
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// writeAudited tells the resources whose writes the policy logs for every
// user; ControllerUser's other writes (events, …) are only in Requests.
func writeAudited(resource string) bool {
	switch resource {
	case "pods", "replicasets", "podsets":
		return true
	}
	return false
}

// AuditEvent is one completed request of an audited user (ControllerUser
// or a user of [Options.Users]), as [ControlPlane.AuditEvents] reads it: who
// did what to which object, when, and with what answer. A Lease write
// tells which replica holds the lease; the times tell what a replica did
// after a moment (a hand-over, a resume).
type AuditEvent struct {
	User        string
	Verb        string // create, update, patch, delete, get, list, watch, …
	APIGroup    string // "" for the core group, coordination.k8s.io, apps, …
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int       // HTTP status code of the response
	Received    time.Time // when kube-apiserver received the request (requestReceivedTimestamp)
	Completed   time.Time // when its response was complete (stageTimestamp)
}

// Write reports whether e is a write to pods, ReplicaSets or PodSets
// (subresources included): what a ReplicaSet controller changes in the
// cluster, not its Lease or Events.
func (e AuditEvent) Write() bool {
	return isWrite(e.Verb) && writeAudited(e.Resource)
}

// AuditEvents reads kube-apiserver's audit log and returns every completed
// request of ControllerUser and of the users of [Options.Users], in the
// log's order (the order of completion). It needs [Options.AuditWrites].
// As with [ControlPlane.Writes], a request that has only just returned may
// not be in the log yet.
func (cp *ControlPlane) AuditEvents() ([]AuditEvent, error) {
	if !cp.opts.AuditWrites {
		return nil, fmt.Errorf("controlplane: AuditEvents needs Options.AuditWrites")
	}
	_, path := cp.auditPaths()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("controlplane: audit log: %w", err)
	}
	defer f.Close()
	return readAuditEvents(f, cp.auditedUsers())
}

// readAuditEvents returns the ResponseComplete events of users in an audit
// log (one JSON event per line); a line that does not parse is skipped.
func readAuditEvents(r io.Reader, users []string) ([]AuditEvent, error) {
	audited := map[string]bool{}
	for _, u := range users {
		audited[u] = true
	}
	var out []AuditEvent
	err := scanAudit(r, func(ev *auditRecord) {
		if ev.Stage != "ResponseComplete" || !audited[ev.User.Username] {
			return
		}
		out = append(out, AuditEvent{
			User: ev.User.Username, Verb: ev.Verb,
			APIGroup: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource, Subresource: ev.ObjectRef.Subresource,
			Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name,
			Code:     ev.ResponseStatus.Code,
			Received: ev.RequestReceivedTimestamp, Completed: ev.StageTimestamp,
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// auditRecord is one event of kube-apiserver's audit log, the fields the
// readers here use.
type auditRecord struct {
	AuditID string
	Stage   string
	Verb    string
	User    struct {
		Username string
	}
	ObjectRef struct {
		APIGroup    string
		Resource    string
		Subresource string
		Namespace   string
		Name        string
	}
	ResponseStatus struct {
		Code int
	}
	Annotations              map[string]string
	RequestReceivedTimestamp time.Time
	StageTimestamp           time.Time
}

// scanAudit calls fn with each event of an audit log (one JSON event per
// line), in order. A line that does not parse is skipped: kube-apiserver
// may be writing the last one right now.
func scanAudit(r io.Reader, fn func(ev *auditRecord)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var ev auditRecord
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		fn(&ev)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("controlplane: audit log: %w", err)
	}
	return nil
}
