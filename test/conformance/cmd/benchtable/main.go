// Command benchtable reads the output of `go test -bench BenchmarkVs
// -benchmem -count N` in this module and prints one table: per case the
// median ns/op, B/op and allocs/op of reconcilekit and of the real upstream
// code over the N runs, and the speed ratio (upstream time / reconcilekit
// time), followed by the speed goals and whether they hold.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

type sample struct{ ns, bytes, allocs []float64 }

// line matches e.g. "BenchmarkVsCalculate/n=100/impl=upstream-2  1000  123 ns/op  45 B/op  6 allocs/op".
var line = regexp.MustCompile(`^Benchmark(Vs\S+)/impl=(reconcilekit|upstream)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(?:\s+([\d.]+) B/op\s+([\d.]+) allocs/op)?`)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	data := map[string]map[string]*sample{}
	var order []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		c, impl := strings.TrimPrefix(m[1], "Vs"), m[2]
		if data[c] == nil {
			data[c] = map[string]*sample{"reconcilekit": {}, "upstream": {}}
			order = append(order, c)
		}
		s := data[c][impl]
		s.ns = append(s.ns, num(m[3]))
		if m[4] != "" {
			s.bytes = append(s.bytes, num(m[4]))
			s.allocs = append(s.allocs, num(m[5]))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no BenchmarkVs results on stdin")
	}
	runs := 0
	fmt.Fprintf(out, "%-38s %14s %14s %8s %12s %12s\n", "case (medians)", "reconcilekit", "upstream", "ratio", "allocs ours", "allocs up")
	ratio := map[string]float64{}
	allocs := map[string]float64{}
	for _, c := range order {
		r, u := data[c]["reconcilekit"], data[c]["upstream"]
		if len(r.ns) == 0 || len(u.ns) == 0 {
			continue
		}
		runs = max(runs, min(len(r.ns), len(u.ns)))
		ratio[c] = median(u.ns) / median(r.ns)
		allocs[c] = median(r.allocs)
		fmt.Fprintf(out, "%-38s %14s %14s %7.2fx %12.0f %12.0f\n", c, dur(median(r.ns)), dur(median(u.ns)), ratio[c], median(r.allocs), median(u.allocs))
	}
	fmt.Fprintf(out, "(ratio = upstream time / reconcilekit time; medians of %d runs each)\n\n", runs)
	goals(out, ratio, allocs)
	return nil
}

// goals prints the three speed goals (ForDeletion, status.Calculate, expectations) and whether they hold.
func goals(out io.Writer, ratio, allocs map[string]float64) {
	check := func(name string, cases []string, ok func(c string) bool) {
		sort.Strings(cases)
		var bad []string
		for _, c := range cases {
			if !ok(c) {
				bad = append(bad, fmt.Sprintf("%s %.2fx", c, ratio[c]))
			}
		}
		verdict := "holds"
		if len(cases) == 0 {
			verdict = "not measured"
		} else if len(bad) > 0 {
			verdict = "does not hold: " + strings.Join(bad, ", ")
		}
		fmt.Fprintf(out, "goal %s: %s\n", name, verdict)
	}
	var del, calc, exp []string
	for c := range ratio {
		switch {
		case strings.HasPrefix(c, "ForDeletion/"):
			n, k := param(c, "n="), param(c, "k=")
			if n >= 1000 && k >= 0 && k <= 500 {
				del = append(del, c)
			}
		case strings.HasPrefix(c, "Calculate/"):
			calc = append(calc, c)
		case strings.HasPrefix(c, "ExpectationsCycle/"):
			exp = append(exp, c)
		}
	}
	check("ForDeletion >= 20x at n >= 1k, k <= 500", del, func(c string) bool { return ratio[c] >= 20 })
	check("status.Calculate >= 2x at n >= 100", calc, func(c string) bool { return ratio[c] >= 2 })
	var callocs []float64
	for _, c := range calc {
		callocs = append(callocs, allocs[c])
	}
	if len(callocs) > 0 {
		fmt.Fprintf(out, "goal status.Calculate allocations independent of n: %v (allocs/op over n: %v)\n",
			slices.Min(callocs) == slices.Max(callocs), callocs)
	}
	check("expectations >= 5x with 0 allocs", exp, func(c string) bool { return ratio[c] >= 5 && allocs[c] == 0 })
}

// param reads the integer after key in a case name, or -1 (k=n÷2 is -1,
// i.e. not <= 500 unless n is small, which the n >= 1k filter excludes).
func param(c, key string) int {
	i := strings.Index(c, key)
	if i < 0 {
		return -1
	}
	s := c[i+len(key):]
	if j := strings.IndexByte(s, '/'); j >= 0 {
		s = s[:j]
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 1 << 30
	}
	return v
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func dur(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.1f ns", ns)
}
