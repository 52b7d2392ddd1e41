package fencing_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// A standby's controller client, built from WrapConfig's copy, sends no
// write; a SubjectAccessReview, which stores nothing, still goes out, and
// clients of the original config are not fenced at all.
func ExampleWrapConfig() {
	// A stand-in for kube-apiserver that echoes what it is sent.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("API server:", r.Method, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.Copy(w, r.Body)
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}

	// In a real process: lock.Fence of a *fencing.Lock, still waiting for the lease.
	fence := func() error { return fmt.Errorf("%w: waiting for the lease", fencing.ErrNotLeader) }
	fenced, err := fencing.WrapConfig(cfg, fence)
	if err != nil {
		fmt.Println(err)
		return
	}
	controller := kubernetes.NewForConfigOrDie(fenced)
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}}

	_, err = controller.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	fmt.Println("controller creates a pod, refused:", errors.Is(err, fencing.ErrNotLeader))
	_, err = controller.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{}, metav1.CreateOptions{})
	fmt.Println("controller asks a SubjectAccessReview, error:", err)
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	fmt.Println("the unfenced config creates a pod, error:", err)
	// Output:
	// controller creates a pod, refused: true
	// API server: POST /apis/authorization.k8s.io/v1/subjectaccessreviews
	// controller asks a SubjectAccessReview, error: <nil>
	// API server: POST /api/v1/namespaces/default/pods
	// the unfenced config creates a pod, error: <nil>
}
