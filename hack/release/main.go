// Command release is the repository's release tooling, run by the
// Makefile (`go run -C hack/release .`):
//
//	release proxy -version V -out DIR           a GOPROXY=file:// tree of the published modules at V, from the working tree
//	release api-baseline -apidiff CMD -version V   write hack/release/api/V, the API baseline of the library's modules
//	release api-check -apidiff CMD                compare the API with the newest baseline; incompatible changes must be named under CHANGELOG's "## Unreleased"
//	release check -apidiff CMD -version V         what `make release` checks, then print the tags and the commands that push them
//
// CMD is the apidiff command line, e.g. "go run golang.org/x/exp/cmd/apidiff@VERSION".
// It is a module of its own (hack/release/go.mod), so that golang.org/x/mod
// stays out of the library's requirements; its test (release_test.go)
// installs README's modules from a file proxy and runs its quick starts.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: release proxy|api-baseline|api-check|check [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	version := fs.String("version", "", "the version, e.g. v0.1.0")
	out := fs.String("out", "", "proxy: the directory to write")
	apidiff := fs.String("apidiff", "", "the apidiff command line")
	_ = fs.Parse(os.Args[2:])
	repo, err := repoRoot()
	if err == nil {
		r := apidiffRunner{Command: strings.Fields(*apidiff), Repo: repo}
		switch os.Args[1] {
		case "proxy":
			err = buildProxy(repo, *version, published, *out)
		case "api-baseline":
			err = needVersion(*version)
			if err == nil {
				err = r.writeBaseline(*version)
			}
		case "api-check":
			err = apiCheck(r, "Unreleased", "")
		case "check":
			err = releaseCheck(r, *version)
		default:
			err = fmt.Errorf("release: unknown command %q", os.Args[1])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func needVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("release: -version %q is not a version such as v0.1.0", v)
	}
	return nil
}

// repoRoot is the top of the git working tree around the current directory.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("release: git rev-parse --show-toplevel: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// apiCheck compares the working tree's API with the newest baseline older
// than version (the newest of all for version ""): every incompatible
// change must be named in CHANGELOG's section (see changeName). With no
// baseline older than version there is nothing to compare.
func apiCheck(r apidiffRunner, section, version string) error {
	vs, err := baselines(r.Repo)
	if err != nil {
		return err
	}
	prev := previousBaseline(vs, version)
	if prev == "" {
		fmt.Printf("api-check: no API baseline before %s\n", version)
		return nil
	}
	changes, err := r.diff(prev)
	if err != nil {
		return err
	}
	text, err := os.ReadFile(filepath.Join(r.Repo, "CHANGELOG.md"))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	body, _ := changelogSection(string(text), section)
	incompatible := 0
	for _, c := range changes {
		if !c.Compatible {
			incompatible++
		}
	}
	if bad := unexplained(changes, body); len(bad) > 0 {
		return fmt.Errorf("api-check: %d incompatible changes since the %s API that CHANGELOG.md's \"## %s\" section does not name:\n  %s\n"+
			"name each (as written before the parenthesis) in that section, or undo the change",
			len(bad), prev, section, strings.Join(bad, "\n  "))
	}
	fmt.Printf("api-check: %d changes since the %s API (hack/release/api/%s), %d incompatible, each named in CHANGELOG.md's \"## %s\"\n",
		len(changes), prev, prev, incompatible, section)
	return nil
}

// releaseCheck is `make release VERSION=version`: a clean working tree;
// CHANGELOG.md has a non-empty "## version" section; the tags do not exist
// yet; the published go.mod files have no replace directive and require
// the repository's modules at version or at a version already tagged; the
// API baseline of version exists and is the working tree's API exactly;
// incompatible changes since the previous baseline are named in the
// version's CHANGELOG section. Then it prints the tags and the commands.
func releaseCheck(r apidiffRunner, version string) error {
	if err := needVersion(version); err != nil {
		return err
	}
	status, err := git(r.Repo, "status", "--porcelain")
	if err != nil {
		return err
	}
	if status != "" {
		return fmt.Errorf("release: the working tree is not clean (git status):\n%s", status)
	}
	text, err := os.ReadFile(filepath.Join(r.Repo, "CHANGELOG.md"))
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if body, ok := changelogSection(string(text), version); !ok || strings.TrimSpace(body) == "" {
		return fmt.Errorf("release: CHANGELOG.md has no \"## %s\" section with entries", version)
	}
	for _, m := range published {
		if _, err := git(r.Repo, "rev-parse", "-q", "--verify", "refs/tags/"+m.tag(version)); err == nil {
			return fmt.Errorf("release: tag %s exists already", m.tag(version))
		}
		if err := checkGoMod(r.Repo, m, version); err != nil {
			return err
		}
	}
	changes, err := r.diff(version)
	if err != nil {
		return err
	}
	if len(changes) > 0 {
		var lines []string
		for _, c := range changes {
			lines = append(lines, c.Module+": "+c.Text)
		}
		return fmt.Errorf("release: the API differs from its baseline hack/release/api/%s (run make api-baseline API_VERSION=%s and commit):\n  %s",
			version, version, strings.Join(lines, "\n  "))
	}
	if err := apiCheck(r, version, version); err != nil {
		return err
	}
	head, err := git(r.Repo, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	fmt.Printf("release %s: checks passed at %s. Tags to push:\n", version, head)
	var tags []string
	for _, m := range published {
		tags = append(tags, m.tag(version))
		fmt.Printf("  %-20s %s\n", m.tag(version), m.Path)
	}
	fmt.Println("Commands (not run):")
	for _, t := range tags {
		fmt.Printf("  git tag -a %s -m %q %s\n", t, "reconcilekit "+version, head)
	}
	fmt.Printf("  git push origin %s\n", strings.Join(tags, " "))
	return nil
}

// checkGoMod checks m's go.mod for a release at version: no replace
// directive, and each of the repository's modules it requires at version
// or at a version whose tag exists.
func checkGoMod(repo string, m publishedModule, version string) error {
	name := filepath.Join(repo, m.Dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	f, err := modfile.ParseLax(name, data, nil)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	if len(f.Replace) > 0 {
		return fmt.Errorf("release: %s has replace directives: a published go.mod must not (use go.work)", name)
	}
	for _, req := range f.Require {
		for _, p := range published {
			if req.Mod.Path != p.Path || req.Mod.Version == version {
				continue
			}
			if _, err := git(repo, "rev-parse", "-q", "--verify", "refs/tags/"+p.tag(req.Mod.Version)); err != nil {
				return fmt.Errorf("release: %s requires %s %s, which is neither %s nor tagged", name, p.Path, req.Mod.Version, version)
			}
		}
	}
	return nil
}

func git(repo string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("release: git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
