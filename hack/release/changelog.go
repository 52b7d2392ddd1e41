package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// CHANGELOG.md's conventions (docs/development.md#releasing). Each
// section starts with a "## " heading of one of these forms:
//
//	## Unreleased                   changes not yet in any version
//	## vX.Y.Z (to be tagged)        the next release, until make release dates it
//	## vX.Y.Z (YYYY-MM-DD)          a release: the date of its commit
//	## vX.Y.Z (never tagged)        a version whose API baseline was stored but never tagged
//
// The top section is the one make api-check holds the API to: it must be
// "Unreleased" or "vX.Y.Z (to be tagged)" while changes are made; a dated
// or never-tagged one on top names no change.

// sectionKind is what a CHANGELOG heading says of its section.
type sectionKind int

const (
	// unreleased is "## Unreleased".
	unreleased sectionKind = iota
	// toBeTagged is "## vX.Y.Z (to be tagged)".
	toBeTagged
	// released is "## vX.Y.Z (YYYY-MM-DD)".
	released
	// neverTagged is "## vX.Y.Z (never tagged)".
	neverTagged
)

// String is the kind as CHANGELOG's headings spell it (dates as YYYY-MM-DD).
func (k sectionKind) String() string {
	switch k {
	case unreleased:
		return "Unreleased"
	case toBeTagged:
		return toBeTaggedNote
	case released:
		return "YYYY-MM-DD"
	case neverTagged:
		return neverTaggedNote
	}
	return fmt.Sprintf("sectionKind(%d)", int(k))
}

// The parenthesised notes of a version heading that are not dates.
const (
	toBeTaggedNote  = "to be tagged"
	neverTaggedNote = "never tagged"
)

// versionHeading matches a version heading's text (after "## "): the
// version and its parenthesised note.
var versionHeading = regexp.MustCompile(`^(v[0-9]+\.[0-9]+\.[0-9]+\S*) \(([^()]*)\)$`)

// heading is one parsed "## " heading of CHANGELOG.md.
type heading struct {
	Kind    sectionKind
	Version string // "" for unreleased
	Date    string // YYYY-MM-DD, for released
	Line    int    // 1-based line number in CHANGELOG.md (0 if not from a file)
}

// String is the heading's text after "## ".
func (h heading) String() string {
	switch h.Kind {
	case unreleased:
		return "Unreleased"
	case released:
		return h.Version + " (" + h.Date + ")"
	}
	return h.Version + " (" + h.Kind.String() + ")"
}

// parseHeading parses the text of a "## " heading (without "## "): one of
// the four forms above, with a canonical semantic version and a real
// calendar date. Anything else is an error, so that a typo ("## v0.2.0
// (to be taged)", "## v0.2.0") cannot hide a section from the checks.
func parseHeading(text string) (heading, error) {
	text = strings.TrimSpace(text)
	if text == "Unreleased" {
		return heading{Kind: unreleased}, nil
	}
	m := versionHeading.FindStringSubmatch(text)
	if m == nil {
		return heading{}, fmt.Errorf("release: CHANGELOG heading %q is none of \"## Unreleased\", \"## vX.Y.Z (%s)\", \"## vX.Y.Z (YYYY-MM-DD)\", \"## vX.Y.Z (%s)\"",
			"## "+text, toBeTaggedNote, neverTaggedNote)
	}
	if err := needVersion(m[1]); err != nil {
		return heading{}, fmt.Errorf("release: CHANGELOG heading %q: %q is not a canonical version such as v0.2.0", "## "+text, m[1])
	}
	h := heading{Version: m[1]}
	switch note := m[2]; note {
	case toBeTaggedNote:
		h.Kind = toBeTagged
	case neverTaggedNote:
		h.Kind = neverTagged
	default:
		// A calendar date, parsed for its validity only (not the clock).
		if _, err := time.Parse(time.DateOnly, note); err != nil || len(note) != len(time.DateOnly) {
			return heading{}, fmt.Errorf("release: CHANGELOG heading %q: %q is neither %q, %q nor a date YYYY-MM-DD",
				"## "+text, note, toBeTaggedNote, neverTaggedNote)
		}
		h.Kind, h.Date = released, note
	}
	return h, nil
}

