package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
)

// SyncOnce runs one sync of rs against client, with the informer caches
// holding exactly rs and pods (no informer is started).
func SyncOnce(ctx context.Context, client kubernetes.Interface, rs *appsv1.ReplicaSet, pods []*corev1.Pod) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	rsInf, podInf := factory.Apps().V1().ReplicaSets(), factory.Core().V1().Pods()
	if err := rsInf.Informer().GetIndexer().Add(rs); err != nil {
		return err
	}
	for _, p := range pods {
		if err := podInf.Informer().GetIndexer().Add(p); err != nil {
			return err
		}
	}
	c, err := New(client, factory, Options{})
	if err != nil {
		return err
	}
	_, err = c.sync(ctx, rs.Namespace+"/"+rs.Name)
	return err
}
