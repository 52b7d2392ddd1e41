package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteTokenFileGroups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	tokens := map[string]string{"admin": "t1", "rbac-only": "t2", "two-groups": "t3"}
	groups := map[string][]string{"rbac-only": {}, "two-groups": {"a", "b"}}
	require.NoError(t, writeTokenFile(path, tokens, groups))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	assert.ElementsMatch(t, []string{
		`t1,admin,admin,"system:masters"`,
		`t2,rbac-only,rbac-only`,
		`t3,two-groups,two-groups,"a,b"`,
	}, lines)
}

func TestValidateUsers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		users []User
		err   string
	}{
		{"none", nil, ""},
		{"two", []User{{Name: "a"}, {Name: "b", Groups: []string{}}}, ""},
		{"no name", []User{{}}, "Users[0] has no name"},
		{"built-in", []User{{Name: ControllerUser}}, "already defined"},
		{"duplicate", []User{{Name: "a"}, {Name: "a"}}, "already defined"},
		{"comma in name", []User{{Name: "a,b"}}, "comma"},
		{"empty group", []User{{Name: "a", Groups: []string{""}}}, "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := validateUsers(tc.users)
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.True(t, strings.HasPrefix(err.Error(), "controlplane: "))
		})
	}
}
