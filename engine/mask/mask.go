// Package mask replaces secret values with "***" in every text vx answers, logs or stores.
package mask

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Stars is what a secret value reads as.
const Stars = "***"

// MinSecretLen is the length (in characters) below which a value is not masked: masking every
// "t" or "ab" of every message would garble them all ("en***ry rejec***ed") and hide nothing. A
// run refuses a task's secret that short (Check), so such a value never reaches a task's output.
const MinSecretLen = 4

// Check answers an error naming the secret variable name when its value is set but shorter than
// MinSecretLen, too short to be masked.
func Check(name, value string) error {
	if n := utf8.RuneCountInString(value); n > 0 && n < MinSecretLen {
		return fmt.Errorf("secret %s is %d character(s) long: vx refuses a secret shorter than %d, which could not be masked without masking ordinary text; set a longer value", name, n, MinSecretLen)
	}
	return nil
}

// minLineSecret is the shortest line of a multi-line secret masked on its own: shorter ones would
// mask common text for little gain.
const minLineSecret = 8

// Masker replaces a fixed set of secret values. The zero value masks nothing.
type Masker struct {
	replacer *strings.Replacer
	secrets  []string
}

// New returns a Masker for the given secret values; values shorter than MinSecretLen are
// ignored. Longer secrets are replaced first so a secret that contains another is masked whole.
//
// A secret that spans lines (a PEM key, say) is also masked line by line: output read a line at a
// time (a task's live output) never holds it whole.
func New(secrets ...string) *Masker {
	var vals []string
	seen := map[string]bool{}
	add := func(s string) {
		if utf8.RuneCountInString(s) >= MinSecretLen && !seen[s] {
			seen[s] = true
			vals = append(vals, s)
		}
	}
	for _, s := range secrets {
		add(s)
		if strings.ContainsAny(s, "\r\n") {
			for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
				if len(strings.TrimSpace(line)) >= minLineSecret {
					add(line)
				}
			}
		}
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	m := &Masker{secrets: vals}
	if len(vals) > 0 {
		pairs := make([]string, 0, 2*len(vals))
		for _, v := range vals {
			pairs = append(pairs, v, Stars)
		}
		m.replacer = strings.NewReplacer(pairs...)
	}
	return m
}

// String masks s.
func (m *Masker) String(s string) string {
	if m == nil || m.replacer == nil {
		return s
	}
	return m.replacer.Replace(s)
}

// Bytes masks b, returning b itself when nothing needs masking.
func (m *Masker) Bytes(b []byte) []byte {
	if m == nil || m.replacer == nil {
		return b
	}
	s := string(b)
	if r := m.replacer.Replace(s); r != s {
		return []byte(r)
	}
	return b
}

// Empty reports whether the masker masks nothing.
func (m *Masker) Empty() bool { return m == nil || len(m.secrets) == 0 }

// Longest is the length of the longest secret, the tail a streaming writer must hold back.
func (m *Masker) Longest() int {
	if m == nil || len(m.secrets) == 0 {
		return 0
	}
	return len(m.secrets[0])
}
