package fakecluster_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
)

// Unlike the plain fake clientset, the cluster generates names, and its
// informers list and watch it as they would an API server.
func ExampleNew() {
	c := fakecluster.New(1, fakecluster.Faults{})
	factory := informers.NewSharedInformerFactory(c.Clientset, 0)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pods := factory.Core().V1().Pods()
	pods.Informer() // registered before Start
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Namespace: "default"}}
	created, err := c.Clientset.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(created.Name, "web-"), len(created.Name), created.UID != "")

	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	cached, _ := pods.Lister().List(labels.Everything())
	fmt.Println("in the informer's cache:", len(cached), cached[0].Name == created.Name)
	// Output:
	// true 9 true
	// in the informer's cache: 1 true
}
