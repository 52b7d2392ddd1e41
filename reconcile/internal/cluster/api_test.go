package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/rv"
	"github.com/reconcilekit/reconcilekit/reconcile/internal/cluster"
)

func generated(prefix string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: prefix}}
}

func named(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func TestAPICreate(t *testing.T) {
	clock := fakeclock.New(cluster.Epoch)
	api := cluster.NewAPI(cluster.APIOptions{Clock: clock, Seed: 1})
	var events []cluster.Event
	api.Watch(func(e cluster.Event) { events = append(events, e) })

	in := generated("web-")
	a, err := api.Create(in)
	require.NoError(t, err)
	assert.Empty(t, in.Name, "the caller's pod is not modified")
	assert.Regexp(t, `^web-[bcdfghjklmnpqrstvwxz2456789]{5}$`, a.Name)
	assert.NotEmpty(t, a.UID)
	assert.Equal(t, cluster.Epoch, a.CreationTimestamp.Time)

	b, err := api.Create(named("b"))
	require.NoError(t, err)
	cmp, err := rv.Compare(a.ResourceVersion, b.ResourceVersion)
	require.NoError(t, err)
	assert.Equal(t, -1, cmp, "resourceVersions increase")
	assert.Equal(t, b.ResourceVersion, api.ResourceVersion())

	_, err = api.Create(named("b"))
	assert.True(t, apierrors.IsAlreadyExists(err), "a taken name: %v", err)
	_, err = api.Create(named(""))
	assert.True(t, apierrors.IsBadRequest(err))
	_, err = api.Create(nil)
	assert.True(t, apierrors.IsBadRequest(err))

	api.SetNamespaceTerminating("ns", true)
	_, err = api.Create(named("c"))
	assert.True(t, apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause), "%v", err)
	assert.Equal(t, 2, api.Len())

	require.Len(t, events, 2)
	assert.Equal(t, cluster.Added, events[0].Type)
	assert.Equal(t, a.ResourceVersion, events[0].RV)
}

func TestAPIGeneratedNamesAreDeterministic(t *testing.T) {
	names := func() []string {
		api := cluster.NewAPI(cluster.APIOptions{Seed: 42})
		var out []string
		for range 5 {
			p, err := api.Create(generated("x-"))
			require.NoError(t, err)
			out = append(out, p.Name)
		}
		return out
	}
	assert.Equal(t, names(), names())
}

func TestAPIDelete(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		t.Run(map[bool]string{false: "immediate", true: "graceful"}[graceful], func(t *testing.T) {
			api := cluster.NewAPI(cluster.APIOptions{GracefulDeletion: graceful})
			var types []cluster.EventType
			api.Watch(func(e cluster.Event) { types = append(types, e.Type) })
			_, err := api.Create(named("a"))
			require.NoError(t, err)

			require.NoError(t, api.Delete("ns", "a"))
			if graceful {
				p, ok := api.Get("ns", "a")
				require.True(t, ok, "a terminating pod stays until finalized")
				assert.NotNil(t, p.DeletionTimestamp)
				require.NoError(t, api.Delete("ns", "a"), "deleting a terminating pod again is a no-op")
				assert.Equal(t, 1, api.Finalize())
				assert.Equal(t, []cluster.EventType{cluster.Added, cluster.Modified, cluster.Deleted}, types)
			} else {
				assert.Equal(t, []cluster.EventType{cluster.Added, cluster.Deleted}, types)
			}
			assert.Zero(t, api.Len())
			assert.True(t, apierrors.IsNotFound(api.Delete("ns", "a")))
		})
	}
}

func TestAPIUpdateKeepsIdentity(t *testing.T) {
	api := cluster.NewAPI(cluster.APIOptions{})
	a, err := api.Create(named("a"))
	require.NoError(t, err)
	in := a.DeepCopy()
	in.UID = "other"
	in.Labels = map[string]string{"k": "v"}
	b, err := api.Update(in)
	require.NoError(t, err)
	assert.Equal(t, a.UID, b.UID)
	assert.Equal(t, "v", b.Labels["k"])
	assert.NotEqual(t, a.ResourceVersion, b.ResourceVersion)
	_, err = api.Update(named("missing"))
	assert.True(t, apierrors.IsNotFound(err))
}
