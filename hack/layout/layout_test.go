package layout_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const modulePath = "github.com/reconcilekit/reconcilekit"

// libraryRoots are the library's packages, relative to the repository root;
// a folder below one of them (reconcile/internal/cluster) belongs to it.
var libraryRoots = []string{"expectations", "slowstart", "podrank", "status", "reconcile"}

// pkg is one package directory of the root module and what its files import
// from this repository, tests included.
type pkg struct {
	dir     string // relative to the repository root, slash-separated
	imports []string
}

func TestLayout(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the test must run in hack/layout of the root module")
	require.Contains(t, string(gomod), "module "+modulePath+"\n", "%s is not the repository root", root)

	pkgs := readPackages(t, root)
	require.NotEmpty(t, pkgs)

	importedByLibrary := map[string]bool{}
	for _, p := range pkgs {
		if !isLibrary(p.dir) {
			continue
		}
		for _, imp := range p.imports {
			importedByLibrary[imp] = true
		}
	}

	for _, p := range pkgs {
		if !isLibrary(p.dir) && !isInternal(p.dir) {
			continue
		}
		for _, imp := range p.imports {
			assert.True(t, isLibrary(imp) || isInternal(imp),
				"%s imports %s, which is neither the library nor internal/", p.dir, imp)
			if isInternal(p.dir) {
				assert.False(t, isLibrary(imp),
					"%s imports the library package %s: internal/ must sit below the library", p.dir, imp)
			}
		}
		if isInternal(p.dir) {
			assert.True(t, importedByLibrary[p.dir],
				"%s is imported by no library package: move it next to what uses it", p.dir)
		}
	}

	var library, internal []string
	for _, p := range pkgs {
		switch {
		case isLibrary(p.dir):
			library = append(library, p.dir)
		case isInternal(p.dir):
			internal = append(internal, p.dir)
		}
	}
	t.Logf("library packages: %s", strings.Join(library, " "))
	t.Logf("internal packages: %s", strings.Join(internal, " "))
}

func isLibrary(dir string) bool {
	for _, r := range libraryRoots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

func isInternal(dir string) bool {
	return strings.HasPrefix(dir, "internal/")
}

// readPackages parses the import clauses of every .go file of the root
// module: folders with a go.mod of their own, testdata and hidden folders are
// other modules or not code.
func readPackages(t *testing.T, root string) []pkg {
	t.Helper()
	byDir := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := path.Dir(rel)
		if byDir[dir] == nil {
			byDir[dir] = map[string]bool{}
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if rest, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				byDir[dir][rest] = true
			}
		}
		return nil
	})
	require.NoError(t, err)

	var pkgs []pkg
	for dir, imports := range byDir {
		p := pkg{dir: dir}
		for imp := range imports {
			p.imports = append(p.imports, imp)
		}
		slices.Sort(p.imports)
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b pkg) int { return strings.Compare(a.dir, b.dir) })
	return pkgs
}
