package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// SyncOnce runs one sync of rs against client, once the informers over
// client (which must hold rs) have synced; they are stopped before it
// returns.
func SyncOnce(ctx context.Context, client kubernetes.Interface, rs *appsv1.ReplicaSet) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := New(client, factory, Options{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer factory.Shutdown() // after cancel: it waits for the informers to stop
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("SyncOnce: the caches did not sync: %w", context.Cause(ctx))
	}
	_, err = c.sync(ctx, rs.Namespace+"/"+rs.Name)
	return err
}
