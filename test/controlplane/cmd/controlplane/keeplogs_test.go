package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -keep-logs copies the *.log files of a control plane's directory, and
// nothing else, into a directory named after the run.
func TestKeepLogs(t *testing.T) {
	dir, to := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-apiserver.log"), []byte("api\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "reconcilekit-0.log"), []byte("sync\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "admin.kubeconfig"), []byte("secret"), 0o600))
	run := filepath.Join(to, logDirName("reconcilekit, defaults, run 1"))
	assert.Equal(t, "reconcilekit__defaults__run_1", filepath.Base(run))
	keepLogs(dir, run)
	got, err := os.ReadFile(filepath.Join(run, "reconcilekit-0.log"))
	require.NoError(t, err)
	assert.Equal(t, "sync\n", string(got))
	assert.FileExists(t, filepath.Join(run, "kube-apiserver.log"))
	assert.NoFileExists(t, filepath.Join(run, "admin.kubeconfig"), "only the logs")
}
