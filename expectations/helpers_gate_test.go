package expectations_test

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reconcilekit/reconcilekit/expectations"
)

// podsCache is GateOptions.Caches with one entry: the pods cache version.
func podsCache(version func() string) map[schema.GroupResource]func() string {
	return map[schema.GroupResource]func() string{expectations.PodsResource: version}
}

// podsGate is a Gate whose only cache is the pods cache at version.
func podsGate(version func() string) *expectations.Gate {
	return expectations.NewGate(expectations.GateOptions{Caches: podsCache(version)})
}
