package controller_test

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// permission is one verb on one resource of one API group: the unit both
// a marker and a ClusterRole rule expand to.
type permission struct{ group, resource, verb string }

// markerPermissions reads the +kubebuilder:rbac markers of a Go file and
// expands them. It knows the groups, resources and verbs arguments, which
// are all the PodSet controller uses; any other argument fails the test, so
// that a new kind of marker is not silently ignored.
func markerPermissions(t *testing.T, path string) []permission {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []permission
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		args, ok := strings.CutPrefix(line, "// +kubebuilder:rbac:")
		if !ok {
			continue
		}
		values := map[string][]string{}
		for arg := range strings.SplitSeq(args, ",") {
			key, value, ok := strings.Cut(arg, "=")
			require.True(t, ok, "marker %q: argument %q has no =", line, arg)
			require.Contains(t, []string{"groups", "resources", "verbs"}, key, "marker %q: argument %q is not known to this test", line, key)
			for v := range strings.SplitSeq(value, ";") {
				values[key] = append(values[key], strings.Trim(v, `"`))
			}
		}
		for _, g := range values["groups"] {
			for _, r := range values["resources"] {
				for _, v := range values["verbs"] {
					out = append(out, permission{g, r, v})
				}
			}
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// rolePermissions reads a ClusterRole and expands its rules.
func rolePermissions(t *testing.T, path string) (string, []permission) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var role rbacv1.ClusterRole
	require.NoError(t, yaml.UnmarshalStrict(raw, &role))
	require.Equal(t, "ClusterRole", role.Kind)
	var out []permission
	for i, r := range role.Rules {
		require.Empty(t, r.ResourceNames, "rule %d", i)
		require.Empty(t, r.NonResourceURLs, "rule %d", i)
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, permission{g, res, v})
				}
			}
		}
	}
	return role.Name, out
}

func sorted(ps []permission) []permission {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b permission) int {
		return strings.Compare(a.group+"/"+a.resource+"/"+a.verb, b.group+"/"+b.resource+"/"+b.verb)
	})
	return slices.Compact(ps)
}

// TestRBACMarkersMatchRole: config/rbac/role.yaml grants exactly what the
// controller's +kubebuilder:rbac markers say (make rbac regenerates the
// file with controller-gen). The e2e tests (test/controlplane/e2e) show
// that the role is enough, and that without one of its verbs the
// controller is refused.
func TestRBACMarkersMatchRole(t *testing.T) {
	markers := markerPermissions(t, "controller.go")
	require.NotEmpty(t, markers, "no +kubebuilder:rbac marker in controller.go")
	name, rules := rolePermissions(t, filepath.Join("..", "config", "rbac", "role.yaml"))
	assert.Equal(t, "reconcilekit-podset", name)
	assert.Equal(t, sorted(markers), sorted(rules), "config/rbac/role.yaml differs from the markers: run make rbac")
	assert.Len(t, sorted(markers), len(markers), "a marker repeats a permission")
}
