// Package conformance holds differential tests and side-by-side benchmarks
// of reconcilekit against the real k8s.io/kubernetes v1.37.2 code. It is a
// module of its own so that the root module never depends on
// k8s.io/kubernetes; nothing imports it.
package conformance
