package controlplane

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
)

// Refusal is one kind of request kube-apiserver's authorizer denied (403
// Forbidden, audit annotation authorization.k8s.io/decision "forbid"), as
// its audit log records it: what an RBAC-bound user was not allowed to do.
// Requests that admission refuses with 403 (an exceeded quota, a
// terminating namespace) are not refusals.
type Refusal struct {
	Verb        string // get, list, watch, create, update, patch, delete, …
	Group       string // API group; "" for the core group
	Resource    string // e.g. pods, podsets, leases
	Subresource string // e.g. status; "" for the resource itself
	Namespace   string // "" for a cluster-wide request
}

// String is "verb group/resource/subresource in namespace", the way a
// test's failure message names it.
func (r Refusal) String() string {
	s := r.Verb + " " + r.Group + "/" + r.Resource
	if r.Subresource != "" {
		s += "/" + r.Subresource
	}
	if r.Namespace != "" {
		s += " in " + r.Namespace
	}
	return s
}

// Refusals reads kube-apiserver's audit log and returns the kinds of
// request of user (one of [Options.Users] or [ControllerUser], whose every
// request the log records) that the authorizer denied, each once, in the order
// of their first refusal. It needs [Options.AuditWrites]. kube-apiserver
// logs a request after answering it, so a refusal that has only just been
// answered may be missing: poll.
func (cp *ControlPlane) Refusals(user string) ([]Refusal, error) {
	if !cp.opts.AuditWrites {
		return nil, fmt.Errorf("controlplane: Refusals needs Options.AuditWrites")
	}
	if !slices.Contains(cp.auditedUsers(), user) {
		return nil, fmt.Errorf("controlplane: Refusals: the audit log does not record every request of %q", user)
	}
	_, path := cp.auditPaths()
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("controlplane: audit log: %w", err)
	}
	defer f.Close()
	return refusalsOf(f, user)
}

// decisionAnnotation is the audit annotation where kube-apiserver records
// the authorizer's decision ("allow" or "forbid").
const decisionAnnotation = "authorization.k8s.io/decision"

// refusalsOf returns the distinct authorization denials of user's requests
// in an audit log (one JSON event per line). A line that does not parse is skipped:
// kube-apiserver may be writing the last one right now.
func refusalsOf(r io.Reader, user string) ([]Refusal, error) {
	var out []Refusal
	err := scanAudit(r, func(ev *auditRecord) {
		if ev.Stage != "ResponseComplete" || ev.User.Username != user || ev.ResponseStatus.Code != http.StatusForbidden ||
			ev.Annotations[decisionAnnotation] != "forbid" {
			return
		}
		ref := Refusal{Verb: ev.Verb, Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Namespace: ev.ObjectRef.Namespace}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