// section is one "## " section of CHANGELOG.md: its heading and its body,
// up to the next "## " heading.
type section struct {
	heading
	Body string
}

// rawSection is a section whose heading is not parsed yet.
type rawSection struct {
	Text string // the heading's text after "## "
	Line int
	Body string
}

// splitSections splits CHANGELOG.md into its "## " sections, in order;
// the text before the first is left out.
func splitSections(changelog string) []rawSection {
	var out []rawSection
	var body []string
	flush := func() {
		if len(out) > 0 {
			out[len(out)-1].Body = strings.Join(body, "\n")
		}
		body = nil
	}
	for i, l := range strings.Split(changelog, "\n") {
		if t, ok := strings.CutPrefix(l, "## "); ok {
			flush()
			out = append(out, rawSection{Text: t, Line: i + 1})
			continue
		}
		body = append(body, l)
	}
	flush()
	return out
}

// topSection parses CHANGELOG.md's first "## " section, the one that
// make api-check reads; the sections below it are not parsed (see
// changelogSections).
func topSection(changelog string) (section, error) {
	raw := splitSections(changelog)
	if len(raw) == 0 {
		return section{}, fmt.Errorf("release: CHANGELOG.md has no \"## \" section (want \"## Unreleased\" or \"## vX.Y.Z (%s)\" on top)", toBeTaggedNote)
	}
	h, err := parseHeading(raw[0].Text)
	if err != nil {
		return section{}, fmt.Errorf("%w (line %d)", err, raw[0].Line)
	}
	h.Line = raw[0].Line
	return section{heading: h, Body: raw[0].Body}, nil
}

// changelogSections parses every "## " section of CHANGELOG.md, for make
// release: each heading must be of one of the four forms, "Unreleased"
// and "(to be tagged)" only on top, and no version may have two sections.
func changelogSections(changelog string) ([]section, error) {
	var out []section
	seen := map[string]int{}
	for i, r := range splitSections(changelog) {
		h, err := parseHeading(r.Text)
		if err != nil {
			return nil, fmt.Errorf("%w (line %d)", err, r.Line)
		}
		h.Line = r.Line
		if i > 0 && (h.Kind == unreleased || h.Kind == toBeTagged) {
			return nil, fmt.Errorf("release: CHANGELOG.md line %d: %q may only be the top section", r.Line, "## "+h.String())
		}
		if h.Version != "" {
			if prev, ok := seen[h.Version]; ok {
				return nil, fmt.Errorf("release: CHANGELOG.md lines %d and %d: two sections for %s", prev, r.Line, h.Version)
			}
			seen[h.Version] = r.Line
		}
		out = append(out, section{heading: h, Body: r.Body})
	}
	return out, nil
}

// dateHeading rewrites CHANGELOG.md's heading "## version (to be tagged)"
// to "## version (date)"; exactly one such line must exist.
func dateHeading(changelog, version, date string) (string, error) {
	from := "## " + heading{Kind: toBeTagged, Version: version}.String()
	to := "## " + heading{Kind: released, Version: version, Date: date}.String()
	if _, err := parseHeading(strings.TrimPrefix(to, "## ")); err != nil {
		return "", err
	}
	lines := strings.Split(changelog, "\n")
	n := 0
	for i, l := range lines {
		if strings.TrimRight(l, " \t\r") == from {
			lines[i] = to
			n++
		}
	}
	if n != 1 {
		return "", fmt.Errorf("release: CHANGELOG.md has %d lines %q, want 1", n, from)
	}
	return strings.Join(lines, "\n"), nil
}
