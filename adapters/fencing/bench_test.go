package fencing_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// BenchmarkLockFence is the cost a fence adds to each write: one clock
// read and one uncontended lock.
func BenchmarkLockFence(b *testing.B) {
	l, err := fencing.NewLock(&fakeLock{id: "me"}, fencing.Options{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, Clock: clock.RealClock{}})
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Update(context.Background(), record("me")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Fence(); err != nil {
			b.Fatal(err)
		}
	}
}
