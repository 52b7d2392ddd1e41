package reconcile_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// recOwnerMeta returns the metadata of owner name in "default", UID
// "uid-<name>".
func recOwnerMeta(name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}
}
