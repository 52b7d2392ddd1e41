package rulesdoc_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	modulePath = "github.com/reconcilekit/reconcilekit"
	rulesPath  = "docs/rules.md"
)

var (
	// ruleRE matches a rule handle; \d+ is greedy, so a longer handle is
	// never read as a shorter one.
	ruleRE    = regexp.MustCompile(`\bR-(\d+)\.(\d+)`)
	entryRE   = regexp.MustCompile(`^### (R-(\d+)\.(\d+)) \S`)
	anchorRE  = regexp.MustCompile(`^<a id="([^"]*)"></a>$`)
	headingRE = regexp.MustCompile(`^#{1,3} `)
	// pinRE splits "dir/of/package.TestName": the package directory is
	// relative to the repository root, the name a test, fuzz target,
	// example or benchmark.
	pinRE = regexp.MustCompile(`^([A-Za-z0-9_./-]+)\.((?:Test|Fuzz|Example|Benchmark)[A-Za-z0-9_]*)$`)

	// outsideRefs are the spellings of references to the team's spec, which
	// lives outside the repository. They are built from pieces so that this
	// file does not match itself.
	outsideRefs = []string{"SPEC" + ".md", "SPEC" + " §"}
)

// entry is one rule of docs/rules.md.
type entry struct {
	line     int      // line of the ### heading
	anchor   string   // id of the <a> line just above the heading, "" if none
	upstream bool     // has an "Upstream: " line
	pinned   bool     // has a "Pinned by: " line
	pins     []string // the tests the Pinned by line names
	pinsLine int
}

// repoFile is a regular file of the repository, path relative to the root.
type repoFile struct {
	rel  string
	data []byte
}

func TestRulesDoc(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the test must run in hack/rulesdoc of the root module")
	require.Contains(t, string(gomod), "module "+modulePath+"\n", "%s is not the repository root", root)

	files := walk(t, root)
	doc, ok := findFile(files, rulesPath)
	require.True(t, ok, "%s is missing", rulesPath)
	entries := parseEntries(t, doc.data)
	require.NotEmpty(t, entries, "%s has no rule entries", rulesPath)

	t.Run("entries are well formed", func(t *testing.T) {
		var bad []string
		for _, id := range sortedIDs(entries) {
			e := entries[id]
			if want := anchorFor(id); e.anchor != want {
				bad = append(bad, fmt.Sprintf("%s:%d: %s needs the line <a id=%q></a> right above its heading", rulesPath, e.line, id, want))
			}
			if !e.upstream {
				bad = append(bad, fmt.Sprintf("%s:%d: %s has no \"Upstream: \" line", rulesPath, e.line, id))
			}
			if !e.pinned {
				bad = append(bad, fmt.Sprintf("%s:%d: %s has no \"Pinned by: \" line", rulesPath, e.line, id))
			}
		}
		report(t, "malformed entries in "+rulesPath, bad)
	})

	t.Run("every cited rule has an entry", func(t *testing.T) {
		var bad []string
		for _, f := range files {
			if ext := filepath.Ext(f.rel); ext != ".go" && ext != ".md" {
				continue
			}
			eachLine(f.data, func(n int, line string) {
				for _, id := range ruleRE.FindAllString(line, -1) {
					if _, ok := entries[id]; !ok {
						bad = append(bad, fmt.Sprintf("%s:%d: cites %s, which has no entry in %s", f.rel, n, id, rulesPath))
					}
				}
			})
		}
		report(t, "rules cited without an entry in "+rulesPath, bad)
	})

	t.Run("pinning tests exist", func(t *testing.T) {
		tests := testFuncs(t, files)
		var bad []string
		for _, id := range sortedIDs(entries) {
			e := entries[id]
			for _, pin := range e.pins {
				m := pinRE.FindStringSubmatch(pin)
				if m == nil {
					bad = append(bad, fmt.Sprintf("%s:%d: %s: %q is not <package directory>.<TestName>", rulesPath, e.pinsLine, id, pin))
					continue
				}
				if !tests[m[1]][m[2]] {
					bad = append(bad, fmt.Sprintf("%s:%d: %s is pinned by %s, but no _test.go file in %s declares func %s", rulesPath, e.pinsLine, id, pin, m[1], m[2]))
				}
			}
		}
		report(t, "Pinned by lines naming missing tests", bad)
	})

	t.Run("no references outside the repository", func(t *testing.T) {
		var bad []string
		for _, f := range files {
			if f.rel == "CHANGELOG.md" || bytes.IndexByte(f.data, 0) >= 0 {
				continue // the changelog records history; NUL means binary
			}
			eachLine(f.data, func(n int, line string) {
				for _, ref := range outsideRefs {
					if strings.Contains(line, ref) {
						bad = append(bad, fmt.Sprintf("%s:%d: mentions %q; cite the rule in %s instead", f.rel, n, ref, rulesPath))
					}
				}
			})
		}
		report(t, "references to a document outside the repository", bad)
	})
}

