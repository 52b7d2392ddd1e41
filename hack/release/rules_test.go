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

func TestTopSectionAndUnexplained(t *testing.T) {
	changelog := "# Changelog\n\n## Unreleased\n\n### x\n- `slowstart.BatchError` renamed.\n\n## v0.1.0\n- `reconcile.Request` renamed\n"
	top, err := topSection(changelog)
	if err != nil || top.Kind != unreleased || top.Line != 3 || strings.Contains(top.Body, "reconcile.Request") || !strings.Contains(top.Body, "slowstart.BatchError") {
		t.Fatalf("topSection = %+v, %v", top, err)
	}
	changes := parseAPIDiff(rootModule, "Incompatible changes:\n- ./slowstart.BatchError: removed\n- ./reconcile.Request: removed\n- ./hack/figures.X: removed\nCompatible changes:\n- ./slowstart.BatchErr: added\n")
	if len(changes) != 3 || !changes[2].Compatible {
		t.Fatalf("parseAPIDiff = %+v", changes)
	}
	got := unexplained(changes, top.Body)
	if len(got) != 1 || !strings.HasPrefix(got[0], "reconcile.Request ") {
		t.Errorf("unexplained = %q", got)
	}
}

func TestParseHeading(t *testing.T) {
	for _, c := range []struct {
		text string
		want heading // zero Kind and Version with err: an error
		err  bool
	}{
		{text: "Unreleased", want: heading{Kind: unreleased}},
		{text: " Unreleased ", want: heading{Kind: unreleased}},
		{text: "v0.2.0 (to be tagged)", want: heading{Kind: toBeTagged, Version: "v0.2.0"}},
		{text: "v0.1.0 (never tagged)", want: heading{Kind: neverTagged, Version: "v0.1.0"}},
		{text: "v0.2.0 (2026-11-29)", want: heading{Kind: released, Version: "v0.2.0", Date: "2026-11-29"}},
		{text: "v1.10.3 (2028-02-29)", want: heading{Kind: released, Version: "v1.10.3", Date: "2028-02-29"}},
		{text: "v1.0.0-rc.1 (to be tagged)", want: heading{Kind: toBeTagged, Version: "v1.0.0-rc.1"}},
		{text: "v0.1.0", err: true}, // the old bare heading: tagged or not?
		{text: "unreleased", err: true},
		{text: "Unreleased (to be tagged)", err: true},
		{text: "v0.2.0 (to be taged)", err: true},
		{text: "v0.2.0 (To be tagged)", err: true},
		{text: "v0.2.0  (to be tagged)", err: true},
		{text: "v0.2.0 (to be tagged) extra", err: true},
		{text: "v0.2.0 ((to be tagged))", err: true},
		{text: "v0.2 (to be tagged)", err: true},
		{text: "0.2.0 (to be tagged)", err: true},
		{text: "v0.2.0+build (to be tagged)", err: true}, // not canonical
		{text: "v0.2.0 (2026-02-30)", err: true},
		{text: "v0.2.0 (2026-1-05)", err: true},
		{text: "v0.2.0 (29.11.2026)", err: true},
		{text: "v0.2.0 ()", err: true},
		{text: "", err: true},
	} {
		got, err := parseHeading(c.text)
		if c.err {
			if err == nil {
				t.Errorf("parseHeading(%q) = %+v, want an error", c.text, got)
			} else if !strings.HasPrefix(err.Error(), "release: ") {
				t.Errorf("parseHeading(%q): error %q lacks the release: prefix", c.text, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseHeading(%q) = %+v, %v, want %+v", c.text, got, err, c.want)
			continue
		}
		// A parsed heading prints as its canonical text and parses back.
		if back, err := parseHeading(got.String()); err != nil || back != got {
			t.Errorf("parseHeading(%q).String() = %q, which parses to %+v, %v", c.text, got.String(), back, err)
		}
	}
}

func TestTopSection(t *testing.T) {
	for _, c := range []struct {
		name, changelog string
		want            heading
		body            string
		err             bool
	}{
		{name: "unreleased", changelog: "# C\n\n## Unreleased\n- a\n## v0.1.0 (never tagged)\n- b\n", want: heading{Kind: unreleased, Line: 3}, body: "- a"},
		{name: "to be tagged", changelog: "# C\n## v0.2.0 (to be tagged)\n- a\n\n## v0.1.0 (never tagged)\n", want: heading{Kind: toBeTagged, Version: "v0.2.0", Line: 2}, body: "- a\n"},
		{name: "released on top", changelog: "## v0.2.0 (2026-11-29)\n- a", want: heading{Kind: released, Version: "v0.2.0", Date: "2026-11-29", Line: 1}, body: "- a"},
		// Only the top heading is parsed: the old bare heading below does not fail make api-check.
		{name: "bare heading below", changelog: "## Unreleased\n- a\n## v0.1.0\n- b\n", want: heading{Kind: unreleased, Line: 1}, body: "- a"},
		{name: "empty section", changelog: "## Unreleased\n## v0.1.0 (never tagged)\n", want: heading{Kind: unreleased, Line: 1}, body: ""},
		{name: "no section", changelog: "# C\n\ntext\n", err: true},
		{name: "bad top", changelog: "## v0.2.0\n- a\n", err: true},
		{name: "level 3 only", changelog: "### Unreleased\n", err: true},
	} {
		got, err := topSection(c.changelog)
		if c.err {
			if err == nil {
				t.Errorf("%s: topSection = %+v, want an error", c.name, got)
			}
			continue
		}
		if err != nil || got.heading != c.want || got.Body != c.body {
			t.Errorf("%s: topSection = %+v, %v, want %+v with body %q", c.name, got, err, c.want, c.body)
		}
	}
}

func TestChangelogSections(t *testing.T) {
	for _, c := range []struct {
		name, changelog string
		want            []string // the headings as String gives them
		err             string   // a part of the error, "" for none
	}{
		{name: "owner's v0.2.0", changelog: "# C\n## v0.2.0 (to be tagged)\n- a\n## v0.1.0 (never tagged)\n- b\n",
			want: []string{"v0.2.0 (to be tagged)", "v0.1.0 (never tagged)"}},
		{name: "after releases", changelog: "## Unreleased\n## v0.3.0 (2027-01-02)\n## v0.2.0 (2026-11-29)\n## v0.1.0 (never tagged)\n",
			want: []string{"Unreleased", "v0.3.0 (2027-01-02)", "v0.2.0 (2026-11-29)", "v0.1.0 (never tagged)"}},
		{name: "no sections", changelog: "# C\n", want: nil},
		{name: "bare version below", changelog: "## v0.2.0 (to be tagged)\n- a\n## v0.1.0\n", err: "line 3"},
		{name: "unreleased below", changelog: "## v0.2.0 (to be tagged)\n## Unreleased\n", err: "only be the top"},
		{name: "to be tagged below", changelog: "## Unreleased\n## v0.2.0 (to be tagged)\n", err: "only be the top"},
		{name: "a version twice", changelog: "## v0.2.0 (to be tagged)\n## v0.2.0 (2026-11-29)\n", err: "two sections for v0.2.0"},
	} {
		got, err := changelogSections(c.changelog)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "release: ") {
				t.Errorf("%s: changelogSections = %+v, %v, want an error with %q", c.name, got, err, c.err)
			}
			continue
		}
		var names []string
		for _, s := range got {
			names = append(names, s.heading.String())
		}
		if err != nil || strings.Join(names, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: changelogSections = %q, %v, want %q", c.name, names, err, c.want)
		}
	}
}

