package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// The API baselines: hack/release/api/VERSION/NAME.export, one file per
// checked module, written by apidiff -m -w (a zip of the export data of
// every package of the module). Only the library's modules are checked:
// the examples are not API.
const apiDir = "api"

// apiModule is a module whose exported API apidiff checks.
type apiModule struct {
	Path string
	Dir  string // relative to the repository root
	File string // the baseline's file name
	// Workspace: load it through the repository's go.work (the adapters
	// require the root module by version); the root module is loaded with
	// GOWORK=off so that its pattern PATH/... does not take in the
	// adapters' packages.
	Workspace bool
}

var apiModules = []apiModule{
	{Path: rootModule, Dir: "", File: "reconcilekit.export"},
	{Path: rootModule + "/adapters", Dir: "adapters", File: "adapters.export", Workspace: true},
}

// apiChange is one line of apidiff's report.
type apiChange struct {
	Module     string
	Text       string // the line without "- "
	Compatible bool
}

// apidiffRunner runs the pinned apidiff (the command line is given by the
// Makefile, e.g. "go run golang.org/x/exp/cmd/apidiff@VERSION").
type apidiffRunner struct {
	Command []string
	Repo    string
}

func (r apidiffRunner) run(m apiModule, args ...string) (string, error) {
	if len(r.Command) == 0 {
		return "", fmt.Errorf("release: no apidiff command")
	}
	cmd := exec.CommandContext(cmdContext, r.Command[0], append(append([]string{}, r.Command[1:]...), args...)...)
	cmd.Dir = filepath.Join(r.Repo, m.Dir)
	gowork := "off"
	if m.Workspace {
		gowork = filepath.Join(r.Repo, "go.work")
	}
	cmd.Env = append(os.Environ(), "GOWORK="+gowork)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("release: apidiff %s (%s): %v\n%s", strings.Join(args, " "), m.Path, err, filterStderr(stderr.String()))
	}
	return string(out), nil
}

// filterStderr drops apidiff's "Ignoring internal package" notes.
func filterStderr(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "Ignoring internal package") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// baselineDir is the directory of version's API baseline in the
// repository at repo.
func baselineDir(repo, version string) string {
	return filepath.Join(repo, "hack", "release", apiDir, version)
}

// writeBaseline writes the baseline of every checked module of r's tree,
// as it is in r.Repo, into dir (make release passes a new directory of a
// temporary worktree of HEAD).
func (r apidiffRunner) writeBaseline(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	for _, m := range apiModules {
		if _, err := r.run(m, "-m", "-w", filepath.Join(dir, m.File), m.Path); err != nil {
			return err
		}
	}
	return nil
}

// diff compares the API of r's tree with its baseline of version.
func (r apidiffRunner) diff(version string) ([]apiChange, error) {
	var all []apiChange
	for _, m := range apiModules {
		base := filepath.Join(baselineDir(r.Repo, version), m.File)
		if _, err := os.Stat(base); err != nil {
			return nil, fmt.Errorf("release: no API baseline %s (make release writes it)", base)
		}
		out, err := r.run(m, "-m", base, m.Path)
		if err != nil {
			return nil, err
		}
		all = append(all, parseAPIDiff(m.Path, out)...)
	}
	return all, nil
}

// parseAPIDiff reads apidiff's text report: "Incompatible changes:" and
// "Compatible changes:" headers, each followed by "- CHANGE" lines.
// Changes in packages under hack/ (repository tools) are left out.
func parseAPIDiff(module, report string) []apiChange {
	var out []apiChange
	compatible := false
	sc := bufio.NewScanner(strings.NewReader(report))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " ")
		switch {
		case line == "Incompatible changes:":
			compatible = false
		case line == "Compatible changes:":
			compatible = true
		case strings.HasPrefix(line, "- "):
			text := line[2:]
			if strings.HasPrefix(text, "./hack/") || strings.HasPrefix(text, "package "+rootModule+"/hack/") {
				continue
			}
			out = append(out, apiChange{Module: module, Text: text, Compatible: compatible})
		}
	}
	return out
}

// changeName is the name CHANGELOG must use for an incompatible change:
// the package's name (its path's last element) and the object, as Go code
// spells it, e.g. "reconcile.Config.Control" for "./reconcile.Config.Control:
// removed" and "reconcile.Controller.Expectations" for
// "./reconcile.(*Controller).Expectations: removed". A removed package is
// named by its path below the repository, e.g. "adapters/metrics".
func changeName(c apiChange) string {
	subject, _, _ := strings.Cut(c.Text, ": ")
	if p, ok := strings.CutPrefix(subject, "package "); ok {
		return strings.TrimPrefix(strings.TrimPrefix(p, rootModule), "/")
	}
	subject = strings.TrimPrefix(subject, "./")
	pkg, obj := "", subject
	if i := strings.LastIndex(subject, "/"); i >= 0 {
		subject = subject[i+1:]
	}
	if i := strings.Index(subject, "."); i >= 0 {
		pkg, obj = subject[:i], subject[i+1:]
	} else {
		obj = subject
	}
	if pkg == "" {
		pkg = c.Module[strings.LastIndex(c.Module, "/")+1:]
	}
	obj = strings.NewReplacer("(*", "", "(", "", ")", "").Replace(obj)
	return pkg + "." + obj
}

