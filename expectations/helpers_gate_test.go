package expectations_test

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// podsCache is Options.Caches with one entry: the pods cache version.
func podsCache(version func() string) map[schema.GroupResource]func() string {
	return map[schema.GroupResource]func() string{expectations.PodsResource: version}
}
