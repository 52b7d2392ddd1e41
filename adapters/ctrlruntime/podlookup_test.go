package ctrlruntime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/reconcilekit/reconcilekit/adapters/ctrlruntime"
)

func TestPodLookup(t *testing.T) {
	stored := pod("p", "u")
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(stored).Build()
	lookup := ctrlruntime.PodLookup(t.Context(), c)

	got, err := lookup("default/p")
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, stored.UID, got.UID)

	got, err = lookup("default/gone")
	assert.NoError(t, err, "an absent pod is no error")
	assert.Nil(t, got)

	for _, key := range []string{"", "default/", "a/b/c"} {
		got, err = lookup(key)
		assert.ErrorContains(t, err, "ctrlruntime: malformed pod key", key)
		assert.Nil(t, got)
	}

	// a pod key in an empty namespace asks for namespace "".
	var asked []client.ObjectKey
	boom := errors.New("boom")
	failing := fake.NewClientBuilder().WithScheme(scheme(t)).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			asked = append(asked, key)
			return boom
		},
	}).Build()
	var noCtx context.Context // nil: context.Background()
	for _, key := range []string{"/bare", "bare"} {
		got, err = ctrlruntime.PodLookup(noCtx, failing)(key)
		assert.Same(t, boom, err, "the reader's error as it is")
		assert.Nil(t, got)
	}
	assert.Equal(t, []client.ObjectKey{{Name: "bare"}, {Name: "bare"}}, asked)

	_, err = ctrlruntime.PodLookup(t.Context(), nil)("default/p")
	assert.ErrorContains(t, err, "ctrlruntime: PodLookup has no reader")
}
