package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// TestPodSetStandbyServesSecureMetrics: two replicas of the PodSet example
// behind a Lease, both with -metrics-secure (controller-runtime's
// filters.WithAuthenticationAndAuthorization, which sends a TokenReview and
// a SubjectAccessReview through the manager's fenced rest.Config). The
// standby, whose fence is closed from the start, answers a scrape with a
// bearer token of a ServiceAccount allowed get on /metrics (200), refuses
// one without a token (401) and one of a ServiceAccount without that right
// (403); and by the audit log it sent the reviews and no write besides them
// and the Lease's. The standby runs as ControllerUser, which no other test
// of the shared control plane uses, so that its requests stand apart; the
// leader runs as the admin.
func TestPodSetStandbyServesSecureMetrics(t *testing.T) {
	t.Parallel()
	cp := sharedControlPlane(t)
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	dyn := dynamic.NewForConfigOrDie(cp.RESTConfig())
	applyPodSetCRD(t, ctx, dyn)
	_, podset := buildControllers(t)
	e := &haEnv{rsEnv: &rsEnv{t: t, ctx: ctx, cp: cp, client: client}, bin: podset}
	e.ns = newNamespace(t, ctx, client)
	e.lease = "e2e-podset-metrics-" + e.ns
	e.pods = watchPods(t, ctx, client, e.ns)
	reader, stranger := metricsTokens(t, ctx, client, e.ns)

	leaderAddr, standbyAddr := freePort(t), freePort(t)
	e.replica(controlplane.AdminUser, "lead", "-metrics-secure", "-metrics-bind-address", leaderAddr)
	e.waitLeads("lead")
	since := time.Now()
	standby := e.replica(controlplane.ControllerUser, "standby", "-metrics-secure", "-metrics-bind-address", standbyAddr)
	e.waitWaiting(standby)
	// The leader works while the standby waits.
	const name = "metrics"
	e.pods.allow("PodSet/"+name, 2)
	_, err := dyn.Resource(podSetGVR).Namespace(e.ns).Create(ctx, newPodSet(name, 2), metav1.CreateOptions{})
	require.NoError(t, err)
	waitPodSet(t, ctx, dyn.Resource(podSetGVR).Namespace(e.ns), e.pods, name, 2)

	url := "https://" + standbyAddr + "/metrics"
	var body string
	waitFor(t, ctx, 30*time.Second, "200 from the standby's "+url, func(ctx context.Context) (bool, string, error) {
		code, b, err := scrapeAs(ctx, url, reader)
		if err != nil {
			return false, err.Error(), nil
		}
		body = b
		return code == http.StatusOK, fmt.Sprintf("%d %s", code, strings.TrimSpace(b)), nil
	})
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err)
	assert.Contains(t, mfs, "reconcilekit_syncs_total", "the controller's metrics, from the standby")
	for _, tc := range []struct {
		who   string
		token string
		want  int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a ServiceAccount without get on /metrics", stranger, http.StatusForbidden},
	} {
		code, b, err := scrapeAs(ctx, url, tc.token)
		require.NoError(t, err)
		assert.Equal(t, tc.want, code, "%s: %s", tc.who, b)
	}
	holder, _, err := e.holder(ctx)
	require.NoError(t, err)
	require.Equal(t, "lead", holder, "the scraped replica was the standby throughout")
	assert.Zero(t, standby.count("became leader"))

	// The audit log: the standby's reviews reached kube-apiserver (a
	// TokenReview and a SubjectAccessReview for each token; kube-apiserver
	// logs a request after answering it), and nothing else it sent,
	// besides the Lease, was a write.
	var reviews, leases int
	var others []string
	waitFor(t, ctx, 30*time.Second, "the standby's 4 reviews in the audit log", func(context.Context) (bool, string, error) {
		evs, err := cp.AuditEvents()
		if err != nil {
			return false, "", err
		}
		reviews, leases, others = standbyWrites(evs, since)
		return reviews >= 4, fmt.Sprintf("%d reviews", reviews), nil
	})
	t.Logf("the standby's writes by the audit log: %d reviews, %d to leases, %d others", reviews, leases, len(others))
	assert.Empty(t, others, "the standby's writes other than leases and reviews")
	assert.False(t, standby.exited(), "the standby exited")
}

// standbyWrites sorts ControllerUser's mutating requests received from
// since on: creates of TokenReviews and SubjectAccessReviews, any write
// to coordination.k8s.io, and the others, described.
func standbyWrites(evs []controlplane.AuditEvent, since time.Time) (reviews, leases int, others []string) {
	for _, ev := range evs {
		if ev.User != controlplane.ControllerUser || ev.Received.Before(since) ||
			!slices.Contains([]string{"create", "update", "patch", "delete", "deletecollection"}, ev.Verb) {
			continue
		}
		switch {
		case ev.APIGroup == "coordination.k8s.io":
			leases++
		case ev.Verb == "create" && (ev.APIGroup == "authentication.k8s.io" && ev.Resource == "tokenreviews" ||
			ev.APIGroup == "authorization.k8s.io" && ev.Resource == "subjectaccessreviews"):
			reviews++
		default:
			others = append(others, fmt.Sprintf("%s %s/%s/%s %s/%s: %d", ev.Verb, ev.APIGroup, ev.Resource, ev.Subresource, ev.Namespace, ev.Name, ev.Code))
		}
	}
	return reviews, leases, others
}

// metricsTokens creates, in ns, a ServiceAccount bound to a ClusterRole
// that allows get on the non-resource URL /metrics and one bound to
// nothing, waits until RBAC allows the first, and returns a token of each.
func metricsTokens(t *testing.T, ctx context.Context, client kubernetes.Interface, ns string) (reader, stranger string) {
	t.Helper()
	role := "e2e-metrics-reader-" + ns // cluster-scoped: one per test namespace
	_, err := client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoles().Delete(context.WithoutCancel(ctx), role, metav1.DeleteOptions{})
	})
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "metrics-reader"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(context.WithoutCancel(ctx), role, metav1.DeleteOptions{})
	})
	token := func(sa string) string {
		_, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
		require.NoError(t, err)
		tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	reader, stranger = token("metrics-reader"), token("no-metrics")
	waitFor(t, ctx, time.Minute, "RBAC allowing get /metrics to metrics-reader", func(ctx context.Context) (bool, string, error) {
		r, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{
				User:                  "system:serviceaccount:" + ns + ":metrics-reader",
				Groups:                []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
				NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return r.Status.Allowed, r.Status.Reason, nil
	})
	return reader, stranger
}

// scrapeAs GETs url over HTTPS with token as the bearer token (none when
// ""), trusting the server's certificate: controller-runtime's metrics
// server makes itself a self-signed one.
func scrapeAs(ctx context.Context, url, token string) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
