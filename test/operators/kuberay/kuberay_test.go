package kuberay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The operator under test, pinned, and the file the adapter replaces.
const (
	operatorModule  = "github.com/ray-project/kuberay/ray-operator"
	operatorVersion = "v1.5.0"
	replacedFile    = "controllers/ray/expectations/scale_expectations.go"
	adapterFile     = "adapter/scale_expectations.go"
	// probeFile holds our probes of KubeRay's behaviour, copied into both
	// copies as probedFile.
	probeFile  = "adapter/probe_test.go"
	probedFile = "controllers/ray/expectations/reconcilekit_probe_test.go"
	// buildConstraint heads the adapter, keeping it out of this repository's
	// builds; the copy drops it.
	buildConstraint = "//go:build kuberay\n\n"
	rootModule      = "github.com/reconcilekit/reconcilekit"
	adaptersModule  = rootModule + "/adapters" // the adapter reads pods with ctrlruntime.PodLookup
)

// unitPackages are the operator's packages whose tests use the expectations
// and need no API server: the expectations' own tests, and the controllers'
// unit tests, which build the RayCluster reconciler on a fake client. Their
// envtest suite (envtestSuite, in the second package) is skipped here.
var unitPackages = []string{"./controllers/ray/expectations/...", "./controllers/ray/"}

const envtestSuite = "TestAPIs"

// knownDifferences are our probes (probeFile), each pinning a behaviour of
// KubeRay's store that the adapter changes on purpose: they pass before the
// swap and fail after it. docs/migrating.md explains each.
var knownDifferences = []string{"TestProbeTerminatingPodBlocksDeletion"}

const probePackage = "github.com/ray-project/kuberay/ray-operator/controllers/ray/expectations"

// Time bounds of each step (a cold module cache and build cost most); go
// test's -timeout (OPERATOR_TIMEOUT in the Makefile) bounds the whole run.
const (
	downloadTimeout = 5 * time.Minute
	tidyTimeout     = 10 * time.Minute
	unitTimeout     = 20 * time.Minute
	buildCPTimeout  = 30 * time.Minute // make controlplane from cold: about 20 minutes
	envtestTimeout  = 25 * time.Minute
)

var envtest = flag.Bool("kuberay.envtest", false,
	"also run KubeRay's envtest suite ("+envtestSuite+") before and after, on the binaries make controlplane builds")

// TestKubeRayExpectationsSwap runs KubeRay's tests with its own expectations
// and with the adapter over reconcilekit's, and requires the same result for
// every test, by name.
func TestKubeRayExpectationsSwap(t *testing.T) {
	root := repoRoot(t)
	src := operatorDir(t)
	work := filepath.Join(root, ".cache", "operators", "kuberay")
	before := copyTree(t, src, filepath.Join(work, "before"))
	after := copyTree(t, src, filepath.Join(work, "after"))
	for _, dir := range []string{before, after} {
		copyOurs(t, probeFile, filepath.Join(dir, probedFile))
	}
	swapIn(t, root, after)
	logModDiff(t, before, after)
	goCmd(t, after, tidyTimeout, "vet", "./"+filepath.Dir(replacedFile)) // the adapter, in place

	type suite struct {
		name string
		run  func(t *testing.T, dir string) map[string]string
	}
	suites := []suite{{"unit", runUnit}}
	if *envtest {
		assets := envtestAssets(t, root, work)
		suites = append(suites, suite{"envtest", func(t *testing.T, dir string) map[string]string {
			return runEnvtest(t, dir, assets)
		}})
	}
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) {
			want := s.run(t, before)
			got := s.run(t, after)
			t.Logf("before (KubeRay's expectations): %s", tally(want))
			t.Logf("after (the adapter):             %s", tally(got))
			if len(want) == 0 {
				t.Fatal("no test results before the swap")
			}
			for _, d := range diff(want, got) {
				t.Error(d)
			}
		})
	}
	t.Run("probes", func(t *testing.T) {
		want := runProbes(t, before)
		got := runProbes(t, after)
		t.Logf("before: %s; after: %s (package results included)", tally(want), tally(got))
		for _, name := range knownDifferences {
			name = probePackage + " " + name
			t.Logf("%s: %s before the swap, %s after", name, want[name], got[name])
			if want[name] != "pass" || got[name] != "fail" {
				t.Errorf("%s: want pass before the swap and fail after", name)
			}
			delete(want, name)
			delete(got, name)
		}
		delete(want, probePackage) // the package fails after, with its probes
		delete(got, probePackage)
		for _, d := range diff(want, got) {
			t.Errorf("a probe not in knownDifferences: %s", d)
		}
	})
}

