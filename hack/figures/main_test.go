package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository's figures agree with the table.
func TestRepositoryFiguresAgree(t *testing.T) {
	problems, err := run(filepath.Join("..", ".."), false)
	require.NoError(t, err)
	assert.Empty(t, problems, "run `make figures` after `make bench-upstream`")
}

func TestCheckAndRewrite(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "docs"), 0o755))
	table := "# header\n" +
		"case (medians)   reconcilekit  upstream  ratio  allocs ours  allocs up\n" +
		"ForDeletion/n=1000/k=1    34.30 µs    1.87 ms   54.66x    9    9343\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, TablePath), []byte(table), 0o644))
	doc := "fast: <!--fig ForDeletion/n=1000/k=1 ratio-->50x<!--/fig--> and <!--fig ForDeletion/n=1000/k=1 ours-->34.30 µs<!--/fig-->\n" +
		"<!--table bench-upstream-->\n```\nold\n```\n<!--/table-->\n" +
		"<!--fig Nope/n=1 ratio-->1x<!--/fig--> <!--fig ForDeletion/n=1000/k=1 speed-->1<!--/fig-->\n"
	path := filepath.Join(root, "README.md")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))

	problems, err := run(root, false)
	require.NoError(t, err)
	assert.Len(t, problems, 4, "a stale ratio, a stale table, an unknown case, an unknown field: %q", problems)

	_, err = run(root, true)
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(got), "<!--fig ForDeletion/n=1000/k=1 ratio-->54.66x<!--/fig-->")
	assert.Contains(t, string(got), "```\n"+table+"```")

	problems, err = run(root, false)
	require.NoError(t, err)
	assert.Len(t, problems, 2, "only the unknown references remain")
}
