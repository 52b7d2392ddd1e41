package consumer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modFile is the part of `go mod edit -json` the footprint test reads.
type modFile struct {
	Go      string
	Require []struct {
		Path    string
		Version string
	}
}

// requirements returns dir's go line and its requirements by module path.
func requirements(t *testing.T, dir string) (string, map[string]string) {
	t.Helper()
	out := goCmd(t, dir, "mod", "edit", "-json")
	var mf modFile
	require.NoError(t, json.Unmarshal([]byte(out), &mf))
	reqs := make(map[string]string, len(mf.Require))
	for _, r := range mf.Require {
		reqs[r.Path] = r.Version
	}
	return mf.Go, reqs
}

func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go %s in %s:\n%s", strings.Join(args, " "), dir, out)
	return string(out)
}

// operatorCopy copies testdata/operator, a controller-runtime v0.21.0
// operator at k8s.io v0.33.0 as `go mod tidy` left it then, into a fresh
// directory.
func operatorCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "operator.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "operator", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644))
	}
	return dir
}

// TestAdoptionFootprint adopts the root module (every library package,
// through a replace as a go.work would) in a v0.33-era operator module and
// checks what moves in its go.mod: no k8s.io requirement, and of the
// golang.org/x requirements exactly what golang.org/x/net v0.60.0 moves on
// its own. The root module requires x/net v0.60.0 because govulncheck finds
// GO-2026-6603, GO-2026-6611, GO-2026-6612 and GO-2026-6617 reachable from
// the library's packages at the floor's v0.38.0 (README, "Supported
// versions"); x/net v0.60.0 also sets the go line to 1.26.
func TestAdoptionFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command on module copies")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)

	before := operatorCopy(t)
	goBefore, reqBefore := requirements(t, before)
	require.Equal(t, "v0.38.0", reqBefore["golang.org/x/net"], "testdata/operator is at the v0.33-era x/net")
	require.Equal(t, "v0.21.0", reqBefore["sigs.k8s.io/controller-runtime"])

	// The cost of x/net v0.60.0 alone, without the library.
	xnet := operatorCopy(t)
	goCmd(t, xnet, "get", "golang.org/x/net@v0.60.0")
	goCmd(t, xnet, "mod", "tidy")
	goXnet, reqXnet := requirements(t, xnet)

	adopted := operatorCopy(t)
	require.NoError(t, os.WriteFile(filepath.Join(adopted, "adopt.go"), []byte(adoptSrc), 0o644))
	goCmd(t, adopted, "mod", "edit",
		"-replace", "github.com/reconcilekit/reconcilekit="+root,
		"-require", "github.com/reconcilekit/reconcilekit@v0.0.0-00010101000000-000000000000")
	goCmd(t, adopted, "mod", "tidy")
	goCmd(t, adopted, "build", "./...")
	goAdopted, reqAdopted := requirements(t, adopted)

	assert.Equal(t, goXnet, goAdopted, "the go line moves as far as x/net v0.60.0 moves it, no further")
	assert.Equal(t, "1.26.0", goAdopted)
	assert.NotEqual(t, goBefore, goAdopted)
	for path, v := range reqBefore {
		if strings.HasPrefix(path, "k8s.io/") || strings.HasPrefix(path, "sigs.k8s.io/") {
			assert.Equal(t, v, reqAdopted[path], "%s moved", path)
		}
	}
	for path, v := range reqAdopted {
		if path == "github.com/reconcilekit/reconcilekit" {
			continue
		}
		assert.Equal(t, reqXnet[path], v, "%s: adopting moves it beyond what x/net v0.60.0 does", path)
		if strings.HasPrefix(path, "golang.org/x/") && v != reqBefore[path] {
			t.Logf("%s %s => %s (x/net v0.60.0's requirements)", path, reqBefore[path], v)
		}
	}
	assert.Len(t, reqAdopted, len(reqXnet)+1, "adopting adds the root module and nothing else")
}

const adoptSrc = `package operator

import (
	_ "github.com/reconcilekit/reconcilekit/expectations"
	_ "github.com/reconcilekit/reconcilekit/podrank"
	_ "github.com/reconcilekit/reconcilekit/reconcile"
	_ "github.com/reconcilekit/reconcilekit/slowstart"
	_ "github.com/reconcilekit/reconcilekit/status"
)
`
