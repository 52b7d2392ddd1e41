package docsnippets_test

import (
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// markdownFiles are the Markdown files whose code blocks must be excerpts of
// compiled files, relative to the repository root.
var markdownFiles = []string{"README.md", "adapters/README.md", "examples/README.md"}

// quickstartDirs are where the repository keeps each quick start whose
// files README.md and adapters/README.md show whole, marked
// <!-- quickstart: NAME FILE.go --> (hack/release pastes those blocks into
// an empty module and runs them): a block so marked must be that file,
// byte for byte, so that the examples' tests run what the READMEs show.
var quickstartDirs = map[string]string{
	"client-go":          "examples/replicaset/quickstart",
	"controller-runtime": "examples/podset/quickstart",
	"custom-resource":    "examples/webapp/quickstart",
}

// pendingPackages are package directories whose doc comments are not checked
// yet, with the reason. Keep it empty.
var pendingPackages = map[string]string{}

// marker names the file a Markdown block is cut from; quickstartMarker the
// quick start and file a block is, whole.
var (
	marker           = regexp.MustCompile(`^<!-- from: (\S+\.go) -->$`)
	quickstartMarker = regexp.MustCompile(`^<!-- quickstart: ([a-z0-9-]+) (\S+\.go) -->$`)
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.Contains(string(gomod), "module github.com/reconcilekit/reconcilekit\n") {
		t.Fatalf("%s is not the repository root (run the test in hack/docsnippets)", root)
	}
	return root
}

// fence is one fenced code block of a Markdown file.
type fence struct {
	line   int    // 1-based line of the opening fence
	lang   string // the info string: "go", "sh", "" …
	marker string // the file named by the marker line above it, if any
	whole  string // the repository file it must equal (a quick start's), if any
	text   string // the block's lines, each ending in "\n"
}

// fences returns the fenced blocks of a Markdown text (fences of three
// backquotes at the start of a line).
func fences(src string) []fence {
	var out []fence
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		f := fence{line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(lines[i], "```"))}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := marker.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				f.marker = m[1]
			}
			if m := quickstartMarker.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				f.whole = quickstartDirs[m[1]] + "/" + m[2]
				if quickstartDirs[m[1]] == "" {
					f.whole = "unknown quick start " + m[1]
				}
			}
			break
		}
		var b strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			b.WriteString(lines[i] + "\n")
		}
		f.text = b.String()
		out = append(out, f)
	}
	return out
}

// isGo reports whether text parses as Go: declarations, or statements
// inside a function.
func isGo(text string) bool {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", "package p\n"+text, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+text+"\n}\n", 0)
	return err == nil
}

// excerptOf reports whether block's lines appear consecutively in file, each
// line of the file being one indentation (the same for all) followed by the
// block's line; blank lines match blank lines.
func excerptOf(block, file string) bool {
	want := strings.Split(strings.TrimRight(block, "\n"), "\n")
	have := strings.Split(file, "\n")
	for i := range have {
		if i+len(want) > len(have) {
			return false
		}
		indent, ok := strings.CutSuffix(have[i], want[0])
		if !ok || strings.TrimLeft(indent, " \t") != "" {
			continue
		}
		if slices.EqualFunc(want, have[i:i+len(want)], func(w, h string) bool {
			if strings.TrimSpace(w) == "" {
				return strings.TrimSpace(h) == ""
			}
			return h == indent+w
		}) {
			return true
		}
	}
	return false
}

// compiled reports why path cannot stand for compiled code, or "".
func compiled(root, path string) (string, string) {
	if !strings.HasSuffix(path, ".go") {
		return "", "not a Go file"
	}
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return "", err.Error()
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		return "", err.Error()
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "ignore") {
				return "", "excluded from builds (" + c.Text + ")"
			}
		}
	}
	return string(src), ""
}

