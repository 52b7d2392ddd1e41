// Command apicount prints the size of each package's exported surface, the
// figures issue 41's goals are stated in:
//
//	go run ./hack/apicount expectations reconcile adapters/clientgo
//
// For each directory (a package; not walked recursively) it prints, and
// then their sums on a last line, "total":
//
//   - names: exported top-level constants, variables, types and functions,
//     plus the exported methods declared on exported types (an interface's
//     methods are part of its type and not counted again);
//   - fields: the exported fields of exported struct types, counted at
//     the top level of each struct (an embedded exported type counts once);
//   - lines: the non-test Go lines, blank and comment lines included (code
//     lines are hack/lines' job).
//
// Test files (_test.go) are left out. It reads the source only, without
// type-checking, so a method on an unexported type that an exported alias
// names is not counted.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: apicount DIR...")
		os.Exit(2)
	}
	fmt.Printf("%-40s %6s %6s %6s\n", "package", "names", "fields", "lines")
	var total surface
	for _, dir := range os.Args[1:] {
		s, err := measure(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apicount:", err)
			os.Exit(1)
		}
		fmt.Printf("%-40s %6d %6d %6d\n", dir, s.names, s.fields, s.lines)
		total.names += s.names
		total.fields += s.fields
		total.lines += s.lines
	}
	fmt.Printf("%-40s %6d %6d %6d\n", "total", total.names, total.fields, total.lines)
}

// surface is one package's exported surface.
type surface struct {
	names  int
	fields int
	lines  int
}

// measure counts the exported surface of the package in dir.
func measure(dir string) (surface, error) {
	var s surface
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return s, err
	}
	sort.Strings(paths)
	fset := token.NewFileSet()
	exportedTypes := make(map[string]bool)
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return s, err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return s, err
		}
		s.lines += bytes.Count(src, []byte("\n"))
		files = append(files, f)
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				if ts.Name.IsExported() {
					exportedTypes[ts.Name.Name] = true
				}
			}
		}
	}
	if len(files) == 0 {
		return s, fmt.Errorf("%s: no Go files", dir)
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil || exportedTypes[receiverType(d.Recv)] {
					s.names++
				}
			case *ast.GenDecl:
				s.addGen(d)
			}
		}
	}
	return s, nil
}

// addGen counts the exported names of one const, var or type declaration.
func (s *surface) addGen(d *ast.GenDecl) {
	for _, spec := range d.Specs {
		switch sp := spec.(type) {
		case *ast.ValueSpec:
			for _, name := range sp.Names {
				if name.IsExported() {
					s.names++
				}
			}
		case *ast.TypeSpec:
			if !sp.Name.IsExported() {
				continue
			}
			s.names++
			if st, ok := sp.Type.(*ast.StructType); ok {
				s.fields += exportedFields(st.Fields)
			}
		}
	}
}

// exportedFields counts the exported names in a field list; an embedded
// field counts by its type's name.
func exportedFields(list *ast.FieldList) int {
	n := 0
	for _, field := range list.List {
		if len(field.Names) == 0 {
			if ast.IsExported(baseName(field.Type)) {
				n++
			}
			continue
		}
		for _, name := range field.Names {
			if name.IsExported() {
				n++
			}
		}
	}
	return n
}

// receiverType is the name of a method receiver's base type.
func receiverType(recv *ast.FieldList) string {
	if len(recv.List) == 0 {
		return ""
	}
	return baseName(recv.List[0].Type)
}

// baseName strips pointers, type arguments and package qualifiers from a
// type expression and returns the type's name ("" when it has none).
func baseName(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.SelectorExpr:
			return e.Sel.Name
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}
