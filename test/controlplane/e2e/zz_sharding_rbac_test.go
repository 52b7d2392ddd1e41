package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// bucketLabel is the label a sharded controller puts on its pods
// (adapters/sharding.BucketLabel; this module does not import the adapters).
const bucketLabel = "sharding.reconcilekit.io/bucket"

// ownerKind is how TestShardedRBAC drives one example's owners.
type ownerKind struct {
	kind     string // "ReplicaSet", "PodSet": the pod watch's owner prefix
	create   func(name string, n int)
	scale    func(name string, n int)
	converge func(name string, n int)
}

// TestShardedRBAC runs each example sharded (-shards 2, one replica) as a
// user bound to exactly its config/rbac/role.yaml and sharding_role.yaml
// (no leader-election Role, no system:masters): pods of an owner made
// before sharding (by the unsharded controller, as admin) are stamped with
// their bucket (pods patch), an owner is scaled 0 → 4 → 1 (pods create
// and delete, the events), and SIGTERM gives the shards back and deletes
// the replica's Lease (leases list, watch, create, update, delete). The
// audit log shows that RBAC refused the replica nothing: the two roles
// lack nothing sharding uses. The subtests run one after the other.
func TestShardedRBAC(t *testing.T) {
	t.Parallel()
	cp := sharedControlPlane(t)
	rs, podset := buildControllers(t)

	t.Run("replicaset", func(t *testing.T) {
		e := &shardedEnv{haEnv: &haEnv{rsEnv: newHAEnv(t, cp), bin: rs}, shards: 2}
		e.shardedRBAC("replicaset", rsShardedUser, e.ns, []string{"-kubeconfig", cp.KubeconfigPath(), "-namespace", e.ns}, ownerKind{
			kind:   "ReplicaSet",
			create: func(name string, n int) { e.create(newReplicaSet(name, int32(n), 0)) },
			scale:  func(name string, n int) { e.scale(name, n) },
			converge: func(name string, n int) {
				e.converge(name, want{replicas: int32(n), ready: int32(n), available: int32(n), terminating: ptrInt32(0)})
			},
		})
	})

	t.Run("podset", func(t *testing.T) {
		e := &shardedEnv{haEnv: &haEnv{rsEnv: newHAEnv(t, cp), bin: podset}, shards: 2}
		psc := dynamic.NewForConfigOrDie(cp.RESTConfig()).Resource(podSetGVR).Namespace(e.ns)
		// role_binding.yaml is a ClusterRoleBinding: the controller's
		// cache watches every namespace unless -namespace is given.
		e.shardedRBAC("podset", podSetShardedUser, "", []string{"-kubeconfig", cp.KubeconfigPath(), "-namespace", e.ns, "-leader-elect=false"}, ownerKind{
			kind: "PodSet",
			create: func(name string, n int) {
				e.pods.allow("PodSet/"+name, n) // the pod watch fails the test on more live pods
				_, err := psc.Create(e.ctx, newPodSet(name, int64(n)), metav1.CreateOptions{})
				require.NoError(t, err)
			},
			scale: func(name string, n int) {
				_, err := psc.Patch(e.ctx, name, types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n), metav1.PatchOptions{})
				require.NoError(t, err)
			},
			converge: func(name string, n int) { waitPodSet(t, e.ctx, psc, e.pods, name, int64(n)) },
		})
	})
}

// shardedRBAC is TestShardedRBAC's scenario for one example: user is bound
// to the example's role.yaml (in ns: "" for its ClusterRoleBinding) and
// sharding_role.yaml; unsharded are the flags of the example's run as
// admin, without sharding, that makes the first owner's pods.
func (e *shardedEnv) shardedRBAC(example, user, ns string, unsharded []string, k ownerKind) {
	t := e.t
	t.Helper()
	began := time.Now()
	t.Cleanup(func() {
		// A missing verb may show first as a replica that never converges:
		// name what RBAC refused it.
		if !t.Failed() {
			return
		}
		if refused, err := e.cp.Refusals(user); err == nil {
			t.Logf("RBAC refused %s: %v", user, refused)
		}
	})
	bindRoleWith(t, e.cp, example, applyClusterRole(t, e.cp, example, nil), user, ns, "sharding_role.yaml", "sharding_role_binding.yaml")
	e.lease = "e2e-rbac-" + e.ns

	// Before sharding: "pre"'s pods, without the bucket label.
	u := startProc(t, "unsharded", e.bin, unsharded...)
	k.create("pre", 2)
	k.converge("pre", 2)
	require.NoError(t, u.cmd.Process.Signal(syscall.SIGTERM))
	waitFor(t, e.ctx, time.Minute, "the unsharded controller exiting", func(context.Context) (bool, string, error) {
		return u.exited(), "", nil
	})

	a := e.replica(user, "a")
	e.waitHeld("a")
	k.create("web", 4)
	k.converge("web", 4)
	k.converge("pre", 2)
	waitFor(t, e.ctx, time.Minute, "pre's pods stamped with their bucket", func(context.Context) (bool, string, error) {
		stamped := 0
		for _, p := range e.pods.all() {
			if controllerName(p) == k.kind+"/pre" && live(p) && p.Labels[bucketLabel] != "" {
				stamped++
			}
		}
		return stamped == 2, fmt.Sprintf("%d stamped", stamped), nil
	})
	k.scale("web", 1)
	k.converge("web", 1)
	waitEvent(t, e.ctx, e.client, e.ns, "SuccessfulDelete") // written by the replica alone

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	waitFor(t, e.ctx, time.Minute, "the replica exiting on SIGTERM", func(context.Context) (bool, string, error) {
		return a.exited(), "", nil
	})
	assert.NoError(t, a.err, "the replica's exit")
	leases, err := e.client.CoordinationV1().Leases("kube-system").List(e.ctx, metav1.ListOptions{LabelSelector: "sharding.reconcilekit.io/group=" + e.lease})
	require.NoError(t, err)
	shards := 0
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, e.lease+"-shard-") {
			shards++
			assert.Empty(t, ptrString(l.Spec.HolderIdentity), "%s: the shard given back on SIGTERM", l.Name)
		} else {
			assert.Fail(t, "the replica's Lease outlived it (deleted on SIGTERM)", l.Name)
		}
	}
	assert.Equal(t, e.shards, shards, "the shards' Leases")
	time.Sleep(time.Second) // kube-apiserver logs a request after answering it
	assertNotRefused(t, e.cp, user)
	t.Logf("%s sharded under role.yaml and sharding_role.yaml: %v", example, time.Since(began).Round(100*time.Millisecond))
}
