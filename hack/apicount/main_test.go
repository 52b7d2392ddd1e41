package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMeasure counts a package written for the test: each kind of name the
// doc comment lists, and each kind it leaves out.
func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	src := `package p

// Exported: C, V, T, F, NewT, (T).M, I (not I.Do), S.
const C, c = 1, 2

var V = 3

type T struct {
	A, b int
	Embedded
}

type Embedded struct{ X int }

type I interface{ Do() }

type S[K any] struct{ Y K }

func F() {}

func NewT() *T { return nil }

func (t *T) M()   {}
func (t *T) m()   {}
func (u unexp) N() {}
func (s *S[K]) Z() {}

type unexp struct{ Q int }
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc Test() {}\n"), 0o644))

	s, err := measure(dir)
	require.NoError(t, err)
	// C, V, T, Embedded, I, S, F, NewT, T.M, S.Z.
	require.Equal(t, 10, s.names)
	// T.A, T.Embedded, Embedded.X, S.Y.
	require.Equal(t, 4, s.fields)
	require.Equal(t, 28, s.lines) // the lines of src
}

// TestMeasureEmpty refuses a directory without Go files instead of
// printing zeros that read as a measurement.
func TestMeasureEmpty(t *testing.T) {
	_, err := measure(t.TempDir())
	require.ErrorContains(t, err, "no Go files")
}
