package main

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	controlplane "github.com/reconcilekit/reconcilekit/test/controlplane"
	"github.com/reconcilekit/reconcilekit/test/controlplane/faultproxy"
)

// streamUser is the user of the full owner stream of a sharded run.
const streamUser = "owner-stream"

// fullStream is an unfiltered ReplicaSet informer of the driver's, behind
// a proxy of its own: the owner stream one replica that filters nothing
// receives over the same run, to hold each replica's owner watch bytes
// against. It lists and watches as the replicas' informers do (client-go's
// shared informer, protobuf, every namespace, WatchListClient as client-go
// defaults it) and decodes into a cache nobody reads.
type fullStream struct {
	proxy   *faultproxy.Proxy
	cancel  context.CancelFunc
	factory informers.SharedInformerFactory
}

// startFullStream starts the informer as streamUser and waits, up to
// timeout, for its first list.
func startFullStream(ctx context.Context, cp *controlplane.ControlPlane, timeout time.Duration) (*fullStream, error) {
	proxy, kubeconfig, err := cp.FaultProxy(streamUser)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactory(client, 0)
	inf := factory.Apps().V1().ReplicaSets().Informer()
	s := &fullStream{proxy: proxy, cancel: cancel, factory: factory}
	factory.Start(ctx.Done())
	synced, cancelWait := context.WithTimeout(ctx, timeout)
	defer cancelWait()
	if !cache.WaitForCacheSync(synced.Done(), inf.HasSynced) {
		s.close()
		return nil, errors.New("the full owner stream did not sync")
	}
	return s, nil
}

// stats is the proxy's counts so far.
func (s *fullStream) stats() faultproxy.Stats {
	return s.proxy.Stats()
}

// close stops the informer and waits for it to return.
func (s *fullStream) close() {
	s.cancel()
	s.factory.Shutdown()
}
