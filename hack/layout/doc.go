// Package layout has no code of its own: its test keeps the repository's
// layout honest. The library is the five packages expectations, slowstart,
// podrank, status and reconcile; what they share lives in internal/; the test
// harness (test/) and the tools (hack/) sit apart and nothing of the library
// imports them.
//
// The test reads the imports of every Go file (tests included) of the root
// module and fails when:
//   - a library package, or a package under internal/, imports a package of
//     this repository outside the library and internal/;
//   - a package under internal/ is imported by no library package, so it
//     belongs with whatever uses it instead;
//   - a package under internal/ imports a library package (internal/ is the
//     floor below the library, not above it).
//
// Run it with go test ./hack/layout/.
package layout
