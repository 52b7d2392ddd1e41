package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
)

// fallbackQuickstart is what the test runs while README.md has no marked
// quick start: the adapters' scratch consumer, which make compat keeps
// compiling against the current API (a client-go ReplicaSet controller on
// fakecluster and a controller-runtime one on the fake client, with tests).
var fallbackQuickstart = []struct{ name, file, src string }{
	{"consumer", "consumer.go", "test/consumers/adapters-floor/consumer.go"},
	{"consumer", "consumer_test.go", "test/consumers/adapters-floor/consumer_test.go"},
}

// The quick starts README must carry once it marks any (issue 33).
var wantQuickstarts = []string{"client-go", "controller-runtime", "custom-resource"}

func repo(t *testing.T) string {
	t.Helper()
	r, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func readme(t *testing.T, repo string) readmeBlocks {
	t.Helper()
	var all readmeBlocks
	for _, name := range readmeFiles {
		text, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		b, err := parseReadme(string(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name != readmeFiles[0] && b.Install != nil {
			t.Fatalf("%s: only %s has the install lines", name, readmeFiles[0])
		}
		if name == readmeFiles[0] {
			all.Install = b.Install
		}
		for _, q := range b.Quickstarts {
			if slices.ContainsFunc(all.Quickstarts, func(o quickstartFile) bool { return o.Name == q.Name && o.File == q.File }) {
				t.Fatalf("%s: a second block for quick start %s file %s", name, q.Name, q.File)
			}
			all.Quickstarts = append(all.Quickstarts, q)
		}
	}
	return all
}

// readmeFiles hold the marked blocks: the install lines and the custom
// resource's quick start in README.md (but its types.go), the ReplicaSet
// quick starts (client-go, controller-runtime) and that types.go in
// adapters/README.md (the root README has room for one).
var readmeFiles = []string{"README.md", "adapters/README.md"}

// releaseVersion is the version README's install lines name: one version
// for the root and adapters modules, both of which they must install.
func releaseVersion(t *testing.T, b readmeBlocks) string {
	t.Helper()
	if len(b.Install) == 0 {
		t.Fatal("README.md has no <!-- install --> block")
	}
	vs := installVersions(b.Install)
	version := vs[rootModule]
	for _, p := range []string{rootModule, rootModule + "/adapters"} {
		if vs[p] == "" || vs[p] != version {
			t.Fatalf("README's install lines must go get %s and %s/adapters at one version; they name %v", rootModule, rootModule, vs)
		}
	}
	if err := needVersion(version); err != nil {
		t.Fatal(err)
	}
	return version
}

// TestInstallFromFileProxy is issue 33's release test: it builds a file
// module proxy holding the working tree's published modules at the version
// README installs, and in a fresh module with no replace line and no
// workspace pastes README's quick starts, runs README's install lines
// exactly (go get both modules, go mod tidy), then vets the module and
// runs the quick starts' tests (-race); last, it go installs the two
// examples at that version. Other modules come from the
// machine's module cache (read as a file proxy) or the machine's proxy;
// the checksum database is not asked about ours (GONOSUMDB) and its
// answers the machine has cached are copied in. The module
// cache is a temporary one, so that the test's version never lands in the
// machine's; -trimpath lets the build cache serve the dependencies' builds
// all the same, from one run to the next and from the rest of make test,
// which builds with -trimpath too (the Makefile adds it to GOFLAGS): the
// same client-go and controller-runtime compiled once, not twice. A cold
// run compiles inside the test binary, past go test's default 10-minute
// timeout: make unit gives it UNIT_TIMEOUT.
func TestInstallFromFileProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a fresh module")
	}
	repo := repo(t)
	b := readme(t, repo)
	version := releaseVersion(t, b)

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	if err := buildProxy(repo, version, published, proxy); err != nil {
		t.Fatal(err)
	}
	goTool, err := exec.LookPath("go") // go test puts its own GOROOT/bin first
	if err != nil {
		t.Fatal(err)
	}
	env := goEnv(t, goTool)
	// The checksum database's answers the machine has cached (tiles,
	// lookups): the go command then asks it over the network only for
	// what the machine never fetched.
	modCache := filepath.Join(tmp, "modcache")
	if err := copyTree(filepath.Join(env["GOMODCACHE"], "cache", "download", "sumdb"), filepath.Join(modCache, "cache", "download", "sumdb")); err != nil {
		t.Fatal(err)
	}
	modDir := filepath.Join(tmp, "quickstart")
	if err := os.MkdirAll(modDir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool, args[1:]...)
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(),
			"GOBIN="+filepath.Join(tmp, "bin"),
			"GOWORK=off",
			"GOTOOLCHAIN=local",
			"GOFLAGS=-modcacherw -trimpath",
			"GOMODCACHE="+modCache,
			"GOPROXY="+strings.Join([]string{fileURL(proxy), fileURL(filepath.Join(env["GOMODCACHE"], "cache", "download")), env["GOPROXY"]}, ","),
			"GONOSUMDB="+rootModule,
			"GOPRIVATE=",
			"GONOPROXY=",
		)
		// The duration is for the log only: it shows where a cold run's
		// time goes (docs/development.md#what-each-target-costs).
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start).Round(time.Second)
		if err != nil {
			t.Fatalf("%s (%s): %v\n%s", strings.Join(args, " "), took, err, out)
		}
		t.Logf("%s (%s)\n%s", strings.Join(args, " "), took, out)
		return string(out)
	}
	run("go", "mod", "init", "example.com/quickstart")

	if len(b.Quickstarts) == 0 {
		t.Logf("README.md marks no quick start (<!-- quickstart: NAME FILE.go -->): running %s instead", fallbackQuickstart[0].src)
		for _, f := range fallbackQuickstart {
			src, err := os.ReadFile(filepath.Join(repo, f.src))
			if err != nil {
				t.Fatal(err)
			}
			b.Quickstarts = append(b.Quickstarts, quickstartFile{Name: f.name, File: f.file, Code: string(src)})
		}
	} else {
		for _, name := range wantQuickstarts {
			if !slices.ContainsFunc(b.Quickstarts, func(q quickstartFile) bool { return q.Name == name }) {
				t.Errorf("README.md marks no block of quick start %q", name)
			}
		}
	}
	for _, q := range b.Quickstarts {
		dir := filepath.Join(modDir, q.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, q.File), []byte(q.Code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range b.Install {
		args, err := installCommand(line)
		if err != nil {
			t.Fatal(err)
		}
		run(args...)
	}
	gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Replace) > 0 {
		t.Fatalf("the fresh module's go.mod has replace lines:\n%s", gomod)
	}
	for _, p := range []string{rootModule, rootModule + "/adapters"} {
		if !slices.ContainsFunc(f.Require, func(r *modfile.Require) bool { return r.Mod.Path == p && r.Mod.Version == version }) {
			t.Errorf("after README's install lines, go.mod does not require %s %s:\n%s", p, version, gomod)
		}
	}
	built := run("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}", "./...")
	if bad := unsharedModules(built, consumerModules(t, goTool, filepath.Join(repo, sharedConsumer))); len(bad) > 0 {
		t.Errorf("the quick starts build modules at versions %s does not select, so a cold make test compiles them twice "+
			"(docs/development.md#what-make-test-runs-once): align README's install lines with its go.mod, or its go.mod with them:\n  %s",
			sharedConsumer, strings.Join(bad, "\n  "))
	}
	run("go", "vet", "./...")
	out := run("go", "test", "-race", "-count=1", "./...")
	// Each quick start must have run tests, not only compiled.
	for _, q := range b.Quickstarts {
		if !regexp.MustCompile(`(?m)^ok\s+example\.com/quickstart/` + regexp.QuoteMeta(q.Name) + `\s`).MatchString(out) {
			t.Errorf("quick start %s ran no test (mark a _test.go block for it):\n%s", q.Name, out)
		}
	}
	// The examples are tagged too: go install PKG@VERSION, which refuses a
	// module with replace directives, builds both from the proxy.
	run("go", "install", rootModule+"/examples/replicaset@"+version, rootModule+"/examples/podset@"+version)
}

