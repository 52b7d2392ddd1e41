// Package clientgo connects a [reconcile.Controller] to client-go: a pod
// control and patcher over a [kubernetes.Interface] ([PodControl]), owner and
// pod lookups over informer caches ([Owners], [Pods]), informer event
// handlers that unwrap tombstones and enqueue the owners the Controller names
// ([Register]), a worker loop over a rate-limited workqueue ([Worker]), and the
// ReplicaSet status write with upstream's retry ([ReplicaSetStatusWriter]),
// and the informers' store versions for the consistency gate
// ([CacheVersions]). [ReplicaSets] puts them together for apps/v1
// ReplicaSets; the consistency gate is on, as in upstream v1.37:
//
//	cfg := clientgo.ReplicaSets(client, factory, recorder)
//	ctrl, err := reconcile.NewController(cfg)
//	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
//	err = clientgo.Register(ctrl, factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer(), queue)
//	factory.Start(ctx.Done())
//	clientgo.Worker{Queue: queue, Sync: ctrl.Sync}.Run(ctx, 5)
//
// For tests, package [github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster]
// is a client-go fake clientset that behaves like an API server (generated
// names, UIDs, ordered watches).
package clientgo
