// Package migrating holds the compiled "after" half of the worked example in
// docs/migrating.md, next to this folder: the manage step and sync of a
// controller that copied Kubernetes' pkg/controller and replicaset code,
// rewritten on the packages expectations, slowstart, podrank and status.
//
// The code lives in this package's test files (example_test.go), as a
// runnable Example with checked output, and a test keeps the excerpt in
// docs/migrating.md verbatim. The package exports nothing and is not part of
// the library's API: nothing should import it.
package migrating
