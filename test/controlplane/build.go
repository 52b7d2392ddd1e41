package controlplane

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The pinned versions of the five binaries. Changing one means changing the
// matching build module under build/ (go.mod and go.sum) as well.
const (
	KubernetesVersion = "v1.37.2" // kube-apiserver, kube-controller-manager, kube-scheduler
	EtcdVersion       = "v3.7.3"
	KwokVersion       = "v0.8.0"
)

// Environment variables the launcher reads.
const (
	// EnvCacheDir overrides the directory that holds the built binaries
	// (default: .cache/controlplane at the repository root).
	EnvCacheDir = "RECONCILEKIT_CONTROLPLANE_CACHE"
	// EnvSourceDir overrides where the pinned build modules live
	// (default: test/controlplane/build, found from the working directory).
	EnvSourceDir = "RECONCILEKIT_CONTROLPLANE_SRC"
)

// ErrUnavailable is wrapped by [Build] when the modules of a binary could not
// be loaded (typically: no network and a cold module cache), as opposed to a
// compile failure. Tests skip on it outside CI.
var ErrUnavailable = errors.New("controlplane: binaries unavailable")

// Binaries are the absolute paths of the five programs and of kwok's stage
// configuration, as [Build] returns them.
type Binaries struct {
	Etcd                  string
	KubeAPIServer         string
	KubeControllerManager string
	KubeScheduler         string
	Kwok                  string
	// KwokStages is a YAML file with kwok's "fast" node and pod stages, as
	// shipped in the kwok module (kustomize/stage/node/fast, kustomize/stage/pod/fast).
	KwokStages string
}

// BuildOptions say where [Build] finds its sources and puts its results. The
// zero value uses the defaults described on each field.
type BuildOptions struct {
	// CacheDir holds bin/<component>-<version> and a key file per binary.
	// "": $RECONCILEKIT_CONTROLPLANE_CACHE, else .cache/controlplane at the
	// repository root.
	CacheDir string
	// SourceDir is the directory with the pinned build modules (kubernetes/,
	// etcd/, kwok/). "": $RECONCILEKIT_CONTROLPLANE_SRC, else
	// test/controlplane/build found by walking up from the working directory.
	SourceDir string
	// Log receives one line per binary built or reused, and the go command's
	// output. nil: discarded.
	Log io.Writer
}

// target is one binary and how to build it.
type target struct {
	name    string // file name prefix and component name
	module  string // build module directory under SourceDir
	pkg     string // main package
	version string
	ldflags string
}

