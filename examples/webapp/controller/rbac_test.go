package controller_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// marker is a +kubebuilder:rbac marker with the groups, resources and verbs
// arguments, the only ones the WebApp operator's markers use.
var marker = regexp.MustCompile(`^// \+kubebuilder:rbac:groups=([^,]*),resources=([^,]+),verbs=(\S+)$`)

// config/rbac/role.yaml grants exactly what the +kubebuilder:rbac markers
// of controller.go ask for, one group/resource/verb at a time.
func TestRoleIsTheMarkers(t *testing.T) {
	src, err := os.ReadFile("controller.go")
	require.NoError(t, err)
	var fromMarkers []string
	for line := range strings.SplitSeq(string(src), "\n") {
		if !strings.HasPrefix(line, "// +kubebuilder:rbac:") {
			continue
		}
		m := marker.FindStringSubmatch(line)
		require.NotNil(t, m, "a marker this test does not read: %q", line)
		for _, r := range strings.Split(m[2], ";") {
			for _, v := range strings.Split(m[3], ";") {
				fromMarkers = append(fromMarkers, strings.Trim(m[1], `"`)+" "+r+" "+v)
			}
		}
	}
	data, err := os.ReadFile("../config/rbac/role.yaml")
	require.NoError(t, err)
	var role rbacv1.ClusterRole
	require.NoError(t, yaml.UnmarshalStrict(data, &role))
	var fromRole []string
	for _, rule := range role.Rules {
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				for _, v := range rule.Verbs {
					fromRole = append(fromRole, g+" "+r+" "+v)
				}
			}
		}
	}
	slices.Sort(fromMarkers)
	slices.Sort(fromRole)
	require.NotEmpty(t, fromMarkers)
	assert.Equal(t, fromMarkers, fromRole)
}
