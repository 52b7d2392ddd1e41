package faultproxy

import (
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// droppedCreate replaces the responses [Proxy.DropPodCreateResponses] drops.
var droppedCreate = status{http.StatusGatewayTimeout, metav1.StatusReasonTimeout,
	"faultproxy: the response to this pod create was dropped; the pod may have been created"}

// DropPodCreateResponses drops the responses to the next n pod creates
// ([IsPodCreate]) that the API server accepts (any 2xx): each create is
// forwarded and applied, so the pod exists, but the client gets, in place
// of the 201, 504 Gateway Timeout with a Status of reason Timeout, as when
// kube-apiserver's request timeout fires. client-go does not retry it (no
// Retry-After) and returns an error for which apierrors.IsTimeout holds.
// Creates the API server refuses pass through and do not count. n replaces
// whatever count is still pending; n <= 0 cancels it.
func (p *Proxy) DropPodCreateResponses(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropCreates = max(n, 0)
}

// dropCreate takes one pending drop, if any.
func (p *Proxy) dropCreate() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dropCreates == 0 {
		return false
	}
	p.dropCreates--
	return true
}

// IsPodCreate reports whether r is a pod create: a POST of the core group's
// pods in one namespace. A POST to a pod's subresource (eviction, binding)
// is not one.
func IsPodCreate(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	return len(parts) == 5 && parts[0] == "api" && parts[1] == "v1" &&
		parts[2] == "namespaces" && parts[3] != "" && parts[4] == "pods"
}
