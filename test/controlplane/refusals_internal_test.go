package controlplane

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decisionLine is one audit event of a request to a resource, with the
// authorizer's decision annotation ("" for none).
func decisionLine(stage, user, verb, group, resource, sub, ns string, code int, decision string) string {
	b := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x","stage":"` + stage +
		`","verb":"` + verb + `","user":{"username":"` + user + `","groups":["system:authenticated"]}` +
		`,"objectRef":{"resource":"` + resource + `","namespace":"` + ns + `","apiGroup":"` + group + `","subresource":"` + sub + `"}` +
		`,"responseStatus":{"metadata":{},"code":` + strconv.Itoa(code) + `}`
	if decision != "" {
		b += `,"annotations":{"authorization.k8s.io/decision":"` + decision + `","authorization.k8s.io/reason":""}`
	}
	return b + "}\n"
}

func TestRefusalsOf(t *testing.T) {
	const u = "rbac-user"
	const done = "ResponseComplete"
	log := strings.Join([]string{
		decisionLine(done, u, "create", "", "pods", "", "e2e-a", 403, "forbid"),
		decisionLine(done, u, "create", "", "pods", "", "e2e-a", 403, "forbid"), // the same kind again: once
		decisionLine("ResponseStarted", u, "watch", "", "pods", "", "", 403, "forbid"),
		decisionLine(done, u, "update", "demo.reconcilekit.dev", "podsets", "status", "e2e-b", 403, "forbid"),
		decisionLine(done, u, "list", "", "pods", "", "", 200, "allow"),
		decisionLine(done, u, "create", "", "pods", "", "e2e-c", 403, "allow"), // admission's 403 (a quota): not a refusal
		decisionLine(done, u, "get", "apps", "replicasets", "", "e2e-a", 404, "allow"),
		decisionLine(done, "someone-else", "get", "", "pods", "", "e2e-a", 403, "forbid"),
		`{"stage":"ResponseComplete","verb":"cre`, // a line kube-apiserver is still writing
	}, "")
	got, err := refusalsOf(strings.NewReader(log), u)
	require.NoError(t, err)
	assert.Equal(t, []Refusal{
		{Verb: "create", Resource: "pods", Namespace: "e2e-a"},
		{Verb: "update", Group: "demo.reconcilekit.dev", Resource: "podsets", Subresource: "status", Namespace: "e2e-b"},
	}, got)
	assert.Equal(t, "update demo.reconcilekit.dev/podsets/status in e2e-b", got[1].String())
	assert.Equal(t, "list /pods", Refusal{Verb: "list", Resource: "pods"}.String())
}
