// Package rv compares Kubernetes resource versions the way
// k8s.io/apimachinery/pkg/util/resourceversion.CompareResourceVersion does
// (apimachinery v0.35 and later), for a module whose dependency floor
// (apimachinery v0.33) predates that package.
//
//   - A well-formed version is a non-empty string of ASCII digits without a
//     leading zero; "0", "", "007", "+5" and "1e3" are malformed.
//   - Well-formed versions compare as unbounded non-negative integers: no
//     length limit, no overflow.
//   - A malformed version on either side is an error wrapping [ErrMalformed];
//     the comparison result is then 0.
//
// Sameness with apimachinery is proved by a property test in the
// test/consumers/newest module, which builds against the newest
// supported apimachinery.
package rv
