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
	cmd := exec.Command(r.Command[0], append(append([]string{}, r.Command[1:]...), args...)...)
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

// writeBaseline writes the baseline of every checked module for version.
func (r apidiffRunner) writeBaseline(version string) error {
	dir := filepath.Join(r.Repo, "hack", "release", apiDir, version)
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

// diff compares the working tree's API with the baseline of version.
func (r apidiffRunner) diff(version string) ([]apiChange, error) {
	var all []apiChange
	for _, m := range apiModules {
		base := filepath.Join(r.Repo, "hack", "release", apiDir, version, m.File)
		if _, err := os.Stat(base); err != nil {
			return nil, fmt.Errorf("release: no API baseline %s (make api-baseline writes it)", base)
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

// changelogSection returns the body of CHANGELOG's "## NAME" section (up
// to the next "## " heading) and whether it exists.
func changelogSection(changelog, name string) (string, bool) {
	var body []string
	in, found := false, false
	for _, l := range strings.Split(changelog, "\n") {
		if strings.HasPrefix(l, "## ") {
			if in {
				break
			}
			if strings.TrimSpace(strings.TrimPrefix(l, "## ")) == name {
				in, found = true, true
			}
			continue
		}
		if in {
			body = append(body, l)
		}
	}
	return strings.Join(body, "\n"), found
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
