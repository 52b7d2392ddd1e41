package ctrlruntime

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// Register runs upstream's five workers unless told otherwise, and passes
// the rest of controller-runtime's options through.
func TestControllerOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want int
	}{
		{name: "zero value: upstream's 5", opts: Options{}, want: 5},
		{name: "Workers", opts: Options{Workers: 2}, want: 2},
		{name: "Workers over MaxConcurrentReconciles", opts: Options{Workers: 3, Controller: controller.Options{MaxConcurrentReconciles: 7}}, want: 3},
		{name: "MaxConcurrentReconciles kept", opts: Options{Controller: controller.Options{MaxConcurrentReconciles: 7}}, want: 7},
		{name: "negative Workers", opts: Options{Workers: -1}, want: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Controller.CacheSyncTimeout = time.Minute
			got := tc.opts.controllerOptions()
			assert.Equal(t, tc.want, got.MaxConcurrentReconciles)
			assert.Equal(t, time.Minute, got.CacheSyncTimeout, "passed through")
		})
	}
}
