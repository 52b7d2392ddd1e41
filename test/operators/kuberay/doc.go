// Package kuberay checks reconcilekit's expectations against a real
// operator: KubeRay's ray-operator, whose hand-written scale expectations
// (controllers/ray/expectations) adapter/scale_expectations.go replaces
// with a thin layer over expectations/perpod.Tracker and
// adapters/ctrlruntime.PodLookup.
//
// TestKubeRayExpectationsSwap copies the pinned ray-operator module from the
// Go module cache into .cache/operators/kuberay at the repository root
// twice, swaps the adapter into the second copy (its go.mod requiring this
// repository's root and adapters modules through replace directives), runs KubeRay's own
// tests of the packages that use the expectations in both copies, and fails
// unless every test has the same result by name in both. Our probes
// (adapter/probe_test.go, copied into both) pin the behaviours of KubeRay's
// store that the adapter changes on purpose: each must pass before the swap
// and fail after it. With
// -kuberay.envtest it also runs KubeRay's envtest suite (TestAPIs, Ginkgo)
// on the kube-apiserver and etcd that make controlplane builds, and
// compares it spec by spec. TestAdapterLines prints the code lines of the
// original file and of the adapter (hack/lines) and fails if the adapter has
// more than 40% of the original's.
//
// The module is not part of make test (it builds KubeRay and its
// dependencies): make operator-test runs it. docs/migrating.md walks through
// the adapter.
package kuberay