// named reports whether section names name: name occurs in it as a whole
// (not followed by a letter, digit, '_' or a '.' that continues the name,
// not preceded by a letter, digit, '_' or '.'), so that "reconcile.Request"
// does not count as naming "reconcile.Requests" nor "reconcile.Request.Key".
// A package path ("adapters/metrics") may follow a '/'.
func named(section, name string) bool {
	for i := 0; i < len(section); {
		k := strings.Index(section[i:], name)
		if k < 0 {
			return false
		}
		start, end := i+k, i+k+len(name)
		okStart := start == 0 || !isIdentByte(section[start-1]) && section[start-1] != '.' &&
			(section[start-1] != '/' || strings.Contains(name, "/"))
		okEnd := end == len(section) || !isIdentByte(section[end]) &&
			!(section[end] == '.' && end+1 < len(section) && isIdentByte(section[end+1]))
		if okStart && okEnd {
			return true
		}
		i = start + 1
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// unexplained returns the incompatible changes whose changeName the
// CHANGELOG section does not name.
func unexplained(changes []apiChange, section string) []string {
	var out []string
	for _, c := range changes {
		if c.Compatible {
			continue
		}
		if n := changeName(c); !named(section, n) {
			out = append(out, fmt.Sprintf("%s (%s: %s)", n, c.Module, c.Text))
		}
	}
	return out
}

// baselines lists the versions under the api directory, oldest first.
func baselines(repo string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(repo, "hack", "release", apiDir))
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	var vs []string
	for _, e := range entries {
		if e.IsDir() && semver.IsValid(e.Name()) {
			vs = append(vs, e.Name())
		}
	}
	sort.Slice(vs, func(i, j int) bool { return semver.Compare(vs[i], vs[j]) < 0 })
	return vs, nil
}

// previousBaseline is the newest baseline older than version ("" if none;
// the newest of all for version "").
func previousBaseline(vs []string, version string) string {
	prev := ""
	for _, v := range vs {
		if version == "" || semver.Compare(v, version) < 0 {
			prev = v
		}
	}
	return prev
}

// comparisonBase is the baseline that the API under CHANGELOG's top
// section is compared with: for "## vX.Y.Z (to be tagged)" the newest
// baseline older than vX.Y.Z, which must have none of its own yet nor a
// newer one; for any other top section the newest baseline. A version
// stored but never tagged ("(never tagged)") is a baseline like any other,
// the comparison base of the next. "" when there is none.
func comparisonBase(top heading, vs []string) (string, error) {
	if top.Kind != toBeTagged {
		return previousBaseline(vs, ""), nil
	}
	for _, v := range vs {
		if semver.Compare(v, top.Version) >= 0 {
			return "", fmt.Errorf("release: CHANGELOG.md's top section is \"## %s\" but the API baseline hack/release/api/%s exists: "+
				"a version is stored by make release, which dates its section", top, v)
		}
	}
	return previousBaseline(vs, top.Version), nil
}

// namesChanges reports whether the section's body may name API changes:
// only the sections still open to changes may ("Unreleased", "(to be
// tagged)"); a released or never-tagged section on top names none, so
// that a change after a release needs a new section.
func (h heading) namesChanges() bool {
	return h.Kind == unreleased || h.Kind == toBeTagged
}

// checkNamed compares the API of r's tree with the baseline base: every
// incompatible change must be named (see changeName) in top's body. It
// returns the summary line to print.
func checkNamed(r apidiffRunner, base string, top section) (string, error) {
	changes, err := r.diff(base)
	if err != nil {
		return "", err
	}
	body := top.Body
	if !top.namesChanges() {
		body = ""
	}
	incompatible := 0
	for _, c := range changes {
		if !c.Compatible {
			incompatible++
		}
	}
	if bad := unexplained(changes, body); len(bad) > 0 {
		hint := "name each (as written before the parenthesis) in that section, or undo the change"
		if !top.namesChanges() {
			hint = "a released section names no later change: add a \"## Unreleased\" section above it naming each (as written before the parenthesis), or undo the change"
		}
		return "", fmt.Errorf("release: api-check: %d incompatible changes since the %s API that CHANGELOG.md's \"## %s\" section does not name:\n  %s\n%s",
			len(bad), base, top.heading, strings.Join(bad, "\n  "), hint)
	}
	return fmt.Sprintf("api-check: %d changes since the %s API (hack/release/api/%s), %d incompatible, each named in CHANGELOG.md's \"## %s\"",
		len(changes), base, base, incompatible, top.heading), nil
}

// apiCheck is make api-check: the API of r's tree against the baseline
// that CHANGELOG.md's top section is compared with (comparisonBase);
// every incompatible change must be named in that section. With no
// baseline to compare with there is nothing to check.
func apiCheck(r apidiffRunner) error {
	text, err := os.ReadFile(filepath.Join(r.Repo, "CHANGELOG.md"))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	top, err := topSection(string(text))
	if err != nil {
		return err
	}
	vs, err := baselines(r.Repo)
	if err != nil {
		return err
	}
	base, err := comparisonBase(top.heading, vs)
	if err != nil {
		return err
	}
	if base == "" {
		fmt.Printf("api-check: no API baseline to compare \"## %s\" with\n", top.heading)
		return nil
	}
	msg, err := checkNamed(r, base, top)
	if err != nil {
		return err
	}
	fmt.Println(msg)
	return nil
}