func targets() []target {
	kubeLD := "-s -w" +
		" -X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
		" -X k8s.io/component-base/version.gitMajor=1" +
		" -X k8s.io/component-base/version.gitMinor=37" +
		" -X k8s.io/component-base/version.gitTreeState=clean"
	return []target{
		{name: Etcd, module: "etcd", pkg: "go.etcd.io/etcd/server/v3", version: EtcdVersion, ldflags: "-s -w"},
		{name: KubeAPIServer, module: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", version: KubernetesVersion, ldflags: kubeLD},
		{name: KubeControllerManager, module: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", version: KubernetesVersion, ldflags: kubeLD},
		{name: KubeScheduler, module: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-scheduler", version: KubernetesVersion, ldflags: kubeLD},
		{name: Kwok, module: "kwok", pkg: "sigs.k8s.io/kwok/cmd/kwok", version: KwokVersion, ldflags: "-s -w"},
	}
}

// Build makes sure the five binaries and kwok's stages exist in the cache
// directory and returns their paths. A binary is built (go build -trimpath,
// no race detector) only when its file is missing or its key file does not
// match the hash of its build module, package, version and flags, so a second
// call rebuilds nothing. Concurrent calls, also from other processes, are
// serialized by a lock file in the cache directory.
//
// A cold build takes several CPU-minutes; docs/development.md has the measured times.
func Build(ctx context.Context, opts BuildOptions) (Binaries, error) {
	src, err := sourceDir(opts.SourceDir)
	if err != nil {
		return Binaries{}, err
	}
	cache, err := cacheDir(opts.CacheDir, src)
	if err != nil {
		return Binaries{}, err
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	bin := filepath.Join(cache, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("controlplane: build: %w", err)
	}
	unlock, err := lockFile(filepath.Join(bin, ".lock"))
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()

	paths := map[string]string{}
	for _, t := range targets() {
		out := filepath.Join(bin, t.name+"-"+t.version)
		key, err := t.key(src)
		if err != nil {
			return Binaries{}, err
		}
		paths[t.name] = out
		if upToDate(out, key) {
			fmt.Fprintf(logw, "controlplane: %s %s: cached (%s)\n", t.name, t.version, out)
			continue
		}
		start := time.Now()
		fmt.Fprintf(logw, "controlplane: %s %s: building %s\n", t.name, t.version, t.pkg)
		if err := t.build(ctx, src, out, logw); err != nil {
			return Binaries{}, err
		}
		if err := os.WriteFile(out+".key", []byte(key+"\n"), 0o644); err != nil {
			return Binaries{}, fmt.Errorf("controlplane: build: %w", err)
		}
		fmt.Fprintf(logw, "controlplane: %s %s: built in %.1fs\n", t.name, t.version, time.Since(start).Seconds())
	}
	stages, err := kwokStages(ctx, src, bin)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{
		Etcd:                  paths[Etcd],
		KubeAPIServer:         paths[KubeAPIServer],
		KubeControllerManager: paths[KubeControllerManager],
		KubeScheduler:         paths[KubeScheduler],
		Kwok:                  paths[Kwok],
		KwokStages:            stages,
	}, nil
}

// key hashes everything that determines the binary.
func (t target) key(src string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", t.pkg, t.version, t.ldflags, "-trimpath")
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(src, t.module, f))
		if err != nil {
			return "", fmt.Errorf("controlplane: build module %s: %w", t.module, err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func upToDate(out, key string) bool {
	if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	b, err := os.ReadFile(out + ".key")
	return err == nil && strings.TrimSpace(string(b)) == key
}

// build loads the package's modules first, so that a download failure is
// reported as ErrUnavailable and a compile failure is not.
func (t target) build(ctx context.Context, src, out string, logw io.Writer) error {
	dir := filepath.Join(src, t.module)
	if msg, err := goCmd(ctx, dir, "list", "-deps", "-f", "{{.ImportPath}}", t.pkg); err != nil {
		return fmt.Errorf("%w: loading %s@%s: %v\n%s", ErrUnavailable, t.pkg, t.version, err, tail(msg, 20))
	}
	tmp := out + ".tmp"
	msg, err := goCmd(ctx, dir, "build", "-trimpath", "-ldflags", t.ldflags, "-o", tmp, t.pkg)
	logw.Write(msg)
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("controlplane: building %s@%s: %w\n%s", t.pkg, t.version, err, tail(msg, 30))
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("controlplane: build: %w", err)
	}
	return nil
}

// goCmd runs the go command in a build module and returns its combined output.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = dir
	// The build modules stand alone: no workspace, and never the race detector
	// or other flags a surrounding test run may have put into GOFLAGS.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}

func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

// kwokStages writes kwok's fast node and pod stages, taken from the kwok
// module in the module cache, into one multi-document YAML file.
func kwokStages(ctx context.Context, src, bin string) (string, error) {
	out := filepath.Join(bin, "kwok-stages-"+KwokVersion+".yaml")
	if fileExists(out) {
		return out, nil
	}
	msg, err := goCmd(ctx, filepath.Join(src, "kwok"), "mod", "download", "-json", "sigs.k8s.io/kwok")
	if err != nil {
		return "", fmt.Errorf("%w: downloading sigs.k8s.io/kwok@%s: %v\n%s", ErrUnavailable, KwokVersion, err, tail(msg, 20))
	}
	var info struct{ Dir, Version string }
	if err := json.Unmarshal(msg, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("controlplane: go mod download sigs.k8s.io/kwok: unexpected output %q", tail(msg, 5))
	}
	if info.Version != KwokVersion {
		return "", fmt.Errorf("controlplane: build/kwok requires sigs.k8s.io/kwok %s, want %s", info.Version, KwokVersion)
	}
	var docs []string
	for _, d := range []string{"kustomize/stage/node/fast", "kustomize/stage/pod/fast"} {
		files, err := filepath.Glob(filepath.Join(info.Dir, d, "*.yaml"))
		if err != nil {
			return "", fmt.Errorf("controlplane: kwok stages: %w", err)
		}
		sort.Strings(files)
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("controlplane: kwok stages: %w", err)
			}
			docs = append(docs, "# "+strings.TrimPrefix(f, info.Dir+"/")+"\n"+strings.TrimSpace(string(b))+"\n")
		}
	}
	if len(docs) < 2 {
		return "", fmt.Errorf("controlplane: kwok stages: found %d stage files in %s", len(docs), info.Dir)
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		return "", fmt.Errorf("controlplane: kwok stages: %w", err)
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("controlplane: kwok stages: %w", err)
	}
	return out, nil
}

// sourceDir finds the directory with the build modules.
func sourceDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(EnvSourceDir)
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", fmt.Errorf("controlplane: source dir: %w", err)
		}
		if !fileExists(filepath.Join(abs, "kubernetes", "go.mod")) {
			return "", fmt.Errorf("controlplane: source dir %s has no kubernetes/go.mod", abs)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("controlplane: source dir: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "test", "controlplane", "build")
		if fileExists(filepath.Join(cand, "kubernetes", "go.mod")) {
			return cand, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("controlplane: no test/controlplane/build above %s; set %s", wd, EnvSourceDir)
		}
	}
}

// cacheDir resolves the cache directory; the default is .cache/controlplane
// at the repository root, three levels above the build modules.
func cacheDir(dir, src string) (string, error) {
	if dir == "" {
		dir = os.Getenv(EnvCacheDir)
	}
	if dir == "" {
		dir = filepath.Join(src, "..", "..", "..", ".cache", "controlplane")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("controlplane: cache dir: %w", err)
	}
	return abs, nil
}

// lockFile takes an exclusive flock on path, released by the returned func.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("controlplane: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("controlplane: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
