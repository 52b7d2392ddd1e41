package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/reconcilekit/reconcilekit/test/controlplane"
)

// The users the examples run as on the shared control plane: no group
// beyond system:authenticated, so RBAC grants each exactly what the
// bindings below give it (the ServiceAccount of the examples'
// config/rbac/, as a user).
const (
	rsUser          = "rbac-replicaset"            // examples/replicaset/config/rbac/role.yaml
	rsMinusUser     = "rbac-replicaset-minus-verb" // that role without pods create
	podSetUser      = "rbac-podset"                // examples/podset/config/rbac/role.yaml
	podSetMinusUser = "rbac-podset-minus-verb"     // that role without podsets/status update
	// role.yaml and sharding_role.yaml of each example (zz_sharding_rbac_test.go).
	rsShardedUser     = "rbac-replicaset-sharded"
	podSetShardedUser = "rbac-podset-sharded"
)

func rbacUsers() []controlplane.User {
	var users []controlplane.User
	for _, name := range []string{rsUser, rsMinusUser, podSetUser, podSetMinusUser, rsShardedUser, podSetShardedUser} {
		users = append(users, controlplane.User{Name: name, Groups: []string{}})
	}
	return users
}

// rbacFile is a file of an example's config/rbac directory.
func rbacFile(example, name string) string {
	return filepath.Join("..", "..", "..", "examples", example, "config", "rbac", name)
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, yaml.UnmarshalStrict(raw, into), path)
}

// permission is a verb on a resource of an API group, which a test takes
// out of an example's role.
type permission struct{ group, resource, verb string }

// applyClusterRole creates the example's ClusterRole (config/rbac/role.yaml)
// on the control plane, or, with drop, a copy of it named after what it
// lacks; it returns the role's name. Creating a role that exists is a no-op.
func applyClusterRole(t *testing.T, cp *controlplane.ControlPlane, example string, drop *permission) string {
	t.Helper()
	var role rbacv1.ClusterRole
	readYAML(t, rbacFile(example, "role.yaml"), &role)
	if drop != nil {
		role.Name += "-without-" + drop.verb + "-" + strings.ReplaceAll(drop.resource, "/", "-")
		// One rule per group and resource, so that one verb can go.
		var rules []rbacv1.PolicyRule
		dropped := false
		for _, r := range role.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					verbs := slices.Clone(r.Verbs)
					if g == drop.group && res == drop.resource && slices.Contains(verbs, drop.verb) {
						verbs = slices.DeleteFunc(verbs, func(v string) bool { return v == drop.verb })
						dropped = true
					}
					if len(verbs) > 0 {
						rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: verbs})
					}
				}
			}
		}
		require.True(t, dropped, "%s grants no %+v", role.Name, *drop)
		role.Rules = rules
	}
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	_, err := client.RbacV1().ClusterRoles().Create(testContext(t), &role, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	return role.Name
}

// bindRole grants user the ClusterRole role as the example's
// config/rbac/role_binding.yaml grants it to the example's ServiceAccount
// (the ReplicaSet example: a RoleBinding, here in ns; the PodSet example: a
// ClusterRoleBinding), and the example's leader-election Role and binding in
// the same way. It waits until kube-apiserver's authorizer lets user list
// pods (in ns when ns is not "") and create Leases, and returns user's
// kubeconfig.
func bindRole(t *testing.T, cp *controlplane.ControlPlane, example, role, user, ns string) string {
	t.Helper()
	return bindRoleWith(t, cp, example, role, user, ns, "leader_election_role.yaml", "leader_election_role_binding.yaml")
}

// bindRoleWith is bindRole with the Lease Role and binding of the example's
// config/rbac/ files leaseRole and leaseBinding in place of leader
// election's (sharding_role.yaml and sharding_role_binding.yaml for -shards).
func bindRoleWith(t *testing.T, cp *controlplane.ControlPlane, example, role, user, ns, leaseRole, leaseBinding string) string {
	t.Helper()
	ctx := testContext(t)
	client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	var kind metav1.TypeMeta
	raw, err := os.ReadFile(rbacFile(example, "role_binding.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(raw, &kind))
	switch kind.Kind {
	case "RoleBinding":
		var b rbacv1.RoleBinding
		readYAML(t, rbacFile(example, "role_binding.yaml"), &b)
		b.Name, b.Namespace, b.Subjects, b.RoleRef.Name = user, ns, subjects, role
		_, err := client.RbacV1().RoleBindings(ns).Create(ctx, &b, metav1.CreateOptions{})
		require.NoError(t, err)
	case "ClusterRoleBinding":
		var b rbacv1.ClusterRoleBinding
		readYAML(t, rbacFile(example, "role_binding.yaml"), &b)
		b.Name, b.Subjects, b.RoleRef.Name = user, subjects, role
		_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &b, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	default:
		t.Fatalf("%s: kind %q", rbacFile(example, "role_binding.yaml"), kind.Kind)
	}
	// The Leases: the Role in its namespace, bound to user (whether or not
	// the example elects or shards: binding it costs nothing).
	var le rbacv1.Role
	readYAML(t, rbacFile(example, leaseRole), &le)
	_, err = client.RbacV1().Roles(le.Namespace).Create(ctx, &le, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	var leb rbacv1.RoleBinding
	readYAML(t, rbacFile(example, leaseBinding), &leb)
	require.Equal(t, le.Name, leb.RoleRef.Name)
	leb.Name += "-" + user
	leb.Subjects = subjects
	_, err = client.RbacV1().RoleBindings(leb.Namespace).Create(ctx, &leb, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}

	// The authorizer learns of roles and bindings from its watches: wait
	// for the Lease Role and binding too, created last.
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Namespace: ns, Verb: "list", Resource: "pods"},
		{Namespace: le.Namespace, Verb: "create", Group: "coordination.k8s.io", Resource: "leases"},
	} {
		waitFor(t, ctx, time.Minute, fmt.Sprintf("%s allowed to %s %s", user, attrs.Verb, attrs.Resource), func(ctx context.Context) (bool, string, error) {
			review, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &attrs},
			}, metav1.CreateOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return review.Status.Allowed, review.Status.Reason, nil
		})
	}
	kubeconfig, err := cp.Kubeconfig(user)
	require.NoError(t, err)
	return kubeconfig
}

