package cluster

import (
	"time"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
)

// Epoch is the virtual time a [Cluster] starts at unless told otherwise.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configure a [Cluster]. The zero value is usable.
type Options struct {
	Start            time.Time // zero: Epoch
	Seed             uint64    // seeds generated names
	GracefulDeletion bool      // see APIOptions.GracefulDeletion
	Nodes            int       // see Kubelet.Nodes
	// Unsynced starts the informer before its initial list (see
	// [NewUnsyncedInformer]): the test calls Informer.InitialList.
	Unsynced bool
}

// Cluster wires the parts of a simulated cluster to one virtual clock: the
// API, a PodControl client of it, an informer watching it and a kubelet.
// Its fields may be used directly. It is not safe for concurrent use beyond
// what its parts promise (the API and the Client are; the Kubelet is not).
type Cluster struct {
	Clock    *fakeclock.Clock
	API      *API
	Client   *Client
	Informer *Informer
	Kubelet  *Kubelet
}

// New returns an empty cluster at opts.Start.
func New(opts Options) *Cluster {
	start := opts.Start
	if start.IsZero() {
		start = Epoch
	}
	clock := fakeclock.New(start)
	api := NewAPI(APIOptions{Clock: clock, Seed: opts.Seed, GracefulDeletion: opts.GracefulDeletion})
	inf := NewInformer
	if opts.Unsynced {
		inf = NewUnsyncedInformer
	}
	return &Cluster{
		Clock:    clock,
		API:      api,
		Client:   NewClient(api),
		Informer: inf(api, clock),
		Kubelet:  &Kubelet{API: api, Nodes: opts.Nodes},
	}
}
