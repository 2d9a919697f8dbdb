// Package bytesize reads the sizes people write — 500MB, 2G, 1.5GiB, 1048576 — in one grammar for
// the config (memoryBudget, taskMemory), the CLI (--memory-budget, VX_MEMORY_BUDGET) and
// `vx cache prune --max-size`: a number of bytes, or a number and a unit K, M, G or T, each a power
// of 1024 with or without "i" and "B", in any case.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Rule says which sizes a reader takes besides their grammar.
type Rule int

const (
	// NonNegative takes 0 ("prune to nothing").
	NonNegative Rule = iota
	// Positive refuses 0 (a memory budget of nothing runs nothing).
	Positive
)

var units = map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

// Parse reads s as a size in bytes under rule. The error says what a size looks like.
func Parse(s string, rule Rule) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToUpper(strings.TrimSpace(s[i:]))
	}
	n, err := strconv.ParseFloat(num, 64)
	mult, known := units[strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")]
	if err != nil || !known || n < 0 || n*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: want a size such as 500MB or 2G", s)
	}
	bytes := int64(n * mult)
	if rule == Positive && bytes <= 0 {
		return 0, fmt.Errorf("size %q: want a size above zero, such as 512MiB or 2G", s)
	}
	return bytes, nil
}
