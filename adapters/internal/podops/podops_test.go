package podops

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
