package fakecluster_test

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo/fakecluster"
)

// Unlike the plain fake clientset, the cluster generates names.
func ExampleNew() {
	c := fakecluster.New(1, fakecluster.Faults{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Namespace: "default"}}
	created, err := c.Clientset.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(created.Name, "web-"), len(created.Name), created.UID != "")
	// Output: true 9 true
}