func TestMarkdownBlocksAreCompiledExcerpts(t *testing.T) {
	root := repoRoot(t)
	for _, md := range markdownFiles {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(md)))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, f := range fences(string(src)) {
			switch {
			case f.lang == "" && isGo(f.text):
				t.Errorf("%s:%d: an untagged block parses as Go: tag it ```go and mark the file it comes from", md, f.line)
			case f.lang != "go":
				continue
			case f.whole != "":
				file, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.whole)))
				switch {
				case err != nil:
					t.Errorf("%s:%d: quick start block: %v", md, f.line, err)
				case string(file) != f.text:
					t.Errorf("%s:%d: the quick start block differs from %s: paste the whole file again", md, f.line, f.whole)
				default:
					checked++
				}
			case f.marker == "":
				t.Errorf("%s:%d: a ```go block needs a marker line above it naming the compiled file it is cut from, <!-- from: path/to/file.go -->", md, f.line)
			default:
				file, why := compiled(root, f.marker)
				switch {
				case why != "":
					t.Errorf("%s:%d: marker %s: %s", md, f.line, f.marker, why)
				case !excerptOf(f.text, file):
					t.Errorf("%s:%d: the block is not a verbatim excerpt of %s: copy it from there again", md, f.line, f.marker)
				default:
					checked++
				}
			}
		}
		t.Logf("%s: %d go blocks checked", md, checked)
	}
}

func TestPackageDocBlocksAreExamples(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, ok := pendingPackages[rel]; ok {
			return nil
		}
		checkPackageDir(t, path, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkPackageDir checks the code blocks of the package comments in dir.
func checkPackageDir(t *testing.T, dir, rel string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tests []string // the sources of the package's _test.go files
	var docs []*ast.File
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "_test.go") {
			tests = append(tests, string(src))
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Errorf("%s/%s: %v", rel, name, err)
			continue
		}
		if f.Doc != nil {
			docs = append(docs, f)
		}
	}
	var p comment.Parser
	for _, f := range docs {
		pos := fset.Position(f.Doc.Pos())
		for _, b := range p.Parse(f.Doc.Text()).Content {
			code, ok := b.(*comment.Code)
			if !ok || !isGo(code.Text) {
				continue
			}
			if !slices.ContainsFunc(tests, func(src string) bool { return excerptOf(code.Text, src) }) {
				t.Errorf("%s/%s: a code block of the package doc is not a verbatim excerpt of one of the package's _test.go files (an Example):\n%s", rel, pos.Filename, code.Text)
			}
		}
	}
}

func TestExcerptOf(t *testing.T) {
	file := "func Example() {\n\tx := 1\n\n\tfmt.Println(x)\n}\n"
	for _, tc := range []struct {
		name, block string
		want        bool
	}{
		{"dedented lines", "x := 1\n\nfmt.Println(x)\n", true},
		{"as in the file", "\tx := 1\n", true},
		{"one line differs", "x := 2\n\nfmt.Println(x)\n", false},
		{"lines not consecutive", "x := 1\nfmt.Println(x)\n", false},
		{"indentation differs", "x := 1\n\n  fmt.Println(x)\n", false},
		{"past the end", "}\nmore\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := excerptOf(tc.block, file); got != tc.want {
				t.Errorf("excerptOf(%q) = %t, want %t", tc.block, got, tc.want)
			}
		})
	}
}

func TestFencesAndMarkers(t *testing.T) {
	md := "text\n<!-- from: a/b_test.go -->\n\n```go\nx := 1\n```\n\n```sh\nls\n```\n"
	got := fences(md)
	if len(got) != 2 || got[0].marker != "a/b_test.go" || got[0].lang != "go" || got[0].text != "x := 1\n" || got[1].marker != "" || got[1].lang != "sh" {
		t.Errorf("fences = %+v", got)
	}
	if !isGo("x := 1\n") || isGo(`"leader election: became leader" lease="…"`) {
		t.Error("isGo misclassifies")
	}
}
