package main

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
)

// README.md marks what the release test runs with HTML comments, each on
// the line right before a fenced code block:
//
//	<!-- install -->                          before a ```sh block: the install commands
//	<!-- quickstart: NAME FILE -->           before a ```go block: FILE of quick start NAME
//
// The test pastes every block of quick start NAME into NAME/FILE of a
// fresh module, runs the install commands there, then builds, vets and
// tests it. NAME is lower case letters, digits and dashes; FILE a .go file
// name; several blocks may make up one quick start (a program and its test).
var (
	installMarker    = regexp.MustCompile(`^<!--\s*install\s*-->$`)
	quickstartMarker = regexp.MustCompile(`^<!--\s*quickstart:\s*([a-z0-9][a-z0-9-]*)\s+([A-Za-z0-9_.-]+\.go)\s*-->$`)
	anyMarker        = regexp.MustCompile(`^<!--\s*(install|quickstart)\b`)
)

// quickstartFile is one marked ```go block of README.
type quickstartFile struct {
	Name, File, Code string
}

// readmeBlocks holds README's marked blocks.
type readmeBlocks struct {
	Install     []string // the install commands, one per line, comments dropped
	Quickstarts []quickstartFile
}

// parseReadme finds README's marked blocks. A marker not followed by a
// fenced block of its language, a malformed marker, a second install block
// or two blocks for the same NAME/FILE is an error, so that a typo cannot
// silently leave a block untested.
func parseReadme(text string) (readmeBlocks, error) {
	var b readmeBlocks
	lines := strings.Split(text, "\n")
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if !anyMarker.MatchString(line) {
			continue
		}
		lang := ""
		var qs quickstartFile
		switch {
		case installMarker.MatchString(line):
			if b.Install != nil {
				return b, fmt.Errorf("release: README line %d: a second install block", i+1)
			}
			lang = "sh"
		case quickstartMarker.MatchString(line):
			m := quickstartMarker.FindStringSubmatch(line)
			qs.Name, qs.File = m[1], m[2]
			if seen[qs.Name+"/"+qs.File] {
				return b, fmt.Errorf("release: README line %d: a second block for quick start %s file %s", i+1, qs.Name, qs.File)
			}
			seen[qs.Name+"/"+qs.File] = true
			lang = "go"
		default:
			return b, fmt.Errorf("release: README line %d: malformed marker %q (want <!-- install --> or <!-- quickstart: NAME FILE.go -->)", i+1, line)
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```"+lang {
			return b, fmt.Errorf("release: README line %d: the marker must be followed by a ```%s line", i+1, lang)
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			return b, fmt.Errorf("release: README line %d: the block is not closed", i+1)
		}
		i = j
		if lang == "go" {
			qs.Code = strings.Join(body, "\n") + "\n"
			b.Quickstarts = append(b.Quickstarts, qs)
			continue
		}
		b.Install = []string{}
		for _, l := range body {
			if k := strings.Index(l, "#"); k >= 0 {
				l = l[:k]
			}
			if l = strings.TrimSpace(l); l != "" {
				b.Install = append(b.Install, l)
			}
		}
	}
	return b, nil
}

// installCommand splits one install line into its arguments. Only go
// commands are accepted, without shell syntax, so that the test runs what
// the line says and nothing else.
func installCommand(line string) ([]string, error) {
	if strings.ContainsAny(line, "|&;<>$`'\"\\(){}*?") {
		return nil, fmt.Errorf("release: install line %q: shell syntax is not supported", line)
	}
	args := strings.Fields(line)
	if len(args) < 2 || args[0] != "go" {
		return nil, fmt.Errorf("release: install line %q: only go commands are supported", line)
	}
	return args, nil
}

// installVersions returns the versions that the install lines' go get
// arguments name (path@version), one entry per module path.
func installVersions(lines []string) map[string]string {
	out := map[string]string{}
	for _, l := range lines {
		sc := bufio.NewScanner(strings.NewReader(l))
		sc.Split(bufio.ScanWords)
		for sc.Scan() {
			if p, v, ok := strings.Cut(sc.Text(), "@"); ok {
				out[p] = v
			}
		}
	}
	return out
}
