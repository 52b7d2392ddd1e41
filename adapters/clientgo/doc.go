// Package clientgo connects a [reconcile.Controller] to client-go: a pod
// control and patcher over a [kubernetes.Interface] ([PodControl]), owner and
// pod lookups over informer caches ([Owners], [Pods]), informer event
// handlers that unwrap tombstones and enqueue the owners the Controller names
// ([Register]), a worker loop over a rate-limited workqueue ([Worker]), the
// status write with upstream's retry for any owner kind ([StatusWriter]),
// the informers' store versions and sync state ([CacheVersions]), and an
// owned-only pod informer whose selection and the pod control's stamp come
// from one value ([OwnedPods]).
//
// [NewConfig] puts them together for any owner kind, a custom resource
// included, from its informer and typed client ([Kind]): the Config's Kind
// and whole Cluster, with no hand wiring; the caller adds Describe and
// Status. [ReplicaSets] is NewConfig for apps/v1 ReplicaSets with
// upstream's Describe and Status. The consistency gate is on, as in
// upstream v1.37. [Production] is the configuration we recommend, as one
// value, refused where the client-go release cannot honour it. The wiring,
// from the ReplicaSets example (a nil recorder sends no events):
//
//	factory := informers.NewSharedInformerFactory(client, 0)
//	ctrl, err := reconcile.NewController(clientgo.ReplicaSets(client, factory, nil))
//	if err != nil {
//		panic(err)
//	}
//	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
//	pods, replicaSets := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
//	if err := clientgo.Register(ctrl, pods, replicaSets, queue); err != nil {
//		panic(err)
//	}
//	factory.Start(ctx.Done())
//	// The worker syncs nothing before both caches have synced.
//	worker := clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced}}
//	go worker.Run(ctx, 2) // its only error: ctx ended before the caches synced
//
// For a custom resource, the NewConfig example builds the same from a
// generated informer and clientset.
//
// No sync acts on a cache that has not loaded: [Worker.Run]
// starts no worker before the informers in Worker.Synced have synced, as
// upstream's controllers wait for their caches, and a Controller built
// with [CachesSynced] (as [NewConfig] builds it) refuses by itself,
// with an error matching reconcile.ErrNotSynced that the Worker retries
// with backoff and logs at V(2). Without either, a sync after the owners'
// informer has listed but before the pods' has would see none of the
// owner's pods and create them all again.
//
// For tests, package [github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster]
// is a client-go fake clientset that behaves like an API server (generated
// names, UIDs, ordered watches).
package clientgo
