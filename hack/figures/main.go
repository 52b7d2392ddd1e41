// Command figures keeps the benchmark figures in the repository's Markdown
// files equal to one table: docs/bench-upstream.txt, the output of `make
// bench-upstream` (with a first line saying where and when it ran).
//
// A figure is written between two markers, invisible when rendered:
//
//	<!--fig CASE FIELD-->23.72x<!--/fig-->
//
// where CASE is a row of the table (ForDeletion/n=10000/k=500) and FIELD one
// of ours, upstream, ratio, allocs-ours, allocs-upstream. The whole table is
// included with
//
//	<!--table bench-upstream-->
//	```
//	…
//	```
//	<!--/table-->
//
// Usage, from the repository root:
//
//	go run ./hack/figures        # report every figure that disagrees; exit 1 if any
//	go run ./hack/figures -w     # rewrite them from the table
//
// `make figures` runs the second; a test in this package runs the first as
// part of `make test`, so README and the benchmark notes cannot drift from
// the table.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// TablePath is the table, relative to the repository root.
const TablePath = "docs/bench-upstream.txt"

func main() {
	write := flag.Bool("w", false, "rewrite the figures instead of checking them")
	flag.Parse()
	problems, err := run(".", *write)
	if err != nil {
		fmt.Fprintln(os.Stderr, "figures:", err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "figures: %d figure(s) disagree with %s; run `make figures`\n", len(problems), TablePath)
		os.Exit(1)
	}
}

// row is one case of the table, its fields as printed.
type row map[string]string

var rowLine = regexp.MustCompile(`^(\S+)\s+([\d.]+ \S+)\s+([\d.]+ \S+)\s+([\d.]+x)\s+(\d+)\s+(\d+)\s*$`)

// parseTable returns the table's text and its rows by case name.
func parseTable(text []byte) (map[string]row, error) {
	rows := map[string]row{}
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		m := rowLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		rows[m[1]] = row{"ours": m[2], "upstream": m[3], "ratio": m[4], "allocs-ours": m[5], "allocs-upstream": m[6]}
	}
	if len(rows) == 0 {
		return nil, errors.New("no rows in the table")
	}
	return rows, nil
}

var (
	figRE   = regexp.MustCompile(`<!--fig ([^\s<>]+) ([^\s<>]+)-->(.*?)<!--/fig-->`)
	tableRE = regexp.MustCompile("(?s)<!--table bench-upstream-->\n.*?<!--/table-->")
)

// run checks (or, with write, rewrites) every Markdown file under root and
// returns one line per disagreeing figure or unknown reference.
func run(root string, write bool) ([]string, error) {
	table, err := os.ReadFile(filepath.Join(root, TablePath))
	if err != nil {
		return nil, err
	}
	rows, err := parseTable(table)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", TablePath, err)
	}
	block := "<!--table bench-upstream-->\n```\n" + strings.TrimRight(string(table), "\n") + "\n```\n<!--/table-->"
	var problems []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(old)
		for _, m := range figRE.FindAllStringSubmatch(text, -1) {
			r, ok := rows[m[1]]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: no case %s in %s", path, m[1], TablePath))
				continue
			}
			want, ok := r[m[2]]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: unknown field %q (ours, upstream, ratio, allocs-ours, allocs-upstream)", path, m[2]))
				continue
			}
			if m[3] != want && !write {
				problems = append(problems, fmt.Sprintf("%s: %s %s is %q, the table says %q", path, m[1], m[2], m[3], want))
			}
		}
		for _, m := range tableRE.FindAllString(text, -1) {
			if m != block && !write {
				problems = append(problems, fmt.Sprintf("%s: the included table differs from %s", path, TablePath))
			}
		}
		if !write {
			return nil
		}
		text = figRE.ReplaceAllStringFunc(text, func(s string) string {
			m := figRE.FindStringSubmatch(s)
			if v, ok := rows[m[1]][m[2]]; ok {
				return "<!--fig " + m[1] + " " + m[2] + "-->" + v + "<!--/fig-->"
			}
			return s
		})
		text = tableRE.ReplaceAllLiteralString(text, block)
		if text != string(old) {
			return os.WriteFile(path, []byte(text), 0o644)
		}
		return nil
	})
	return problems, err
}