// goEnv reads the machine's GOPROXY and GOMODCACHE.
func goEnv(t *testing.T, goTool string) map[string]string {
	t.Helper()
	out, err := exec.Command(goTool, "env", "GOPROXY", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] == "" || lines[0] == "off" || lines[1] == "" {
		t.Fatalf("go env GOPROXY GOMODCACHE: %q", out)
	}
	return map[string]string{"GOPROXY": lines[0], "GOMODCACHE": lines[1]}
}

// copyTree copies the regular files under src to dst; a missing src
// copies nothing.
func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func fileURL(dir string) string {
	if runtime.GOOS == "windows" {
		return "file:///" + filepath.ToSlash(dir)
	}
	return "file://" + dir
}

// TestPublishedGoModsRequireByVersion: the published go.mod files have no
// replace directive and require the repository's modules at README's
// version; development joins them with go.work instead.
func TestPublishedGoModsRequireByVersion(t *testing.T) {
	repo := repo(t)
	version := releaseVersion(t, readme(t, repo))
	for _, m := range published {
		name := filepath.Join(repo, m.Dir, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse(name, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Replace) > 0 {
			t.Errorf("%s: replace directives in a published go.mod", name)
		}
		for _, r := range f.Require {
			if strings.HasPrefix(r.Mod.Path, rootModule) && r.Mod.Version != version {
				t.Errorf("%s requires %s %s, want %s", name, r.Mod.Path, r.Mod.Version, version)
			}
		}
	}
}

// TestEveryModuleInAWorkspace: every module of the repository is listed
// by the nearest go.work at or above its directory, so go commands work in
// every module without GOWORK=off. Left out: modules that go commands run
// in only with GOWORK=off set by their callers (the control-plane build
// modules, testdata). The root go.work joins the root and adapters only,
// so that their builds keep their floors (k8s.io v0.33); examples/go.work
// adds the examples (k8s.io v0.37).
func TestEveryModuleInAWorkspace(t *testing.T) {
	repo := repo(t)
	out, err := git(repo, "ls-files", "--cached", "--others", "--exclude-standard", "*go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range strings.Split(out, "\n") {
		dir := filepath.Dir(m)
		if strings.Contains(m, "testdata/") || strings.HasPrefix(m, "test/controlplane/build/") {
			continue
		}
		work, uses := nearestWork(t, repo, dir)
		if work == "" {
			t.Errorf("%s: no go.work at or above %s", m, dir)
			continue
		}
		if !slices.Contains(uses, dir) {
			t.Errorf("%s: the nearest go.work, %s, does not use %s (it uses %v)", m, work, dir, uses)
		}
	}
	_, rootUses := nearestWork(t, repo, ".")
	if want := []string{".", "adapters"}; !slices.Equal(rootUses, want) {
		t.Errorf("go.work uses %v, want %v", rootUses, want)
	}
}

// nearestWork finds the go.work the go command uses in dir (relative to
// repo) and returns its path and its use directives, relative to repo.
func nearestWork(t *testing.T, repo, dir string) (string, []string) {
	t.Helper()
	for d := dir; ; d = filepath.Dir(d) {
		name := filepath.Join(repo, d, "go.work")
		data, err := os.ReadFile(name)
		if err == nil {
			f, err := modfile.ParseWork(name, data, nil)
			if err != nil {
				t.Fatal(err)
			}
			var uses []string
			for _, u := range f.Use {
				uses = append(uses, filepath.Clean(filepath.Join(d, u.Path)))
			}
			slices.Sort(uses)
			return filepath.Join(d, "go.work"), uses
		}
		if d == "." {
			return "", nil
		}
	}
}

// TestProxyZips: at README's version, the root module's zip holds none
// of the nested modules' files, each go.mod is served as is, and the
// adapters' zip has a LICENSE.
func TestProxyZips(t *testing.T) {
	repo := repo(t)
	version := releaseVersion(t, readme(t, repo))
	out := t.TempDir()
	if err := buildProxy(repo, version, published, out); err != nil {
		t.Fatal(err)
	}
	for _, m := range published {
		dir := filepath.Join(out, filepath.FromSlash(m.Path), "@v")
		mod, err := os.ReadFile(filepath.Join(dir, version+".mod"))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(repo, m.Dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mod, want) {
			t.Errorf("%s: %s.mod differs from %s/go.mod", m.Path, version, m.Dir)
		}
		z, err := zip.OpenReader(filepath.Join(dir, version+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		prefix := m.Path + "@" + version + "/"
		names := map[string]bool{}
		for _, f := range z.File {
			if !strings.HasPrefix(f.Name, prefix) {
				t.Errorf("%s: zip entry %s outside %s", m.Path, f.Name, prefix)
			}
			names[strings.TrimPrefix(f.Name, prefix)] = true
		}
		z.Close()
		for _, need := range []string{"go.mod", "LICENSE"} {
			if !names[need] {
				t.Errorf("%s: zip has no %s", m.Path, need)
			}
		}
		for n := range names {
			for _, other := range published {
				if other.Dir != "" && other.Dir != m.Dir && strings.HasPrefix(n, other.Dir+"/") {
					t.Errorf("%s: zip holds %s of module %s", m.Path, n, other.Path)
				}
			}
			if strings.HasPrefix(n, "test/") || strings.HasPrefix(n, "hack/release/") || strings.HasPrefix(n, ".cache/") {
				t.Errorf("%s: zip holds %s, a file of a nested module or an ignored one", m.Path, n)
			}
		}
	}
	if err := buildProxy(repo, "v0.1", published, t.TempDir()); err == nil {
		t.Error("buildProxy accepted version v0.1")
	}
}

// The repository's own CHANGELOG.md follows the conventions make release
// checks, so that a release is refused only for what changed since the
// last run of make test: every heading of one of the four forms, the top
// one open (Unreleased or to be tagged), one section per version.
func TestRepositoryChangelogParses(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repo(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections, err := changelogSections(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(sections) == 0 {
		t.Fatal("CHANGELOG.md has no sections")
	}
	if k := sections[0].Kind; k != unreleased && k != toBeTagged {
		t.Errorf("CHANGELOG.md's top section is %q; want Unreleased or (%s) while changes are made", sections[0].String(), toBeTaggedNote)
	}
}

// sharedConsumer is the consumer module whose dependencies make test
// compiles (in compat) before the install test (in unit) builds README's
// quick starts: at the same versions, with the same flags, the build cache
// serves them.
const sharedConsumer = "test/consumers/adapters-newest"

// consumerModules returns the selected version of every module in the
// build list of the module in dir (workspace off), by path.
func consumerModules(t *testing.T, goTool, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command(goTool, "list", "-m", "-f", "{{.Path}} {{.Version}}", "all")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all in %s: %v", dir, err)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if path, version, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			mods[path] = version
		}
	}
	return mods
}

// unsharedModules lists the modules in built (go list -deps output, "path
// version" per package) that consumer selects at another version or not
// at all; the repository's own modules are left out (the consumer
// replaces them with the working tree).
func unsharedModules(built string, consumer map[string]string) []string {
	seen := map[string]bool{}
	var bad []string
	for _, line := range strings.Split(built, "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 || strings.HasPrefix(line, "go: ") {
			continue
		}
		path, version := fields[0], fields[1]
		if seen[path] || path == rootModule || strings.HasPrefix(path, rootModule+"/") {
			continue
		}
		seen[path] = true
		if want, ok := consumer[path]; !ok || want != version {
			bad = append(bad, fmt.Sprintf("%s %s (%s: %q)", path, version, sharedConsumer, want))
		}
	}
	sort.Strings(bad)
	return bad
}
