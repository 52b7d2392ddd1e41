package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAPIDiff stands in for apidiff in the release tests: "-m -w FILE
// PATH" writes FILE with the directory it ran in and the commit checked
// out there (failing instead when FILE's name is $FAKE_APIDIFF_FAIL);
// "-m BASE PATH" prints $FAKE_APIDIFF_REPORT for the root module.
const fakeAPIDiff = `#!/bin/sh
if [ "$2" = "-w" ]; then
	if [ -n "$FAKE_APIDIFF_FAIL" ] && [ "$(basename "$3")" = "$FAKE_APIDIFF_FAIL" ]; then
		echo "fake apidiff: failing as told" >&2
		exit 1
	fi
	printf 'dir %s\ncommit %s\n' "$(pwd -P)" "$(git rev-parse HEAD)" > "$3"
	exit 0
fi
if [ "$3" = "` + rootModule + `" ]; then printf '%b' "$FAKE_APIDIFF_REPORT"; fi
`

// releaseRepo makes a git repository shaped like ours for make release:
// the three published go.mod files requiring version, the v0.1.0
// baseline, and changelog, committed on branch main on 2026-11-27 (UTC);
// it returns the repository and the apidiff command line.
func releaseRepo(t *testing.T, changelog, version string) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh for the fake apidiff")
	}
	t.Setenv("GIT_AUTHOR_NAME", "release test")
	t.Setenv("GIT_AUTHOR_EMAIL", "release@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "release test")
	t.Setenv("GIT_COMMITTER_EMAIL", "release@example.com")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("FAKE_APIDIFF_REPORT", "")
	t.Setenv("FAKE_APIDIFF_FAIL", "")
	tmp := t.TempDir()
	tool := filepath.Join(tmp, "apidiff.sh")
	repo := filepath.Join(tmp, "repo")
	files := map[string]string{
		"CHANGELOG.md":    changelog,
		"go.mod":          "module " + rootModule + "\n\ngo 1.26.0\n",
		"adapters/go.mod": "module " + rootModule + "/adapters\n\ngo 1.26.0\n\nrequire " + rootModule + " " + version + "\n",
		"examples/go.mod": "module " + rootModule + "/examples\n\ngo 1.26.0\n\nrequire (\n\t" + rootModule + " " + version + "\n\t" + rootModule + "/adapters " + version + "\n)\n",
		"hack/release/api/v0.1.0/reconcilekit.export": "v0.1.0 root\n",
		"hack/release/api/v0.1.0/adapters.export":     "v0.1.0 adapters\n",
	}
	for name, text := range files {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(tool, []byte(fakeAPIDiff), 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit(t, repo, "init", "-q", "-b", "main")
	mustGit(t, repo, "add", ".")
	t.Setenv("GIT_COMMITTER_DATE", "2026-11-27T23:30:00+00:00")
	mustGit(t, repo, "commit", "-q", "-m", "the tree to release")
	t.Setenv("GIT_COMMITTER_DATE", "2026-11-29T09:00:00+00:00") // the release commit's: not the heading's date
	return repo, []string{"sh", tool}
}

func mustGit(t *testing.T, repo string, args ...string) string {
	t.Helper()
	out, err := git(repo, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// worktrees counts the repository's worktrees, its own included.
func worktrees(t *testing.T, repo string) int {
	t.Helper()
	return strings.Count(mustGit(t, repo, "worktree", "list", "--porcelain"), "worktree ")
}

const releaseChangelog = "# Changelog\n\n## v0.2.0 (to be tagged)\n\n- `reconcile.Gone` is removed.\n\n## v0.1.0 (never tagged)\n\nThe first.\n"

func TestReleaseCommit(t *testing.T) {
	repo, apidiff := releaseRepo(t, releaseChangelog, "v0.2.0")
	t.Setenv("FAKE_APIDIFF_REPORT", `Incompatible changes:\n- ./reconcile.Gone: removed\nCompatible changes:\n- ./reconcile.New: added\n`)
	base := mustGit(t, repo, "rev-parse", "HEAD")
	var out bytes.Buffer
	if err := releaseCommit(repo, apidiff, "v0.2.0", &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("output:\n%s", out.String())
	head := mustGit(t, repo, "rev-parse", "HEAD")
	if parent := mustGit(t, repo, "rev-parse", "HEAD^"); parent != base || head == base {
		t.Fatalf("HEAD %s has parent %s, want a new commit on %s", head, parent, base)
	}
	if branch := mustGit(t, repo, "symbolic-ref", "--short", "HEAD"); branch != "main" {
		t.Errorf("HEAD is on %q, want main", branch)
	}
	if msg := mustGit(t, repo, "log", "-1", "--format=%s"); msg != "release v0.2.0: API baseline from its own tree, CHANGELOG dated" {
		t.Errorf("commit message %q", msg)
	}
	changed := mustGit(t, repo, "diff", "--name-only", base, head)
	if want := "CHANGELOG.md\nhack/release/api/v0.2.0/adapters.export\nhack/release/api/v0.2.0/reconcilekit.export"; changed != want {
		t.Errorf("the release commit changes\n%s\nwant\n%s", changed, want)
	}
	if s := mustGit(t, repo, "status", "--porcelain"); s != "" {
		t.Errorf("the working tree is not clean after the release:\n%s", s)
	}
	changelog, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The date of the commit released (2026-11-27), not the release commit's nor the clock's.
	if want := strings.Replace(releaseChangelog, "## v0.2.0 (to be tagged)", "## v0.2.0 (2026-11-27)", 1); string(changelog) != want {
		t.Errorf("CHANGELOG.md after the release:\n%s\nwant\n%s", changelog, want)
	}
	realRepo, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"reconcilekit.export", "adapters.export"} {
		data, err := os.ReadFile(filepath.Join(repo, "hack", "release", "api", "v0.2.0", f))
		if err != nil {
			t.Fatal(err)
		}
		// Written in a worktree of the commit released, not in the repository.
		if !strings.Contains(string(data), "commit "+base+"\n") || strings.Contains(string(data), "dir "+realRepo) {
			t.Errorf("%s was not written from a worktree of %s:\n%s", f, base, data)
		}
	}
	if n := worktrees(t, repo); n != 1 {
		t.Errorf("%d worktrees after the release, want the repository's own only", n)
	}
	for _, want := range []string{
		"api-check: 2 changes since the v0.1.0 API (hack/release/api/v0.1.0), 1 incompatible",
		`git tag -a v0.2.0 -m "reconcilekit v0.2.0" ` + head,
		`git tag -a adapters/v0.2.0 -m "reconcilekit v0.2.0" ` + head,
		`git tag -a examples/v0.2.0 -m "reconcilekit v0.2.0" ` + head,
		"git push --atomic origin main v0.2.0 adapters/v0.2.0 examples/v0.2.0",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q:\n%s", want, out.String())
		}
	}
	if tags := mustGit(t, repo, "tag"); tags != "" {
		t.Errorf("make release made tags: %s", tags)
	}
	// A second run finds the section dated: it refuses, and changes nothing.
	if err := releaseCommit(repo, apidiff, "v0.2.0", &out); err == nil || !strings.Contains(err.Error(), "top section") {
		t.Errorf("a second make release: %v", err)
	}
	if now := mustGit(t, repo, "rev-parse", "HEAD"); now != head {
		t.Errorf("a second make release moved HEAD")
	}
}

// TestReleaseCommitRefuses: every refusal leaves the repository as it
// was: HEAD, the working tree (no baseline written) and its worktrees.
func TestReleaseCommitRefuses(t *testing.T) {
	for _, c := range []struct {
		name      string
		changelog string
		requires  string // the version the go.mod files require
		setup     func(t *testing.T, repo string)
		report    string // what the fake apidiff reports against v0.1.0
		fail      string // the baseline file the fake apidiff fails to write
		version   string
		err       string
	}{
		{name: "bad version", version: "v0.2", err: "not a version"},
		{name: "dirty tree", setup: func(t *testing.T, repo string) {
			if err := os.WriteFile(filepath.Join(repo, "new.go"), []byte("package x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, err: "not clean"},
		{name: "unreleased on top", changelog: "## Unreleased\n- a\n## v0.1.0 (never tagged)\n", err: `want "## v0.2.0 (to be tagged)"`},
		{name: "another version to be tagged", changelog: "## v0.3.0 (to be tagged)\n- a\n", err: "top section"},
		{name: "no entries", changelog: "# C\n## v0.2.0 (to be tagged)\n\n## v0.1.0 (never tagged)\n- a\n", err: "no entries"},
		{name: "bare v0.1.0 heading", changelog: "## v0.2.0 (to be tagged)\n- a\n## v0.1.0\n", err: "line 3"},
		{name: "newer section below", changelog: "## v0.2.0 (to be tagged)\n- a\n## v0.3.0 (2026-01-01)\n", err: "not older than v0.2.0"},
		{name: "tag exists", setup: func(t *testing.T, repo string) {
			mustGit(t, repo, "tag", "adapters/v0.2.0")
		}, err: "tag adapters/v0.2.0 exists"},
		{name: "untagged requirement", requires: "v0.1.0", err: "neither v0.2.0 nor tagged"},
		{name: "baseline exists", setup: func(t *testing.T, repo string) {
			dir := filepath.Join(repo, "hack", "release", "api", "v0.2.0")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "reconcilekit.export"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit(t, repo, "add", ".")
			mustGit(t, repo, "commit", "-q", "-m", "a stored v0.2.0")
		}, err: "hack/release/api/v0.2.0 exists"},
		{name: "unnamed incompatible change", report: `Incompatible changes:\n- ./reconcile.Other: removed\n`, err: "reconcile.Other"},
		{name: "apidiff fails", fail: "adapters.export", err: "failing as told"},
	} {
		t.Run(c.name, func(t *testing.T) {
			changelog, requires, version := c.changelog, c.requires, c.version
			if changelog == "" {
				changelog = releaseChangelog
			}
			if requires == "" {
				requires = "v0.2.0"
			}
			if version == "" {
				version = "v0.2.0"
			}
			repo, apidiff := releaseRepo(t, changelog, requires)
			if c.setup != nil {
				c.setup(t, repo)
			}
			t.Setenv("FAKE_APIDIFF_REPORT", c.report)
			t.Setenv("FAKE_APIDIFF_FAIL", c.fail)
			head := mustGit(t, repo, "rev-parse", "HEAD")
			status := mustGit(t, repo, "status", "--porcelain")
			var out bytes.Buffer
			err := releaseCommit(repo, apidiff, version, &out)
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "release: ") {
				t.Fatalf("releaseCommit = %v, want an error with %q\n%s", err, c.err, out.String())
			}
			if now := mustGit(t, repo, "rev-parse", "HEAD"); now != head {
				t.Errorf("HEAD moved from %s to %s", head, now)
			}
			if now := mustGit(t, repo, "status", "--porcelain"); now != status {
				t.Errorf("git status was\n%s\nand is\n%s", status, now)
			}
			if c.name != "baseline exists" {
				if _, err := os.Stat(filepath.Join(repo, "hack", "release", "api", "v0.2.0")); err == nil {
					t.Errorf("a baseline hack/release/api/v0.2.0 was left behind")
				}
			}
			if n := worktrees(t, repo); n != 1 {
				t.Errorf("%d worktrees left, want the repository's own only", n)
			}
			if strings.Contains(out.String(), "git tag") {
				t.Errorf("printed tag commands:\n%s", out.String())
			}
		})
	}
}