// TestAdapterLines counts the code lines (hack/lines: non-blank,
// non-comment) of KubeRay's expectations package and of the adapter.
func TestAdapterLines(t *testing.T) {
	root := repoRoot(t)
	orig := filepath.Join(operatorDir(t), filepath.Dir(replacedFile))
	adapter, err := filepath.Abs(filepath.Dir(adapterFile))
	if err != nil {
		t.Fatal(err)
	}
	out := goCmd(t, root, time.Minute, "run", "./hack/lines", orig, adapter)
	counts := regexp.MustCompile(`(\d+) code lines`).FindAllStringSubmatch(out, -1)
	if len(counts) != 2 {
		t.Fatalf("hack/lines printed %q", out)
	}
	was, _ := strconv.Atoi(counts[0][1])
	now, _ := strconv.Atoi(counts[1][1])
	t.Logf("KubeRay's %s: %d code lines; the adapter: %d (%.0f%%)",
		filepath.Base(replacedFile), was, now, 100*float64(now)/float64(was))
	if now*100 > was*40 {
		t.Errorf("the adapter has %d code lines, more than 40%% of the %d it replaces", now, was)
	}
}

// repoRoot returns the repository root, three directories up, after checking
// that its go.mod is the root module's.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module "+rootModule+"\n") {
		t.Fatalf("%s is not the repository root (%v)", root, err)
	}
	return root
}

// operatorDir downloads the pinned operator module (a no-op when it is in
// the module cache) and returns its directory there.
func operatorDir(t *testing.T) string {
	t.Helper()
	out := goCmd(t, ".", downloadTimeout, "mod", "download", "-json", operatorModule+"@"+operatorVersion)
	var m struct{ Dir, Error string }
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download: %v %s", err, m.Error)
	}
	return m.Dir
}

// copyTree replaces dst with a writable copy of the tree at src.
func copyTree(t *testing.T, src, dst string) string {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyOurs writes our file src to dst without its build constraint.
func copyOurs(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := bytes.CutPrefix(b, []byte(buildConstraint))
	if !ok {
		t.Fatalf("%s does not start with %q", src, buildConstraint)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// swapIn writes the adapter over the replaced file in dir and makes dir's
// go.mod require the root and adapters modules of the repository at root.
func swapIn(t *testing.T, root, dir string) {
	t.Helper()
	copyOurs(t, adapterFile, filepath.Join(dir, replacedFile))
	const noVersion = "@v0.0.0-00010101000000-000000000000"
	goCmd(t, dir, time.Minute, "mod", "edit",
		"-require="+rootModule+noVersion, "-replace="+rootModule+"="+root,
		"-require="+adaptersModule+noVersion, "-replace="+adaptersModule+"="+filepath.Join(root, "adapters"))
	goCmd(t, dir, tidyTimeout, "mod", "tidy")
}

// logModDiff logs the lines of after's go.mod that before's lacks: the
// requirement on the root module, and what adopting it moves.
func logModDiff(t *testing.T, before, after string) {
	t.Helper()
	read := func(dir string) []string {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(string(b), "\n")
	}
	was := read(before)
	var added []string
	for _, l := range read(after) {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(was, "\t"+l) && !slices.Contains(was, l) {
			added = append(added, l)
		}
	}
	t.Logf("go.mod after the swap adds or changes:\n\t%s", strings.Join(added, "\n\t"))
}

// runUnit runs unitPackages' tests in dir, without our probes, and returns
// each test's result.
func runUnit(t *testing.T, dir string) map[string]string {
	args := append([]string{"test", "-json", "-count=1", "-skip", "^(" + envtestSuite + "|TestProbe.*)$"}, unitPackages...)
	return parseTestJSON(t, goTest(t, dir, unitTimeout, nil, args...))
}

// runProbes runs our probes in dir and returns their results.
func runProbes(t *testing.T, dir string) map[string]string {
	return parseTestJSON(t, goTest(t, dir, unitTimeout, nil,
		"test", "-json", "-count=1", "-run", "^TestProbe", "./"+filepath.Dir(probedFile)))
}

// runEnvtest runs the envtest suite in dir on the binaries in assets and
// returns each Ginkgo spec's state, and the suite's result.
func runEnvtest(t *testing.T, dir, assets string) map[string]string {
	report := filepath.Join(dir, "ginkgo-report.json")
	out := goTest(t, dir, envtestTimeout, []string{"KUBEBUILDER_ASSETS=" + assets},
		"test", "-json", "-count=1", "-timeout", envtestTimeout.String(), "-run", "^"+envtestSuite+"$",
		"./controllers/ray/", "-args", "-ginkgo.json-report="+report)
	results := parseTestJSON(t, out)
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("no Ginkgo report: %v", err)
	}
	var reports []struct {
		SpecReports []struct {
			ContainerHierarchyTexts []string
			LeafNodeType            string
			LeafNodeText            string
			State                   string
		}
	}
	if err := json.Unmarshal(b, &reports); err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			name := strings.Join(append(slices.Clone(s.ContainerHierarchyTexts), s.LeafNodeText), " / ")
			results["ginkgo "+s.LeafNodeType+": "+name] = s.State
		}
	}
	return results
}

