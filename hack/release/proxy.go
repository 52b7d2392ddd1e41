package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// A published module of the repository: its module path and its directory
// relative to the repository's root ("" for the root module).
type publishedModule struct {
	Path string
	Dir  string
}

// rootModule is the library's module path; the other published modules
// live in subdirectories named by their path's last element.
const rootModule = "github.com/reconcilekit/reconcilekit"

// published lists the modules `make release` tags: the library, the
// adapters and the examples (tagged so that `go run …/examples/…@version`
// works; they are not API and apidiff does not check them).
var published = []publishedModule{
	{Path: rootModule, Dir: ""},
	{Path: rootModule + "/adapters", Dir: "adapters"},
	{Path: rootModule + "/examples", Dir: "examples"},
}

// tag is the git tag of version v of m: v for the root module, DIR/v for
// a module in a subdirectory.
func (m publishedModule) tag(v string) string {
	if m.Dir == "" {
		return v
	}
	return m.Dir + "/" + v
}

// buildProxy writes into out a module proxy tree, in the layout that
// `go mod download` and GOPROXY=file://out read (the GOPROXY protocol:
// MODULE/@v/list, VERSION.info, VERSION.mod, VERSION.zip), holding version
// of each module in mods as it is in the working tree of the repository
// at repo: the files git tracks or would add (git ls-files --cached
// --others --exclude-standard), so that the zip holds what a tag of the
// committed tree would. golang.org/x/mod/zip writes the zips, as the go
// command does when it fetches from a repository: it leaves out nested
// modules and vendor directories and checks names and sizes. A module in
// a subdirectory without a LICENSE gets the repository's, as the go
// command gives it.
func buildProxy(repo, version string, mods []publishedModule, out string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("release: proxy: %q is not a canonical semantic version such as v0.2.0", version)
	}
	files, err := gitFiles(repo)
	if err != nil {
		return err
	}
	stamp, err := commitTime(repo)
	if err != nil {
		return err
	}
	for _, m := range mods {
		mv := module.Version{Path: m.Path, Version: version}
		if err := module.Check(m.Path, version); err != nil {
			return fmt.Errorf("release: proxy: %w", err)
		}
		esc, err := module.EscapePath(m.Path)
		if err != nil {
			return fmt.Errorf("release: proxy: %w", err)
		}
		dir := filepath.Join(out, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("release: proxy: %w", err)
		}
		gomod, err := os.ReadFile(filepath.Join(repo, m.Dir, "go.mod"))
		if err != nil {
			return fmt.Errorf("release: proxy: %w", err)
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{version, stamp})
		if err != nil {
			return fmt.Errorf("release: proxy: %w", err)
		}
		var zip bytes.Buffer
		if err := modzip.Create(&zip, mv, moduleFiles(repo, m.Dir, files)); err != nil {
			return fmt.Errorf("release: proxy: %s: %w", m.Path, err)
		}
		for name, data := range map[string][]byte{
			"list":            []byte(version + "\n"),
			version + ".info": info,
			version + ".mod":  gomod,
			version + ".zip":  zip.Bytes(),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return fmt.Errorf("release: proxy: %w", err)
			}
		}
	}
	return nil
}

// gitFiles lists the files, slash-separated and relative to repo, that git
// tracks in repo's working tree or would add to it (untracked, not
// ignored), without those deleted from the working tree.
func gitFiles(repo string) ([]string, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("release: git ls-files in %s: %v: %s", repo, err, stderr.Bytes())
	}
	var files []string
	seen := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		if _, err := os.Lstat(filepath.Join(repo, filepath.FromSlash(f))); err != nil {
			continue // tracked, deleted in the working tree
		}
		files = append(files, f)
	}
	return files, nil
}

// commitTime is the commit time of repo's HEAD, the .info file's Time.
func commitTime(repo string) (time.Time, error) {
	cmd := exec.Command("git", "log", "-1", "--format=%cI", "HEAD")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("release: git log in %s: %v", repo, err)
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	if err != nil {
		return time.Time{}, fmt.Errorf("release: commit time: %w", err)
	}
	return t.UTC(), nil
}

// moduleFiles is the module zip's candidate files for the module in dir:
// files under dir (nested modules are left out by modzip.Create), plus the
// repository's LICENSE when dir has none.
func moduleFiles(repo, dir string, files []string) []modzip.File {
	var out []modzip.File
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	haveLicense := false
	for _, f := range files {
		rel, ok := strings.CutPrefix(f, prefix)
		if !ok {
			continue
		}
		if rel == "LICENSE" {
			haveLicense = true
		}
		out = append(out, diskFile{rel: rel, abs: filepath.Join(repo, filepath.FromSlash(f))})
	}
	if dir != "" && !haveLicense {
		lic := filepath.Join(repo, "LICENSE")
		if _, err := os.Lstat(lic); err == nil {
			out = append(out, diskFile{rel: "LICENSE", abs: lic})
		}
	}
	return out
}

// diskFile is a modzip.File read from the working tree.
type diskFile struct {
	rel, abs string
}

func (f diskFile) Path() string                 { return path.Clean(f.rel) }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.abs) }
