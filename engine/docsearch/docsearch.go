// Package docsearch answers `vx docs QUERY`: it finds the sections of the reference manual that hold
// every word of a query and returns each whole, with its URL, best first. It works offline over the
// manual embedded in the binary, and indexes it once per process, on first use.
package docsearch

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/vzn/vx/docs"
	"github.com/vzn/vx/engine/vxerr"
)

// Limits on the number of sections an answer holds. A limit outside 1..MaxLimit is clamped and the
// answer carries the limit it applied.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// MaxQueryChars is the longest query searched, in characters. A question is a few words; a longer
// query is refused before it is scanned, since every word of it is looked for in every section.
const MaxQueryChars = 1000

// Weights of where a query word is found. A word in the section's own heading outweighs any number
// of mentions in its text.
const (
	headingWeight  = 10
	ancestorWeight = 3
	exactBonus     = 0.5
	// chapterWeight lifts a page's own introduction (its top "#" section) whose heading holds
	// every word of the query above the page's sections and the other pages' sections that only
	// share a word with it: `vx docs cache` answers "The cache" first.
	chapterWeight = 20
)

// Section is one section of the manual: a heading and the text up to the next heading.
type Section struct {
	// Title is the heading's text, Markdown markup removed.
	Title string `json:"title"`
	// Level is the heading level (1 for "#").
	Level int `json:"level"`
	// File is the Markdown file, relative to the repository root ("docs/cli.md").
	File string `json:"file"`
	// Anchor is the heading's GitHub-style anchor ("vx-run").
	Anchor string `json:"anchor"`
	// URL is the section's address in the published manual: File#Anchor.
	URL string `json:"url"`
	// Text is the whole section, heading line included, as Markdown.
	Text string `json:"text"`
	// Page is the file's name without folder and extension ("cache"), and Heading the Title:
	// the original's names.
	Page    string `json:"page"`
	Heading string `json:"heading"`
}

// Result is the answer to one query, and the --format json document of `vx docs`.
type Result struct {
	Query string `json:"query"`
	// Limit is the limit applied.
	Limit int `json:"limit"`
	// Total is how many sections matched, before the limit.
	Total int `json:"total"`
	// Sections holds the matching sections, best first: the original's hits.
	Sections []Section `json:"hits"`
}

// entry is one section with the lower-cased text a search scans. Lower-casing is ASCII-only so
// that offsets in the lower-cased text are offsets in the original, where camelCase is seen.
type entry struct {
	level                     int
	title, lowerTitle         string
	ancestors, lowerAncestors string // the enclosing headings, one per line
	body, lowerBody           string
}

// Index is a searchable manual. It is immutable once built and safe for concurrent use. Building it
// only splits the manual into sections; a query scans them, which over the whole manual takes tens
// of microseconds — less than keeping an inverted index would cost to build for one CLI call.
type Index struct {
	sections []Section
	entries  []entry
	// order holds the pages in the order the manual's front page links them (index.md first),
	// then the pages it does not link, by name; summaries holds what its table says each covers.
	order     []string
	summaries map[string]string
}

// manual is the embedded manual's index, built on first use.
var manual = sync.OnceValues(func() (*Index, error) { return New(docs.FS, docs.Dir) })

// Manual returns the index of the manual embedded in vx, building it on the first call.
func Manual() (*Index, error) { return manual() }

// Search answers query over the embedded manual; see Index.Search.
func Search(query string, limit int) (*Result, error) {
	idx, err := Manual()
	if err != nil {
		return nil, err
	}
	return idx.Search(query, limit)
}

