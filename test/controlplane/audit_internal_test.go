package controlplane

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// auditLine is one audit event as kube-apiserver writes it (the fields
// countAudit reads, plus some it ignores).
func auditLine(id, stage, user, verb, resource, sub string, code int) string {
	b := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"` + id + `","stage":"` + stage +
		`","verb":"` + verb + `","user":{"username":"` + user + `","groups":["system:masters"]}`
	if resource != "" {
		b += `,"objectRef":{"resource":"` + resource + `","namespace":"compare","subresource":"` + sub + `"}`
	}
	if code != 0 {
		b += `,"responseStatus":{"metadata":{},"code":` + strconv.Itoa(code) + `}`
	}
	return b + "}\n"
}

func TestCountAudit(t *testing.T) {
	u := ControllerUser
	log := strings.Join([]string{
		// A watch: counted once, when it starts, and also while still open.
		auditLine("w1", "ResponseStarted", u, "watch", "pods", "", 200),
		auditLine("w1", "ResponseComplete", u, "watch", "pods", "", 200),
		auditLine("w2", "ResponseStarted", u, "watch", "replicasets", "", 200),
		// A watch refused before its response started: counted at completion.
		auditLine("w3", "ResponseComplete", u, "watch", "pods", "", 429),
		auditLine("l1", "ResponseComplete", u, "list", "pods", "", 200),
		auditLine("g1", "ResponseComplete", u, "get", "", "", 200), // discovery: no objectRef
		auditLine("c1", "ResponseComplete", u, "create", "pods", "", 201),
		auditLine("c2", "ResponseComplete", u, "create", "pods", "", 409),
		auditLine("c3", "ResponseComplete", u, "create", "events", "", 201),
		auditLine("s1", "ResponseComplete", u, "update", "podsets", "status", 200),
		auditLine("d1", "ResponseComplete", u, "delete", "pods", "", 200),
		// Other users: only their writes to the audited resources.
		auditLine("a1", "ResponseComplete", AdminUser, "patch", "replicasets", "", 200),
		auditLine("a2", "ResponseComplete", AdminUser, "get", "replicasets", "", 200),
		auditLine("k1", "ResponseComplete", Kwok, "patch", "pods", "status", 200),
		// A user of Options.Users: its requests by verb, apart from ControllerUser's.
		auditLine("r1", "ResponseStarted", "replica-b", "watch", "pods", "", 200),
		auditLine("r2", "ResponseComplete", "replica-b", "update", "leases", "", 200),
		auditLine("r3", "ResponseComplete", "replica-b", "create", "pods", "", 201),
		`{"stage":"ResponseComplete","verb":"cre`, // a line kube-apiserver is still writing
	}, "")
	users := []string{ControllerUser, "replica-b"}
	got, err := countAudit(strings.NewReader(log), users)
	require.NoError(t, err)
	assert.Equal(t, VerbCounts{"watch": 3, "list": 1, "get": 1, "create": 3, "update": 1, "delete": 1}, got.Requests)
	assert.Equal(t, got.Requests, got.UserRequests[ControllerUser])
	assert.Equal(t, VerbCounts{"watch": 1, "update": 1, "create": 1}, got.UserRequests["replica-b"])
	assert.Equal(t, VerbCounts{
		"watch pods": 2, "watch replicasets": 1, "list pods": 1, "get": 1, "create pods": 2,
		"create events": 1, "update podsets/status": 1, "delete pods": 1,
	}, got.ResourceRequests, "ControllerUser's requests by verb and resource, counted as by verb; other users' are not")
	assert.Equal(t, WriteCounts{
		{User: u, Verb: "create", Resource: "pods", Code: 201}:                           1,
		{User: u, Verb: "create", Resource: "pods", Code: 409}:                           1,
		{User: u, Verb: "update", Resource: "podsets", Subresource: "status", Code: 200}: 1,
		{User: u, Verb: "delete", Resource: "pods", Code: 200}:                           1,
		{User: AdminUser, Verb: "patch", Resource: "replicasets", Code: 200}:             1,
		{User: Kwok, Verb: "patch", Resource: "pods", Subresource: "status", Code: 200}:  1,
		{User: "replica-b", Verb: "create", Resource: "pods", Code: 201}:                 1,
	}, got.Writes, "writes to pods, ReplicaSets and PodSets only; the controller's event is a request, not a counted write")

	// Counting a log and a longer one: the difference is what happened in between.
	more := log[:strings.LastIndex(log, `{"stage"`)] +
		auditLine("w2", "ResponseComplete", u, "watch", "replicasets", "", 200) +
		auditLine("l2", "ResponseComplete", u, "list", "pods", "", 200)
	later, err := countAudit(strings.NewReader(more), users)
	require.NoError(t, err)
	assert.Equal(t, VerbCounts{"list": 1}, later.Requests.Since(got.Requests), "a watch ending is not a new request")
	assert.Equal(t, VerbCounts{"list pods": 1}, later.ResourceRequests.Since(got.ResourceRequests))
	assert.Empty(t, later.Writes.Since(got.Writes))
}