// walk returns every regular file under root, skipping .git, .cache and
// testdata directories, in lexical order.
func walk(t *testing.T, root string) []repoFile {
	t.Helper()
	var files []repoFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".cache", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files = append(files, repoFile{rel: filepath.ToSlash(rel), data: data})
		return nil
	})
	require.NoError(t, err)
	return files
}

func findFile(files []repoFile, rel string) (repoFile, bool) {
	for _, f := range files {
		if f.rel == rel {
			return f, true
		}
	}
	return repoFile{}, false
}

// parseEntries reads the rule entries of the rules document: a "### R-x.y
// Title" heading, the anchor line above it, and up to the next heading its
// "Upstream: " and "Pinned by: " lines.
func parseEntries(t *testing.T, data []byte) map[string]*entry {
	t.Helper()
	entries := map[string]*entry{}
	var cur *entry
	prev := ""
	eachLine(data, func(n int, line string) {
		defer func() { prev = line }()
		if m := entryRE.FindStringSubmatch(line); m != nil {
			id := m[1]
			if old, dup := entries[id]; dup {
				t.Errorf("%s:%d: second entry for %s (the first is on line %d)", rulesPath, n, id, old.line)
			}
			cur = &entry{line: n}
			if a := anchorRE.FindStringSubmatch(prev); a != nil {
				cur.anchor = a[1]
			}
			entries[id] = cur
			return
		}
		if headingRE.MatchString(line) {
			cur = nil
			return
		}
		if cur == nil {
			return
		}
		switch {
		case strings.HasPrefix(line, "Upstream: "):
			cur.upstream = true
		case strings.HasPrefix(line, "Pinned by: "):
			cur.pinned, cur.pinsLine = true, n
			list := strings.TrimSpace(strings.TrimPrefix(line, "Pinned by: "))
			if list == "none yet" {
				return
			}
			for _, p := range strings.Split(list, ",") {
				cur.pins = append(cur.pins, strings.Trim(strings.TrimSpace(p), "`"))
			}
		}
	})
	return entries
}

// testFuncs indexes the top-level functions declared in _test.go files by
// package directory (relative to the root) and name.
func testFuncs(t *testing.T, files []repoFile) map[string]map[string]bool {
	t.Helper()
	funcs := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if !strings.HasSuffix(f.rel, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f.rel, f.data, parser.SkipObjectResolution)
		if !assert.NoError(t, err, "parsing %s", f.rel) {
			continue
		}
		dir := filepath.ToSlash(filepath.Dir(f.rel))
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			if funcs[dir] == nil {
				funcs[dir] = map[string]bool{}
			}
			funcs[dir][fd.Name.Name] = true
		}
	}
	return funcs
}

// eachLine calls fn with every line of data and its 1-based number.
func eachLine(data []byte, fn func(n int, line string)) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for n := 1; sc.Scan(); n++ {
		fn(n, sc.Text())
	}
}

// anchorFor is the anchor id of a rule: "R-6.13" has "r-6-13".
func anchorFor(id string) string {
	return strings.ToLower(strings.ReplaceAll(id, ".", "-"))
}

// sortedIDs returns the rule ids in document order.
func sortedIDs(entries map[string]*entry) []string {
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return entries[a].line - entries[b].line })
	return ids
}

// report fails the test once, listing every problem on its own line.
func report(t *testing.T, what string, problems []string) {
	t.Helper()
	if len(problems) > 0 {
		assert.Fail(t, fmt.Sprintf("%d %s:\n%s", len(problems), what, strings.Join(problems, "\n")))
	}
}
