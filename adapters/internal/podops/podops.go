// Package podops holds what both adapters share, so that their pod
// semantics cannot drift apart.
package podops

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// PreconditionAsNotFound turns the 409 Conflict of a delete of pod with a
// UID precondition into a NotFound error naming pod: the chosen pod is gone
// and another object holds its name. Any other error, and nil, is returned
// unchanged.
func PreconditionAsNotFound(pod *corev1.Pod, err error) error {
	if err == nil || !apierrors.IsConflict(err) {
		return err
	}
	nf := apierrors.NewNotFound(corev1.Resource("pods"), pod.Name)
	nf.ErrStatus.Message = fmt.Sprintf("pod %s/%s with UID %s is gone (another object holds its name): %v", pod.Namespace, pod.Name, pod.UID, err)
	return nf
}
