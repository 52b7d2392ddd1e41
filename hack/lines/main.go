// Command lines counts code lines: the non-blank, non-comment lines of the
// Go files in each directory given, excluding tests (_test.go) and
// generated files (a "Code generated ... DO NOT EDIT." comment). A line
// counts when any token other than a comment is on it (a multi-line string
// counts every line it spans). It prints one line per directory:
//
//	go run ./hack/lines examples/replicaset/controller examples/podset/controller
//
// The counts are figures to read, not budgets: code users copy is written to
// be read, one statement per line, whatever that costs in lines. Directories
// are not walked recursively: a package is a directory.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: lines DIR...")
		os.Exit(2)
	}
	for _, dir := range os.Args[1:] {
		code, all, files, err := countDir(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "lines:", err)
			os.Exit(1)
		}
		fmt.Printf("%-32s %4d code lines (%d in all) in %s\n", dir, code, all, strings.Join(files, " "))
	}
}

// countDir counts the code lines and all lines of dir's non-test,
// non-generated Go files.
func countDir(dir string) (code, all int, files []string, err error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, 0, nil, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return 0, 0, nil, err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			return 0, 0, nil, err
		}
		if ast.IsGenerated(f) {
			continue
		}
		c, a := countFile(src)
		code += c
		all += a
		files = append(files, filepath.Base(p))
	}
	return code, all, files, nil
}

// countFile returns the number of lines holding a non-comment token, and
// the number of lines.
func countFile(src []byte) (code, all int) {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	lines := map[int]bool{}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.COMMENT || (tok == token.SEMICOLON && lit == "\n") {
			continue
		}
		first := file.Line(pos)
		last := first + strings.Count(lit, "\n")
		for l := first; l <= last; l++ {
			lines[l] = true
		}
	}
	all = strings.Count(string(src), "\n")
	if len(src) > 0 && src[len(src)-1] != '\n' {
		all++
	}
	return len(lines), all
}
