package telemetry_test

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
	"github.com/reconcilekit/reconcilekit/adapters/telemetry"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// A client-go ReplicaSet controller with its metrics: the Collector fed by
// the Config's hooks and by the Worker, and the workqueue's metrics in the
// same registry.
func Example_clientGo() {
	client := fakecluster.New(1, fakecluster.Faults{}).Clientset
	registry := prometheus.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	factory := informers.NewSharedInformerFactory(client, 0)
	cfg, collector := telemetry.Instrument(clientgo.ReplicaSets(client, factory, nil), telemetry.Options{})
	registry.MustRegister(collector)
	ctrl, err := reconcile.NewController(cfg)
	if err != nil {
		panic(err)
	}
	provider, err := clientgo.WorkqueueMetrics(registry)
	if err != nil {
		panic(err)
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "replicaset", MetricsProvider: provider})
	pods, replicaSets := factory.Core().V1().Pods().Informer(), factory.Apps().V1().ReplicaSets().Informer()
	if err := clientgo.Register(ctrl, pods, replicaSets, queue); err != nil {
		panic(err)
	}
	factory.Start(ctx.Done())
	synced := []cache.InformerSynced{pods.HasSynced, replicaSets.HasSynced}
	go clientgo.Worker{Queue: queue, Sync: ctrl.Sync, Synced: synced, Metrics: collector}.Run(ctx, 2)

	if _, err := client.AppsV1().ReplicaSets("default").Create(ctx, webReplicaSet(3), metav1.CreateOptions{}); err != nil {
		panic(err)
	}
	for range 2000 { // bounded wait for the three creates to be counted
		if created := counter(registry, "reconcilekit_pod_creates_total", "created"); created == 3 {
			fmt.Println("pods created:", created)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("workqueue adds counted:", counter(registry, "workqueue_adds_total", "replicaset") > 0)
	// Output:
	// pods created: 3
	// workqueue adds counted: true
}

// counter returns the value of the counter family name whose series has a
// label with the value label, or -1.
func counter(registry *prometheus.Registry, name, label string) float64 {
	families, err := registry.Gather()
	if err != nil {
		return -1
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return -1
}

func webReplicaSet(replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": "web"}
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
			},
		},
	}
}
