// Package clientgo connects a [reconcile.Controller] to client-go: a pod
// control and patcher over a [kubernetes.Interface] ([PodControl]), owner and
// pod lookups over informer caches ([Owners], [Pods]), informer event
// handlers that unwrap tombstones and enqueue the owners the Controller names
// ([Register]), a worker loop over a rate-limited workqueue ([Worker]), and the
// ReplicaSet status write with upstream's retry ([ReplicaSetStatusWriter]),
// and the informers' store versions and sync state ([CacheVersions]).
// [ReplicaSets] puts them together for apps/v1 ReplicaSets; the consistency
// gate is on, as in upstream v1.37:
//
//	cfg := clientgo.ReplicaSets(client, factory, recorder)
//	ctrl, err := reconcile.NewController(cfg)
//	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
//	pods, replicaSets := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
//	err = clientgo.Register(ctrl, pods, replicaSets, queue)
//	factory.Start(ctx.Done())
//	worker := clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced}}
//	err = worker.Run(ctx, 5) // waits for the caches, then syncs until ctx is done
//
// No sync acts on a cache that has not loaded: [Worker.Run]
// starts no worker before the informers in Worker.Synced have synced, as
// upstream's controllers wait for their caches, and a Controller built
// with [CacheVersions] (as [ReplicaSets] builds it) refuses by itself,
// with an error matching reconcile.ErrNotSynced that the Worker retries
// with backoff and logs at V(2). Without either, a sync after the owners'
// informer has listed but before the pods' has would see none of the
// owner's pods and create them all again.
//
// For tests, package [github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster]
// is a client-go fake clientset that behaves like an API server (generated
// names, UIDs, ordered watches).
package clientgo