func TestDateHeading(t *testing.T) {
	const changelog = "# C\n\n## v0.2.0 (to be tagged)\n- v0.2.0 (to be tagged) in a line\n## v0.1.0 (never tagged)\n"
	got, err := dateHeading(changelog, "v0.2.0", "2026-11-29")
	if want := strings.Replace(changelog, "## v0.2.0 (to be tagged)", "## v0.2.0 (2026-11-29)", 1); err != nil || got != want {
		t.Errorf("dateHeading = %q, %v, want %q", got, err, want)
	}
	for _, c := range []struct{ name, changelog, version, date string }{
		{"no such heading", changelog, "v0.3.0", "2026-11-29"},
		{"already dated", "## v0.2.0 (2026-11-29)\n", "v0.2.0", "2026-11-30"},
		{"twice", "## v0.2.0 (to be tagged)\n## v0.2.0 (to be tagged)\n", "v0.2.0", "2026-11-29"},
		{"bad date", changelog, "v0.2.0", "2026-11-31"},
	} {
		if got, err := dateHeading(c.changelog, c.version, c.date); err == nil {
			t.Errorf("%s: dateHeading = %q, want an error", c.name, got)
		}
	}
}

func TestComparisonBase(t *testing.T) {
	vs := []string{"v0.1.0", "v0.2.0"}
	for _, c := range []struct {
		top  heading
		vs   []string
		want string
		err  bool
	}{
		{top: heading{Kind: unreleased}, vs: vs, want: "v0.2.0"},
		{top: heading{Kind: unreleased}, vs: nil, want: ""},
		{top: heading{Kind: toBeTagged, Version: "v0.3.0"}, vs: vs, want: "v0.2.0"},
		// v0.1.0 was never tagged: its baseline is still what v0.2.0 is compared with.
		{top: heading{Kind: toBeTagged, Version: "v0.2.0"}, vs: []string{"v0.1.0"}, want: "v0.1.0"},
		{top: heading{Kind: toBeTagged, Version: "v0.1.0"}, vs: nil, want: ""},
		{top: heading{Kind: toBeTagged, Version: "v0.2.0"}, vs: vs, err: true}, // stored already
		{top: heading{Kind: toBeTagged, Version: "v0.1.5"}, vs: vs, err: true}, // older than a baseline
		{top: heading{Kind: released, Version: "v0.2.0", Date: "2026-11-29"}, vs: vs, want: "v0.2.0"},
		{top: heading{Kind: neverTagged, Version: "v0.1.0"}, vs: []string{"v0.1.0"}, want: "v0.1.0"},
	} {
		got, err := comparisonBase(c.top, c.vs)
		if c.err != (err != nil) || got != c.want {
			t.Errorf("comparisonBase(%q, %v) = %q, %v, want %q (error %v)", c.top, c.vs, got, err, c.want, c.err)
		}
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
