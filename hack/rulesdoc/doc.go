// Package rulesdoc has no code of its own: its test keeps docs/rules.md,
// the repository's description of the upstream rules, in step with the code
// and tests that cite them.
//
// The test walks the repository and fails when:
//   - a .go or .md file cites a rule handle (R-x.y) that has no entry in
//     docs/rules.md;
//   - an entry lacks its anchor or its Upstream or Pinned by line, or its
//     Pinned by line names a test function that does not exist;
//   - a file other than CHANGELOG.md refers to a spec document outside the
//     repository instead of to docs/rules.md.
//
// Run it with go test ./hack/rulesdoc/.
package rulesdoc
