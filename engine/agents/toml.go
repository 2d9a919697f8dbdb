package agents

import (
	"strings"
)

// tomlTable replaces the table [name] of a TOML file with table, as text: no Go TOML library keeps
// comments, so every other line of the file stays as it is. The table runs from its header to the
// next table header; where there is none, table is appended.
func tomlTable(name, table string) edit {
	return func(old []byte) ([]byte, error) {
		text := string(old)
		lines := strings.SplitAfter(text, "\n")
		start, end := -1, len(lines)
		for i, line := range lines {
			h, ok := tableHeader(line)
			if !ok {
				continue
			}
			if start < 0 && h == name {
				start = i
			} else if start >= 0 {
				end = i
				break
			}
		}
		if start < 0 {
			if text == "" {
				return []byte(table), nil
			}
			if !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			return []byte(text + "\n" + table), nil
		}
		// Blank and comment lines just before the next header belong to the next table.
		for end > start+1 {
			t := strings.TrimSpace(lines[end-1])
			if t != "" && !strings.HasPrefix(t, "#") {
				break
			}
			end--
		}
		var b strings.Builder
		b.WriteString(strings.Join(lines[:start], ""))
		b.WriteString(table)
		b.WriteString(strings.Join(lines[end:], ""))
		return []byte(b.String()), nil
	}
}

// tableHeader returns the name of the table a line opens ("[a.b]" or "[[a.b]]", quotes and spaces
// around parts removed).
func tableHeader(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if i := strings.Index(t, "#"); i >= 0 && !strings.Contains(t[:i], `"`) {
		t = strings.TrimSpace(t[:i])
	}
	if !strings.HasPrefix(t, "[") || !strings.HasSuffix(t, "]") {
		return "", false
	}
	t = strings.Trim(t, "[]")
	parts := strings.Split(t, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, "."), true
}
