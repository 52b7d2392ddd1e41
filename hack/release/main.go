// Command release is the repository's release tooling, run by the
// Makefile (`go run -C hack/release .`):
//
//	release proxy -version V -out DIR      a GOPROXY=file:// tree of the published modules at V, from the working tree
//	release api-check -apidiff CMD         compare the API with the baseline CHANGELOG's top section is compared with; its incompatible changes must be named there
//	release release -apidiff CMD -version V   make release: check HEAD for V, write its API baseline from HEAD's own tree, date CHANGELOG, commit, print the tag and push commands
//
// CMD is the apidiff command line, e.g. "go run golang.org/x/exp/cmd/apidiff@VERSION".
// It is a module of its own (hack/release/go.mod), so that golang.org/x/mod
// stays out of the library's requirements; its test (release_test.go)
// installs README's modules from a file proxy and runs its quick starts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// cmdContext is the context of every git and apidiff command the tool
// runs. main cancels it on SIGINT or SIGTERM, so that make release stops
// before its fast-forward and still removes its worktree.
var cmdContext = context.Background()

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: release proxy|api-check|release [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	version := fs.String("version", "", "the version, e.g. v0.2.0")
	out := fs.String("out", "", "proxy: the directory to write")
	apidiff := fs.String("apidiff", "", "the apidiff command line")
	_ = fs.Parse(os.Args[2:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmdContext = ctx
	repo, err := repoRoot()
	if err == nil {
		r := apidiffRunner{Command: strings.Fields(*apidiff), Repo: repo}
		switch os.Args[1] {
		case "proxy":
			err = buildProxy(repo, *version, published, *out)
		case "api-check":
			err = apiCheck(r)
		case "release":
			err = releaseCommit(repo, r.Command, *version, os.Stdout)
		default:
			err = fmt.Errorf("release: unknown command %q", os.Args[1])
		}
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// needVersion checks that v is a canonical semantic version (v0.2.0, not
// v0.2 or 0.2.0).
func needVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("release: -version %q is not a version such as v0.2.0", v)
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

// git runs git with args in repo and returns its output, trimmed.
func git(repo string, args ...string) (string, error) {
	return gitContext(cmdContext, repo, args...)
}

// gitContext is git with the context ctx.
func gitContext(ctx context.Context, repo string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = repo
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		return "", fmt.Errorf("release: git %s: %v%s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out)), nil
}
