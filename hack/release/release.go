package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// releaseMessage is the message of the commit make release makes.
const releaseMessage = "release %s: API baseline from its own tree, CHANGELOG dated"

// releaseCommit is `make release VERSION=version`: the one step that makes
// a release commit, locally, pushing nothing. It checks a clean working
// tree, then exports HEAD into a temporary worktree (git worktree add
// --detach) and does everything else there, so that no uncommitted file
// can reach the release: CHANGELOG.md's top section is "## version (to be
// tagged)" and has entries, every other heading is well-formed and older;
// none of the tags exists; the published go.mod files have no replace and
// require the repository's modules at version or at a tagged version;
// incompatible API changes since the previous baseline are named in the
// section. It then writes the API baseline hack/release/api/version from
// that tree, dates the heading with HEAD's commit date (git log -1
// --format=%cs), commits both in the worktree and fast-forwards the
// repository's HEAD to that commit. Last it prints the git tag and git
// push commands for the new commit, which it does not run.
//
// The repository itself changes only in that last fast-forward, which git
// refuses if HEAD moved or a local change would be overwritten: a failure
// before it leaves the repository as it was. The worktree is removed in
// every case.
func releaseCommit(repo string, apidiff []string, version string, w io.Writer) (err error) {
	if err := needVersion(version); err != nil {
		return err
	}
	status, err := git(repo, "status", "--porcelain")
	if err != nil {
		return err
	}
	if status != "" {
		return fmt.Errorf("release: the working tree is not clean (git status):\n%s", status)
	}
	head, err := git(repo, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return err
	}
	// The date of the commit being released, not the clock's.
	date, err := git(repo, "log", "-1", "--format=%cs", head)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "reconcilekit-release-")
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if _, err := git(repo, "worktree", "add", "--detach", tree, head); err != nil {
		return err
	}
	defer func() {
		// Removed even when interrupted: cmdContext may be canceled.
		if _, rmErr := gitContext(context.WithoutCancel(cmdContext), repo, "worktree", "remove", "--force", tree); rmErr != nil && err == nil {
			err = rmErr
		}
	}()
	commit, err := prepareRelease(tree, apidiff, version, date, w)
	if err != nil {
		return err
	}
	if err := cmdContext.Err(); err != nil {
		return fmt.Errorf("release: interrupted before the fast-forward: %w", err)
	}
	if now, err := git(repo, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
		return err
	} else if now != head {
		return fmt.Errorf("release: HEAD moved from %s to %s while the release was prepared; run make release again", head, now)
	}
	if _, err := git(repo, "merge", "--ff-only", "-q", commit); err != nil {
		return err
	}
	return printTagCommands(repo, version, commit, w)
}

// prepareRelease runs the release's checks in tree, a worktree of the
// commit being released, then writes version's API baseline there, dates
// the CHANGELOG heading with date and commits both; it returns the commit.
func prepareRelease(tree string, apidiff []string, version, date string, w io.Writer) (string, error) {
	text, err := os.ReadFile(filepath.Join(tree, "CHANGELOG.md"))
	if err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	sections, err := changelogSections(string(text))
	if err != nil {
		return "", err
	}
	want := heading{Kind: toBeTagged, Version: version}
	if len(sections) == 0 || sections[0].Kind != toBeTagged || sections[0].Version != version {
		got := "none"
		if len(sections) > 0 {
			got = fmt.Sprintf("%q", "## "+sections[0].heading.String())
		}
		return "", fmt.Errorf("release: CHANGELOG.md's top section is %s, want %q", got, "## "+want.String())
	}
	top := sections[0]
	if strings.TrimSpace(top.Body) == "" {
		return "", fmt.Errorf("release: CHANGELOG.md's %q section has no entries", "## "+want.String())
	}
	for _, s := range sections[1:] {
		if semver.Compare(s.Version, version) >= 0 {
			return "", fmt.Errorf("release: CHANGELOG.md line %d: %q is not older than %s", s.Line, "## "+s.heading.String(), version)
		}
	}
	for _, m := range published {
		if _, err := git(tree, "rev-parse", "-q", "--verify", "refs/tags/"+m.tag(version)); err == nil {
			return "", fmt.Errorf("release: tag %s exists already", m.tag(version))
		}
		if err := checkGoMod(tree, m, version); err != nil {
			return "", err
		}
	}
	vs, err := baselines(tree)
	if err != nil {
		return "", err
	}
	base, err := comparisonBase(top.heading, vs)
	if err != nil {
		return "", err
	}
	r := apidiffRunner{Command: apidiff, Repo: tree}
	if base == "" {
		fmt.Fprintf(w, "api-check: no API baseline before %s\n", version)
	} else {
		msg, err := checkNamed(r, base, top)
		if err != nil {
			return "", err
		}
		fmt.Fprintln(w, msg)
	}
	if err := r.writeBaseline(baselineDir(tree, version)); err != nil {
		return "", err
	}
	dated, err := dateHeading(string(text), version, date)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tree, "CHANGELOG.md"), []byte(dated), 0o644); err != nil {
		return "", fmt.Errorf("release: %w", err)
	}
	paths := []string{"CHANGELOG.md", filepath.ToSlash(filepath.Join("hack", "release", apiDir, version))}
	if _, err := git(tree, append([]string{"add", "--"}, paths...)...); err != nil {
		return "", err
	}
	if _, err := git(tree, append([]string{"commit", "-q", "-m", fmt.Sprintf(releaseMessage, version), "--"}, paths...)...); err != nil {
		return "", err
	}
	commit, err := git(tree, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", err
	}
	// The commit holds the two changes and nothing else.
	changed, err := git(tree, "diff", "--name-only", commit+"^", commit)
	if err != nil {
		return "", err
	}
	for _, f := range strings.Split(changed, "\n") {
		if !slices.ContainsFunc(paths, func(p string) bool { return f == p || strings.HasPrefix(f, p+"/") }) {
			return "", fmt.Errorf("release: the release commit %s changes %s, not only %v", commit, f, paths)
		}
	}
	return commit, nil
}

// printTagCommands prints the tags of version for commit and the commands
// that create and push them with the branch holding commit; it runs none.
func printTagCommands(repo, version, commit string, w io.Writer) error {
	fmt.Fprintf(w, "release %s: committed %s (%q). Tags to push:\n", version, commit, fmt.Sprintf(releaseMessage, version))
	var tags []string
	for _, m := range published {
		tags = append(tags, m.tag(version))
		fmt.Fprintf(w, "  %-20s %s\n", m.tag(version), m.Path)
	}
	push := "git push --atomic origin "
	if branch, err := git(repo, "symbolic-ref", "-q", "--short", "HEAD"); err == nil && branch != "" {
		push += branch + " "
	} else {
		fmt.Fprintf(w, "(HEAD is detached: push the commit to its branch too)\n")
	}
	fmt.Fprintln(w, "Commands (not run):")
	for _, t := range tags {
		fmt.Fprintf(w, "  git tag -a %s -m %q %s\n", t, "reconcilekit "+version, commit)
	}
	fmt.Fprintf(w, "  %s%s\n", push, strings.Join(tags, " "))
	return nil
}