// New indexes every .md file at the top of fsys; dir is the folder the files live in within the
// repository, which prefixes each section's File and URL.
func New(fsys fs.FS, dir string) (*Index, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, fmt.Errorf("index the manual: %w", err)
	}
	sort.Strings(names)
	idx := &Index{}
	pages := map[string]string{}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("index the manual: %w", err)
		}
		pages[name] = string(data)
		for _, ps := range splitSections(path.Join(dir, name), string(data)) {
			anc := strings.Join(ps.ancestors, "\n")
			idx.sections = append(idx.sections, ps.Section)
			idx.entries = append(idx.entries, entry{
				level: ps.Level,
				title: ps.Title, lowerTitle: lowerASCII(ps.Title),
				ancestors: anc, lowerAncestors: lowerASCII(anc),
				body: ps.body, lowerBody: lowerASCII(ps.body),
			})
		}
	}
	idx.order, idx.summaries = pageOrder(names, pages, dir)
	return idx, nil
}

// Search returns the sections holding every word of query (case-insensitive; a word matches any word
// of the manual it begins, including a camelCase part, so "cach" finds "cache" and "tasks" finds
// "runTasks"), best first: a word in a section's heading ranks it above mentions in the text. No
// match is an empty list, not an error; a query with no words, or of more than MaxQueryChars
// characters, is a usage error.
func (idx *Index) Search(query string, limit int) (*Result, error) {
	if len(query) > MaxQueryChars { // bytes: no query of fewer bytes has more characters
		if n := utf8.RuneCountInString(query); n > MaxQueryChars {
			return nil, vxerr.Usagef("docs: the query has %d characters, more than the %d a query may have", n, MaxQueryChars)
		}
	}
	words := dedupe(tokens(query))
	if len(words) == 0 {
		return nil, vxerr.Usagef("docs: the query %q has no words to look for", query)
	}
	limit = max(1, min(limit, MaxLimit))
	res := &Result{Query: query, Limit: limit, Sections: []Section{}}

	type scored struct {
		section int
		score   float64
	}
	var found []scored
	for i := range idx.entries {
		if total := idx.entries[i].score(words); total >= 0 {
			found = append(found, scored{i, total})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].score > found[j].score })
	res.Total = len(found)
	for _, f := range found[:min(limit, len(found))] {
		res.Sections = append(res.Sections, idx.sections[f.section])
	}
	return res, nil
}

// score ranks e for the query words, higher first; it is negative when a word is nowhere in e.
func (e *entry) score(words []string) float64 {
	total := 0.0
	allInTitle := true
	for _, w := range words {
		inTitle, exactTitle := occurrences(e.title, e.lowerTitle, w)
		inAnc, _ := occurrences(e.ancestors, e.lowerAncestors, w)
		inBody, exactBody := occurrences(e.body, e.lowerBody, w)
		if inTitle+inAnc+inBody == 0 {
			return -1
		}
		total += math.Log2(1 + float64(inBody))
		if inTitle > 0 {
			total += headingWeight
		} else {
			allInTitle = false
		}
		if inAnc > 0 {
			total += ancestorWeight
		}
		if exactTitle || exactBody {
			total += exactBonus
		}
	}
	if e.level == 1 && allInTitle {
		total += chapterWeight
	}
	return total
}

// occurrences counts where word begins a word of text (lower is text lower-cased): at the start, after
// a character that is not a letter or digit, or at a camelCase boundary. exact is true when one such
// occurrence is the whole word.
func occurrences(text, lower, word string) (count int, exact bool) {
	for i := 0; i < len(lower); {
		j := strings.Index(lower[i:], word)
		if j < 0 {
			break
		}
		pos := i + j
		if boundary(text, lower, pos) {
			count++
			if end := pos + len(word); end == len(lower) || boundary(text, lower, end) {
				exact = true
			}
		}
		i = pos + 1
	}
	return count, exact
}

