// Package docsnippets has no code of its own: its test keeps the code in the
// documentation compiled, so that it cannot drift from the API.
//
// The test fails when:
//   - a ```go block of a checked Markdown file (adapters/README.md,
//     examples/README.md) is not preceded by a marker line naming a Go file
//     of the repository, <!-- from: adapters/clientgo/example_test.go -->,
//     or is not a verbatim excerpt of that file: the same consecutive lines,
//     all indented alike in the file (a block cut from inside a function
//     drops the function's indentation);
//   - an untagged ``` block of those files parses as Go (tag it go and give
//     it a marker);
//   - a code block of a package doc comment (doc.go or any file's package
//     comment) that parses as Go is not a verbatim excerpt, in the same
//     sense, of one of the package's _test.go files: the Example it shows.
//
// The named files are compiled by go vet and go test in their modules, and
// their Examples run, so a block that passes is code that compiles. Blocks
// in other languages (sh, yaml) and text that does not parse as Go (log
// lines, metrics output, go.mod excerpts) are exempt.
//
// Run it with go test ./hack/docsnippets/.
package docsnippets
