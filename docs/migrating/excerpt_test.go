package migrating_test

import (
	"bytes"
	"os"
	"testing"
)

// excerptMarker precedes, in docs/migrating.md, each Go block that must
// appear verbatim in example_test.go.
const excerptMarker = "<!-- excerpt of docs/migrating/example_test.go -->\n```go\n"

// TestDocExcerpts checks that the "after" code of docs/migrating.md is an
// exact excerpt of the compiled Example, so that the two cannot drift.
func TestDocExcerpts(t *testing.T) {
	doc, err := os.ReadFile("../migrating.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	blocks := excerpts(doc)
	if len(blocks) == 0 {
		t.Fatalf("docs/migrating.md has no block after %q", excerptMarker)
	}
	for i, b := range blocks {
		if len(bytes.TrimSpace(b)) == 0 {
			t.Errorf("excerpt %d is empty", i+1)
			continue
		}
		if !bytes.Contains(src, b) {
			t.Errorf("excerpt %d of docs/migrating.md is not in example_test.go verbatim:\n%s", i+1, b)
		}
	}
}

// excerpts returns the body of every Go block that follows excerptMarker,
// up to and including its last newline; a block without a closing fence is
// returned whole, so that the check fails on it.
func excerpts(doc []byte) [][]byte {
	var out [][]byte
	marker := []byte(excerptMarker)
	for {
		i := bytes.Index(doc, marker)
		if i < 0 {
			return out
		}
		doc = doc[i+len(marker):]
		end := bytes.Index(doc, []byte("\n```\n"))
		if end < 0 {
			return append(out, doc)
		}
		out = append(out, doc[:end+1])
		doc = doc[end:]
	}
}

// TestExcerpts pins the extraction itself: a block is taken from the line
// after the marker up to its closing fence, and a missing fence keeps the rest.
func TestExcerpts(t *testing.T) {
	doc := []byte("text\n" + excerptMarker + "a\nb\n```\nmore\n" + excerptMarker + "c\n")
	got := excerpts(doc)
	want := []string{"a\nb\n", "c\n"}
	if len(got) != len(want) {
		t.Fatalf("got %d blocks %q, want %q", len(got), got, want)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("block %d = %q, want %q", i, got[i], want[i])
		}
	}
}
