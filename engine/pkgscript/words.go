package pkgscript

import (
	"errors"
	"regexp"
	"strings"
)

// errNotSimple is the answer of simpleWords for a command line that is more than one simple
// command of literal words: sh would expand, redirect, pipe or chain something in it.
var errNotSimple = errors.New("not one simple command of literal words")

// simpleWords splits a command line into the words sh would give its one simple command, or
// answers errNotSimple when anything in it would be expanded or interpreted by sh (a variable,
// a glob, a redirection, an operator, a substitution, a comment, an assignment in front). Quotes
// are read as sh reads them: '…' literally, "…" with \ escaping only $ ` " \ and a newline, and
// a \ outside quotes escaping the next character.
func simpleWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
			continue
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errNotSimple
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			n, err := doubleQuoted(line[i+1:], &cur)
			if err != nil {
				return nil, err
			}
			i += n // at the closing quote
		case c == '\\':
			if i+1 >= len(line) || line[i+1] == '\n' {
				return nil, errNotSimple
			}
			cur.WriteByte(line[i+1])
			i++
		case strings.IndexByte("|&;<>()$`*?[#~=\n\r{}!", c) >= 0:
			// = is refused only where it makes an assignment: the first word.
			if c == '=' && len(words) > 0 {
				cur.WriteByte(c)
				break
			}
			// # starts a comment only at a word's start; ~ expands only there; { } ! are
			// reserved only as whole words, and stay literal inside one.
			if (c == '#' || c == '~' || c == '{' || c == '}' || c == '!') && inWord {
				cur.WriteByte(c)
				break
			}
			return nil, errNotSimple
		default:
			cur.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// doubleQuoted reads the inside of a "…" word from s (just past its opening quote) into cur and
// answers how many bytes it took, the closing quote included.
func doubleQuoted(s string, cur *strings.Builder) (int, error) {
	for j := 0; j < len(s); j++ {
		switch c := s[j]; c {
		case '"':
			return j + 1, nil
		case '$', '`':
			return 0, errNotSimple
		case '\\':
			if j+1 < len(s) && strings.IndexByte("$`\"\\", s[j+1]) >= 0 {
				cur.WriteByte(s[j+1])
				j++
			} else if j+1 < len(s) && s[j+1] == '\n' {
				return 0, errNotSimple
			} else {
				cur.WriteByte(c)
			}
		default:
			cur.WriteByte(c)
		}
	}
	return 0, errNotSimple
}

// npmUnsafe is the set of characters that make npm quote an argument for sh
// (@npmcli/promise-spawn's escape.sh).
var npmUnsafe = regexp.MustCompile("[\t\n\r \"#$&'()*;<>?\\\\`|~]")

// npmQuote quotes an argument as npm does before appending it to a script's text
// (@npmcli/promise-spawn's escape.sh, which npm 10 and 11 use): left bare when it holds none of
// sh's special characters, else single-quoted with each ' written '\”.
func npmQuote(s string) string {
	if s == "" {
		return "''"
	}
	if !npmUnsafe.MatchString(s) {
		return s
	}
	q := "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	// escape.sh's clean-ups: a leading run of '' pairs (from a leading quote) is dropped, and
	// \''' (a quote at the end) is written \'.
	for strings.HasPrefix(q, "''") && q != "''" {
		q = q[2:]
	}
	return strings.ReplaceAll(q, `\'''`, `\'`)
}

// shlexSafe is the set of characters the shlex package (which pnpm 9 and 10 quote arguments
// with) leaves bare: \w, @ % - + = : , . /.
var shlexSafe = regexp.MustCompile(`^[A-Za-z0-9_@%\-+=:,./]+$`)

// pnpmQuote quotes an argument as pnpm does before appending it to a script's text (shlex's
// quote): bare when every character is safe, else single-quoted with each run of ' written
// '"…"', and a ” at either end dropped.
func pnpmQuote(s string) string {
	if s == "" {
		return "''"
	}
	if shlexSafe.MatchString(s) {
		return s
	}
	q := "'" + quoteRuns.ReplaceAllString(s, `'"$1"'`) + "'"
	q = strings.TrimPrefix(q, "''")
	return strings.TrimSuffix(q, "''")
}

var quoteRuns = regexp.MustCompile(`('+)`)