// assertNotRefused checks that the authorizer allowed every request of
// user so far: the role lacks nothing the example used.
func assertNotRefused(t *testing.T, cp *controlplane.ControlPlane, user string) {
	t.Helper()
	refused, err := cp.Refusals(user)
	require.NoError(t, err)
	assert.Empty(t, refused, "RBAC refused requests of %s: its role lacks them", user)
}

// waitRefused waits (a minute at most) until the authorizer has refused
// want to user, and checks that it refused nothing else.
func waitRefused(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, user string, want controlplane.Refusal) {
	t.Helper()
	var refused []controlplane.Refusal
	waitFor(t, ctx, time.Minute, fmt.Sprintf("RBAC to refuse %s to %s", want, user), func(context.Context) (bool, string, error) {
		var err error
		refused, err = cp.Refusals(user)
		return slices.Contains(refused, want), fmt.Sprint(refused), err
	})
	assert.Equal(t, []controlplane.Refusal{want}, refused)
}

// waitEvent waits until the namespace has an event with reason, recorded
// by the example under its RBAC identity: its role lets it write events.
func waitEvent(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, reason string) {
	t.Helper()
	waitFor(t, ctx, time.Minute, "a "+reason+" event in "+ns, func(ctx context.Context) (bool, string, error) {
		// The events.k8s.io view lists core and events.k8s.io events alike.
		list, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		var reasons []string
		for _, ev := range list.Items {
			if ev.Reason == reason {
				return true, "", nil
			}
			reasons = append(reasons, ev.Reason)
		}
		return false, fmt.Sprintf("reasons %v", reasons), nil
	})
}

// TestRBACMissingVerb: each example under its role minus one verb it needs
// is refused that verb (the audit log's 403) and reports the Forbidden
// error: the ReplicaSet controller without pods create sets the
// ReplicaFailure condition (FailedCreate) and creates no pod; the PodSet
// controller without podsets/status update logs the refusal. The positive
// runs are TestReplicaSetScale, TestReplicaSetDisruption and TestPodSet,
// whose controllers run under exactly the examples' roles.
func TestRBACMissingVerb(t *testing.T) {
	cp := sharedControlPlane(t)
	buildControllers(t) // once, before the halves run side by side
	t.Run("replicaset without pods create", func(t *testing.T) {
		t.Parallel()
		role := applyClusterRole(t, cp, "replicaset", &permission{"", "pods", "create"})
		e := newRSEnvAs(t, cp, rsMinusUser, role)
		e.create(newReplicaSet("web", 2, 0))
		forbidden := fmt.Sprintf(`is forbidden: User "%s" cannot create resource "pods"`, rsMinusUser)
		waitFor(t, e.ctx, time.Minute, "the ReplicaFailure condition", func(ctx context.Context) (bool, string, error) {
			rs, err := e.client.AppsV1().ReplicaSets(e.ns).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			for _, c := range rs.Status.Conditions {
				if c.Type == "ReplicaFailure" && c.Status == corev1.ConditionTrue && c.Reason == "FailedCreate" &&
					strings.Contains(c.Message, forbidden) {
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("conditions %v", rs.Status.Conditions), nil
		})
		waitRefused(t, e.ctx, cp, rsMinusUser, controlplane.Refusal{Verb: "create", Resource: "pods", Namespace: e.ns})
		assert.Positive(t, e.ctrl.count(forbidden), "the controller's log shows no %q", forbidden)
		assert.Empty(t, e.pods.all(), "pods were created")
	})
	t.Run("podset without podsets/status update", func(t *testing.T) {
		t.Parallel()
		ctx := testContext(t)
		client := kubernetes.NewForConfigOrDie(cp.RESTConfig())
		ns := newNamespace(t, ctx, client)
		role := applyClusterRole(t, cp, "podset", &permission{"demo.reconcilekit.dev", "podsets/status", "update"})
		kubeconfig := bindRole(t, cp, "podset", role, podSetMinusUser, "")
		_, podset := buildControllers(t)
		ctrl := startProc(t, "podset", podset, "-kubeconfig", kubeconfig)
		_, err := dynamic.NewForConfigOrDie(cp.RESTConfig()).Resource(podSetGVR).Namespace(ns).Create(ctx, newPodSet("web", 1), metav1.CreateOptions{})
		require.NoError(t, err)
		waitRefused(t, ctx, cp, podSetMinusUser, controlplane.Refusal{
			Verb: "update", Group: "demo.reconcilekit.dev", Resource: "podsets", Subresource: "status", Namespace: ns,
		})
		forbidden := fmt.Sprintf(`is forbidden: User \"%s\" cannot update resource \"podsets/status\"`, podSetMinusUser)
		waitFor(t, ctx, time.Minute, "the refusal in the controller's log", func(context.Context) (bool, string, error) {
			return ctrl.count(forbidden) > 0, "not yet", nil
		})
	})
}
