// Package mask replaces secret values with "***" in every text vx answers, logs or stores.
package mask

import (
	"sort"
	"strings"
)

// Stars is what a secret value reads as.
const Stars = "***"

// Masker replaces a fixed set of secret values. The zero value masks nothing.
type Masker struct {
	replacer *strings.Replacer
	secrets  []string
}

// New returns a Masker for the given secret values; empty values are ignored. Longer secrets are
// replaced first so a secret that contains another is masked whole.
func New(secrets ...string) *Masker {
	var vals []string
	seen := map[string]bool{}
	for _, s := range secrets {
		if s != "" && !seen[s] {
			seen[s] = true
			vals = append(vals, s)
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