func TestAuditPolicyForListsEveryUser(t *testing.T) {
	policy := auditPolicyFor([]string{ControllerUser, "replica-a"})
	assert.Contains(t, policy, `users: ["controller-under-test", "replica-a"]`)
}

func TestReadAuditEvents(t *testing.T) {
	log := strings.Join([]string{
		`{"auditID":"a","stage":"ResponseComplete","verb":"update","user":{"username":"kcm-a"},` +
			`"objectRef":{"resource":"leases","namespace":"kube-system","name":"kube-controller-manager","apiGroup":"coordination.k8s.io"},` +
			`"responseStatus":{"code":200},"requestReceivedTimestamp":"2026-11-26T10:00:00.100000Z","stageTimestamp":"2026-11-26T10:00:00.105000Z"}` + "\n",
		// Not complete yet: left out.
		`{"auditID":"w","stage":"ResponseStarted","verb":"watch","user":{"username":"kcm-a"},"objectRef":{"resource":"pods"},` +
			`"requestReceivedTimestamp":"2026-11-26T10:00:00.200000Z","stageTimestamp":"2026-11-26T10:00:00.201000Z"}` + "\n",
		// Another user than the audited ones: left out.
		`{"auditID":"x","stage":"ResponseComplete","verb":"create","user":{"username":"admin"},"objectRef":{"resource":"pods"},` +
			`"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-11-26T10:00:00.300000Z","stageTimestamp":"2026-11-26T10:00:00.301000Z"}` + "\n",
		`{"auditID":"b","stage":"ResponseComplete","verb":"create","user":{"username":"kcm-b"},` +
			`"objectRef":{"resource":"pods","namespace":"compare"},` +
			`"responseStatus":{"code":201},"requestReceivedTimestamp":"2026-11-26T10:00:01.5Z","stageTimestamp":"2026-11-26T10:00:01.6Z"}` + "\n",
		`{"stage":"ResponseComplete","verb":"cre`, // a line kube-apiserver is still writing
	}, "")
	got, err := readAuditEvents(strings.NewReader(log), []string{"kcm-a", "kcm-b"})
	require.NoError(t, err)
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, []AuditEvent{
		{User: "kcm-a", Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system",
			Name: "kube-controller-manager", Code: 200, Received: at("2026-11-26T10:00:00.1Z"), Completed: at("2026-11-26T10:00:00.105Z")},
		{User: "kcm-b", Verb: "create", Resource: "pods", Namespace: "compare", Code: 201,
			Received: at("2026-11-26T10:00:01.5Z"), Completed: at("2026-11-26T10:00:01.6Z")},
	}, got)
	assert.False(t, got[0].Write(), "a Lease update is not a write to what the controller owns")
	assert.True(t, got[1].Write())
}
