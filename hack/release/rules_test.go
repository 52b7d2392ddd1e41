package main

import (
	"strings"
	"testing"
)

func TestParseReadme(t *testing.T) {
	text := strings.Join([]string{
		"# x", "",
		"<!-- install -->", "```sh",
		"go get github.com/reconcilekit/reconcilekit@v0.1.0   # the library",
		"# a comment", "",
		"go mod tidy", "```",
		"<!-- quickstart: client-go main.go -->", "```go", "package main", "", "func main() {}", "```",
		"<!--quickstart:client-go main_test.go-->", "```go", "package main", "```",
		"```go", "package unmarked", "```",
	}, "\n")
	b, err := parseReadme(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Install, "|"); got != "go get github.com/reconcilekit/reconcilekit@v0.1.0|go mod tidy" {
		t.Errorf("install = %q", got)
	}
	if len(b.Quickstarts) != 2 || b.Quickstarts[0] != (quickstartFile{"client-go", "main.go", "package main\n\nfunc main() {}\n"}) ||
		b.Quickstarts[1].File != "main_test.go" {
		t.Errorf("quickstarts = %+v", b.Quickstarts)
	}
	if v := installVersions(b.Install); v[rootModule] != "v0.1.0" || len(v) != 1 {
		t.Errorf("installVersions = %v", v)
	}
	for name, bad := range map[string]string{
		"no fence":         "<!-- install -->\ntext\n",
		"wrong language":   "<!-- quickstart: a a.go -->\n```sh\n```\n",
		"unclosed":         "<!-- install -->\n```sh\ngo get x\n",
		"malformed":        "<!-- quickstart: A a.go -->\n```go\n```\n",
		"not a go file":    "<!-- quickstart: a a.txt -->\n```go\n```\n",
		"two installs":     "<!-- install -->\n```sh\n```\n<!-- install -->\n```sh\n```\n",
		"same file twice":  "<!-- quickstart: a a.go -->\n```go\n```\n<!-- quickstart: a a.go -->\n```go\n```\n",
		"marker no fence2": "<!-- quickstart: a a.go -->\n\n```go\n```\n",
	} {
		if _, err := parseReadme(bad); err == nil {
			t.Errorf("%s: parseReadme accepted %q", name, bad)
		}
	}
}

func TestInstallCommand(t *testing.T) {
	if args, err := installCommand("go get a/b@v0.1.0"); err != nil || strings.Join(args, " ") != "go get a/b@v0.1.0" {
		t.Errorf("installCommand = %v, %v", args, err)
	}
	for _, bad := range []string{"go get x && rm -rf y", "curl x | sh", "go", "GOFLAGS=x go get y", "go get $X"} {
		if _, err := installCommand(bad); err == nil {
			t.Errorf("installCommand accepted %q", bad)
		}
	}
}

func TestChangeName(t *testing.T) {
	for _, c := range []struct{ module, text, want string }{
		{rootModule, "./slowstart.BatchError: removed", "slowstart.BatchError"},
		{rootModule, "./reconcile.Config.Control: removed", "reconcile.Config.Control"},
		{rootModule, "./reconcile.(*Controller).Expectations: removed", "reconcile.Controller.Expectations"},
		{rootModule + "/adapters", "./clientgo/fakecluster.New: changed from func() to func(int)", "fakecluster.New"},
		{rootModule + "/adapters", "package " + rootModule + "/adapters/metrics: removed", "adapters/metrics"},
	} {
		if got := changeName(apiChange{Module: c.module, Text: c.text}); got != c.want {
			t.Errorf("changeName(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestNamed(t *testing.T) {
	section := "- `reconcile.Request` is now `reconcile.SyncRequest`.\n- github.com/reconcilekit/reconcilekit/adapters/metrics moved; reconcile.Config.Gate removed.\n"
	for name, want := range map[string]bool{
		"reconcile.Request":        true,
		"reconcile.SyncRequest":    true,
		"reconcile.Config.Gate":    true,
		"reconcile.Config":         false, // only as the prefix of a longer name
		"reconcile.Req":            false,
		"Request":                  false, // preceded by '.'
		"adapters/metrics":         true,
		"reconcile.Controller":     false,
		"econcile.Request":         false,
		"reconcile.Config.Gate.X":  false,
		"reconcile.SyncRequest.Ke": false,
	} {
		if got := named(section, name); got != want {
			t.Errorf("named(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestChangelogSectionAndUnexplained(t *testing.T) {
	changelog := "# Changelog\n\n## Unreleased\n\n### x\n- `slowstart.BatchError` renamed.\n\n## v0.1.0\n- `reconcile.Request` renamed\n"
	body, ok := changelogSection(changelog, "Unreleased")
	if !ok || strings.Contains(body, "reconcile.Request") || !strings.Contains(body, "slowstart.BatchError") {
		t.Fatalf("section = %q, %v", body, ok)
	}
	if _, ok := changelogSection(changelog, "v0.2.0"); ok {
		t.Error("found a missing section")
	}
	changes := parseAPIDiff(rootModule, "Incompatible changes:\n- ./slowstart.BatchError: removed\n- ./reconcile.Request: removed\n- ./hack/figures.X: removed\nCompatible changes:\n- ./slowstart.BatchErr: added\n")
	if len(changes) != 3 || !changes[2].Compatible {
		t.Fatalf("parseAPIDiff = %+v", changes)
	}
	got := unexplained(changes, body)
	if len(got) != 1 || !strings.HasPrefix(got[0], "reconcile.Request ") {
		t.Errorf("unexplained = %q", got)
	}
}

func TestBaselines(t *testing.T) {
	vs := []string{"v0.1.0", "v0.2.0", "v0.10.0"}
	for v, want := range map[string]string{"": "v0.10.0", "v0.1.0": "", "v0.2.0": "v0.1.0", "v0.3.0": "v0.2.0", "v1.0.0": "v0.10.0"} {
		if got := previousBaseline(vs, v); got != want {
			t.Errorf("previousBaseline(%q) = %q, want %q", v, got, want)
		}
	}
}