// boundary reports whether a word can begin at byte pos of text.
func boundary(text, lower string, pos int) bool {
	if pos == 0 {
		return true
	}
	if !isWordByte(lower[pos-1]) || !isWordByte(lower[pos]) {
		return true
	}
	prev, cur := text[pos-1], text[pos]
	return cur >= 'A' && cur <= 'Z' && (prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9')
}

// isWordByte reports whether b belongs to a word: an ASCII letter or digit, or a byte of a non-ASCII
// character (letters, mostly, in prose).
func isWordByte(b byte) bool {
	return b >= 0x80 || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// lowerASCII lower-cases the ASCII letters of s, keeping every byte offset.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// tokens splits a query into lower-case runs of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(lowerASCII(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func dedupe(words []string) []string {
	seen := map[string]bool{}
	out := words[:0]
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// parsedSection is a section with what indexing needs besides the answer.
type parsedSection struct {
	Section
	body      string   // the text below the heading line
	ancestors []string // titles of the enclosing sections, outermost first
}

// splitSections cuts a Markdown file at its ATX headings ("#" to "######"), ignoring lines inside
// fenced code blocks. Text before the first heading belongs to no section.
func splitSections(file, text string) []parsedSection {
	var (
		out    []parsedSection
		cur    *parsedSection
		body   strings.Builder
		fence  string
		slugs  = map[string]int{}
		titles [7]string
	)
	finish := func() {
		if cur != nil {
			cur.body = body.String()
			cur.Text = strings.TrimRight(cur.Text+"\n"+cur.body, "\n") + "\n"
			out = append(out, *cur)
		}
		body.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f := fenceMarker(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
		}
		if fence == "" {
			if level, title, ok := heading(line); ok {
				finish()
				titles[level] = title
				var anc []string
				for l := 1; l < level; l++ {
					if titles[l] != "" {
						anc = append(anc, titles[l])
					}
				}
				for l := level + 1; l < len(titles); l++ {
					titles[l] = ""
				}
				anchor := uniqueSlug(slugs, slug(title))
				cur = &parsedSection{Section: Section{
					Title: title, Level: level, File: file, Anchor: anchor,
					URL: file + "#" + anchor, Text: line,
					Page: strings.TrimSuffix(path.Base(file), path.Ext(file)), Heading: title,
				}, ancestors: anc}
				continue
			}
		}
		if cur != nil {
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	finish()
	return out
}

// fenceMarker returns the fence a line opens or closes ("```", "~~~~"), or "".
func fenceMarker(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			return t[:n]
		}
	}
	return ""
}

// heading parses an ATX heading line into its level and plain title.
func heading(line string) (level int, title string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, "", false
	}
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	title = strings.TrimSpace(t[level:])
	// A closing sequence of #s is not part of the title.
	if trimmed := strings.TrimRight(title, "#"); trimmed != title && (trimmed == "" || strings.HasSuffix(trimmed, " ")) {
		title = strings.TrimSpace(trimmed)
	}
	return level, plainText(title), true
}

// plainText removes inline Markdown from a heading: code spans keep their text, links keep their
// label, emphasis marks go.
func plainText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '`', '*':
			continue
		case '_':
			// Underscores inside words (snake_case) stay; emphasis underscores go.
			if i > 0 && i+1 < len(s) && isIdentByte(s[i-1]) && isIdentByte(s[i+1]) {
				b.WriteByte(c)
			}
			continue
		case '[':
			if end := strings.Index(s[i:], "]("); end > 0 {
				if close := strings.IndexByte(s[i+end:], ')'); close > 0 {
					b.WriteString(s[i+1 : i+end])
					i += end + close
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return strings.TrimSpace(b.String())
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// slug makes a GitHub-style heading anchor: lower case, letters, digits, '-' and '_' kept, spaces to
// '-', everything else dropped.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// uniqueSlug numbers a repeated anchor within one file as GitHub does: "a", "a-1", "a-2".
func uniqueSlug(seen map[string]int, s string) string {
	n, ok := seen[s]
	seen[s] = n + 1
	if !ok {
		return s
	}
	return fmt.Sprintf("%s-%d", s, n)
}

// WriteText prints the matching sections for people: each whole, under its URL, best first.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(r.Sections) == 0 {
		fmt.Fprintf(&b, "no section of the manual holds every word of %q\n", r.Query)
	}
	for i, s := range r.Sections {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "── %s\n\n%s", s.URL, s.Text)
	}
	if r.Total > len(r.Sections) {
		fmt.Fprintf(&b, "\n(%d of %d sections; --limit shows more)\n", len(r.Sections), r.Total)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