// envtestAssets builds the control plane's binaries (make controlplane) and
// returns a directory naming etcd and kube-apiserver as envtest expects.
func envtestAssets(t *testing.T, root, work string) string {
	t.Helper()
	out := goCmd(t, filepath.Join(root, "test", "controlplane"), buildCPTimeout, "run", "./cmd/controlplane", "build")
	dir := filepath.Join(work, "assets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		m := regexp.MustCompile(`(?m)^` + name + `\s+(\S+)$`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("controlplane build printed no %s:\n%s", name, out)
		}
		link := filepath.Join(dir, name)
		if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.Symlink(m[1], link); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parseTestJSON returns the result ("pass", "fail", "skip") of every test
// and subtest ("package Test/sub") and package ("package") in go test
// -json's output.
func parseTestJSON(t *testing.T, out []byte) map[string]string {
	t.Helper()
	results := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var e struct{ Action, Package, Test string }
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Package == "" {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			results[strings.TrimSpace(e.Package+" "+e.Test)] = e.Action
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return results
}

// tally counts results by value: "228 pass, 1 fail".
func tally(results map[string]string) string {
	n := map[string]int{}
	for _, r := range results {
		n[r]++
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[r], r))
	}
	return strings.Join(parts, ", ")
}

// diff lists the names whose results differ, sorted.
func diff(want, got map[string]string) []string {
	var out []string
	for name, w := range want {
		if g, ok := got[name]; !ok {
			out = append(out, fmt.Sprintf("%s: %s before, missing after", name, w))
		} else if g != w {
			out = append(out, fmt.Sprintf("%s: %s before, %s after", name, w, g))
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			out = append(out, fmt.Sprintf("%s: missing before, %s after", name, g))
		}
	}
	slices.Sort(out)
	return out
}

// goTest runs a go test command in dir and returns its standard output. A
// failing test is a result, not an error: only a timeout or no output fails
// t.
func goTest(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) []byte {
	t.Helper()
	out, stderr, err := run(dir, timeout, env, args)
	if errors.Is(err, context.DeadlineExceeded) || len(out) == 0 {
		t.Fatalf("go %s in %s: %v (timeout %v)\n%s", strings.Join(args, " "), dir, err, timeout, stderr)
	}
	return out
}

// goCmd runs a go command in dir, bounded by timeout, and returns its
// standard output; any failure fails t.
func goCmd(t *testing.T, dir string, timeout time.Duration, args ...string) string {
	t.Helper()
	out, stderr, err := run(dir, timeout, nil, args)
	if err != nil {
		t.Fatalf("go %s in %s: %v (timeout %v)\n%s", strings.Join(args, " "), dir, err, timeout, stderr)
	}
	return string(out)
}

// run runs go with args in dir, in a process group of its own, which is
// killed whole (test binaries, and the API servers envtest starts, too)
// when timeout passes. The environment is the caller's plus env, without a
// workspace or extra flags, which would change what the copies build.
func run(dir string, timeout time.Duration, env, args []string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS="), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	stdout, err = cmd.Output()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w: %v", ctx.Err(), err)
	}
	return stdout, errBuf.Bytes(), err
}
