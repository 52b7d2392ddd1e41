package cluster

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Fault is what an injected fault does to one API call.
type Fault int

// The faults a [Client] can inject.
const (
	// NoFault lets the call through.
	NoFault Fault = iota
	// FailBefore rejects the call with a ServiceUnavailable error; the API
	// does nothing.
	FailBefore
	// LoseResponse lets the API perform the write and then returns a
	// timeout error instead of the result: the caller cannot tell that the
	// write happened.
	LoseResponse
	// NamespaceTerminating rejects a create with a StatusError carrying the
	// NamespaceTerminating cause; the API does nothing. On a delete it acts
	// as FailBefore.
	NamespaceTerminating
)

// String names the fault.
func (f Fault) String() string {
	switch f {
	case NoFault:
		return "none"
	case FailBefore:
		return "fail-before"
	case LoseResponse:
		return "lose-response"
	case NamespaceTerminating:
		return "namespace-terminating"
	}
	return "unknown"
}

// Faults decides, per call, which fault a [Client] injects. A nil field
// injects nothing. call is the 0-based index of the call among the client's
// calls of the same method; the pod is the caller's argument (read-only).
// The functions are called concurrently when the client is.
type Faults struct {
	Create func(call int, pod *corev1.Pod) Fault
	Delete func(call int, pod *corev1.Pod) Fault
}

// Stats counts a [Client]'s calls by outcome.
type Stats struct {
	Creates              int // CreatePod calls
	Created              int // creates the API performed (including lost responses)
	CreateFailed         int // creates rejected by an injected FailBefore
	CreateLost           int // creates performed whose response was lost
	NamespaceTerminating int // creates rejected with NamespaceTerminating
	AlreadyExists        int // creates the API refused with AlreadyExists
	Deletes              int // DeletePod calls
	Deleted              int // deletes the API performed (including lost responses)
	DeleteFailed         int // deletes rejected by an injected fault
	DeleteLost           int // deletes performed whose response was lost
	NotFound             int // deletes of a pod the API did not have
}

// Client is a PodControl for the simulated cluster: CreatePod and DeletePod
// go to the [API] through the injected [Faults], and every call is counted.
// It satisfies reconcile.PodControl.
//
// Set Faults before use or between calls, not during them. The zero Client
// is not usable (it has no API); use [NewClient]. It is safe for concurrent
// use.
type Client struct {
	API    *API
	Faults Faults

	mu      sync.Mutex
	creates int
	deletes int
	stats   Stats
}

// NewClient returns a Client of api with no faults.
func NewClient(api *API) *Client { return &Client{API: api} }

// CreatePod creates pod (see [API.Create]) unless a fault says otherwise.
// ctx is not consulted: the simulated API answers at once.
func (c *Client) CreatePod(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	c.mu.Lock()
	call := c.creates
	c.creates++
	c.stats.Creates++
	c.mu.Unlock()

	f := NoFault
	if c.Faults.Create != nil {
		f = c.Faults.Create(call, pod)
	}
	switch f {
	case FailBefore:
		c.count(func(s *Stats) { s.CreateFailed++ })
		return nil, apierrors.NewServiceUnavailable("cluster: injected create failure")
	case NamespaceTerminating:
		c.count(func(s *Stats) { s.NamespaceTerminating++ })
		ns := ""
		if pod != nil {
			ns = pod.Namespace
		}
		return nil, namespaceTerminating(ns)
	}
	created, err := c.API.Create(pod)
	switch {
	case apierrors.IsAlreadyExists(err):
		c.count(func(s *Stats) { s.AlreadyExists++ })
		return nil, err
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		c.count(func(s *Stats) { s.NamespaceTerminating++ })
		return nil, err
	case err != nil:
		return nil, err
	}
	c.count(func(s *Stats) { s.Created++ })
	if f == LoseResponse {
		c.count(func(s *Stats) { s.CreateLost++ })
		return nil, apierrors.NewTimeoutError("cluster: injected lost create response", 1)
	}
	return created, nil
}

// DeletePod deletes pod by namespace and name (see [API.Delete]) unless a
// fault says otherwise. ctx is not consulted.
func (c *Client) DeletePod(_ context.Context, pod *corev1.Pod) error {
	c.mu.Lock()
	call := c.deletes
	c.deletes++
	c.stats.Deletes++
	c.mu.Unlock()

	if pod == nil {
		return apierrors.NewBadRequest("cluster: nil pod")
	}
	f := NoFault
	if c.Faults.Delete != nil {
		f = c.Faults.Delete(call, pod)
	}
	if f == FailBefore || f == NamespaceTerminating {
		c.count(func(s *Stats) { s.DeleteFailed++ })
		return apierrors.NewServiceUnavailable("cluster: injected delete failure")
	}
	err := c.API.Delete(pod.Namespace, pod.Name)
	if apierrors.IsNotFound(err) {
		c.count(func(s *Stats) { s.NotFound++ })
		return err
	}
	if err != nil {
		return err
	}
	c.count(func(s *Stats) { s.Deleted++ })
	if f == LoseResponse {
		c.count(func(s *Stats) { s.DeleteLost++ })
		return apierrors.NewTimeoutError("cluster: injected lost delete response", 1)
	}
	return nil
}

func (c *Client) count(fn func(*Stats)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn(&c.stats)
}

// Stats returns the counts so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}
