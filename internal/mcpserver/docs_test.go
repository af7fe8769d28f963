package mcpserver

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsStateTheSchemasNumbers: docs/tools.md's table gives each tool
// argument's default and bounds as the tool schema has them — the hub's
// numbers — so the docs cannot drift from what the server enforces.
func TestDocsStateTheSchemasNumbers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	// Each profile's table is in its own section of the page.
	sections := map[string]string{}
	for _, sec := range strings.Split(string(doc), "\n## ")[1:] {
		title, body, _ := strings.Cut(sec, "\n")
		sections[title] = body
	}
	s := &Server{}
	for section, tools := range map[string][]toolDef{"The tools": s.defaultTools(), "The inbox profile": s.inboxTools(),
		"The rooms profile: agent side": s.roomsTools(), "The rooms profile: user side": s.roomsPeopleTools()} {
		checkDocTable(t, section, sections[section], tools)
	}
}

// checkDocTable checks a section's table of tools against their schemas.
func checkDocTable(t *testing.T, section, body string, tools []toolDef) {
	t.Helper()
	rows := map[string]string{} // tool → its arguments cell
	for _, line := range strings.Split(body, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) == 4 && strings.HasPrefix(cells[0], "| `") {
			rows[strings.Trim(cells[0], "| `")] = cells[2]
		}
	}
	if len(rows) != len(tools) {
		t.Errorf("section %q lists %d tools, the profile has %d", section, len(rows), len(tools))
	}
	for _, d := range tools {
		cell, ok := rows[d.tool.Name]
		if !ok {
			t.Errorf("docs/tools.md's %q has no row for %s", section, d.tool.Name)
			continue
		}
		schema := d.tool.InputSchema.(interface{ MarshalJSON() ([]byte, error) })
		b, _ := schema.MarshalJSON()
		var s struct {
			Properties map[string]struct {
				Default   json.RawMessage `json:"default"`
				Minimum   *float64        `json:"minimum"`
				Maximum   *float64        `json:"maximum"`
				MaxLength *int            `json:"maxLength"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		for name, p := range s.Properties {
			// The argument, not the same word among another's values: the
			// first mention that carries a mark or bounds.
			all := regexp.MustCompile("`"+regexp.QuoteMeta(name)+`(\?|=([^`+"`"+`]*))?(\[\])?`+"`"+`(?: \(([^)]*)\))?`).FindAllStringSubmatch(cell, -1)
			var m []string
			for _, c := range all {
				if m == nil || (m[1] == "" && m[4] == "" && (c[1] != "" || c[4] != "")) {
					m = c
				}
			}
			if m == nil {
				t.Errorf("%s: docs/tools.md does not list argument %s", d.tool.Name, name)
				continue
			}
			if p.Default != nil && strings.Trim(string(p.Default), `"`) != m[2] {
				t.Errorf("%s %s: the docs give default %q, the schema %s", d.tool.Name, name, m[2], p.Default)
			}
			if p.Minimum != nil && !strings.Contains(m[4], thousands(int(*p.Minimum))+"–"+thousands(int(*p.Maximum))) {
				t.Errorf("%s %s: the docs give (%s), the schema %v–%v", d.tool.Name, name, m[4], *p.Minimum, *p.Maximum)
			}
			if p.MaxLength != nil && !strings.Contains(m[4], "–"+thousands(*p.MaxLength)) && !strings.Contains(m[4], "≤"+thousands(*p.MaxLength)) {
				t.Errorf("%s %s: the docs give (%s), the schema at most %d characters", d.tool.Name, name, m[4], *p.MaxLength)
			}
		}
	}
}

// thousands writes n with commas, as the docs do: 10,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
