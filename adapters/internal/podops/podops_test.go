package podops

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPreconditionAsNotFound(t *testing.T) {
	pod := &corev1.Pod{}
	pod.Name, pod.UID = "p", "u"
	assert.NoError(t, PreconditionAsNotFound(pod, nil))
	other := errors.New("x")
	assert.Same(t, other, PreconditionAsNotFound(pod, other))
	err := PreconditionAsNotFound(pod, apierrors.NewConflict(corev1.Resource("pods"), "p", errors.New("precondition")))
	assert.True(t, apierrors.IsNotFound(err))
	assert.Contains(t, err.Error(), "UID u is gone")
}

func TestBatchMessage(t *testing.T) {
	pods := func(n int) []*corev1.Pod {
		out := make([]*corev1.Pod, n)
		for i := range out {
			out[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i)}}
		}
		return out
	}
	assert.Equal(t, "Created pod: web-0", BatchMessage(pods(1)))
	assert.Equal(t, "Created 3 pods: web-0, web-1, web-2", BatchMessage(pods(3)))
	assert.Equal(t, "Created 12 pods: web-0, web-1, web-2, web-3, web-4, web-5, web-6, web-7, web-8, web-9 and 2 more", BatchMessage(pods(12)))
}
