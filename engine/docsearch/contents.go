package docsearch

import (
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"
)

// frontPage is the manual's front page, whose contents table names and describes the others.
const frontPage = "index.md"

// Contents is the manual's table of contents, the answer of `vx docs` with no query.
type Contents struct {
	Pages []Page `json:"pages"`
}

// Page is one page of the manual with its top headings.
type Page struct {
	// Title is the page's "#" heading.
	Title string `json:"title"`
	// File is the Markdown file, relative to the repository root ("docs/cache.md").
	File string `json:"file"`
	// URL is the address of the page's top section.
	URL string `json:"url"`
	// Summary is what the front page's contents table says the page covers; "" for a page it
	// does not describe.
	Summary string `json:"summary"`
	// Sections are the page's "##" headings, in order.
	Sections []Heading `json:"sections"`
}

// Heading is a section's title and address.
type Heading struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Contents answers the pages of the manual, in the order its front page lists them, each with
// its "##" headings.
func (idx *Index) Contents() *Contents {
	byFile := map[string]*Page{}
	for _, s := range idx.sections {
		p := byFile[s.File]
		if p == nil {
			p = &Page{File: s.File, Summary: idx.summaries[s.File], Sections: []Heading{}}
			byFile[s.File] = p
		}
		switch {
		case s.Level == 1 && p.Title == "":
			p.Title, p.URL = s.Title, s.URL
		case s.Level == 2:
			p.Sections = append(p.Sections, Heading{Title: s.Title, URL: s.URL})
		}
	}
	c := &Contents{Pages: []Page{}}
	for _, file := range idx.order {
		if p := byFile[file]; p != nil {
			if p.Title == "" {
				p.Title, p.URL = path.Base(file), file
			}
			c.Pages = append(c.Pages, *p)
		}
	}
	return c
}

// ManualContents answers the contents of the embedded manual.
func ManualContents() (*Contents, error) {
	idx, err := Manual()
	if err != nil {
		return nil, err
	}
	return idx.Contents(), nil
}

// tableRow reads a row of the front page's contents table: the page it links and what it covers.
var tableRow = regexp.MustCompile(`^\|\s*\[[^\]]*\]\(([^)#\s]+\.md)\)\s*\|\s*(.*?)\s*\|\s*$`)

// pageOrder orders the pages (names, their texts in pages) as the front page links them: the
// front page first, then each page its contents table names, then the rest by name; summaries
// holds each described page's summary, keyed by its file under dir.
func pageOrder(names []string, pages map[string]string, dir string) (order []string, summaries map[string]string) {
	summaries = map[string]string{}
	add := func(name string) {
		file := path.Join(dir, name)
		if _, ok := pages[name]; ok && !slices.Contains(order, file) {
			order = append(order, file)
		}
	}
	add(frontPage)
	for _, line := range strings.Split(pages[frontPage], "\n") {
		m := tableRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name := path.Clean(m[1])
		add(name)
		summaries[path.Join(dir, name)] = plainText(m[2])
	}
	for _, name := range names {
		add(name)
	}
	return order, summaries
}

// WriteText prints the contents for people: a page a paragraph, its title, address and summary,
// then its headings.
func (c *Contents) WriteText(w io.Writer) error {
	var b strings.Builder
	for i, p := range c.Pages {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s (%s)", p.Title, p.File)
		if p.Summary != "" {
			fmt.Fprintf(&b, ": %s", p.Summary)
		}
		b.WriteString("\n")
		for _, h := range p.Sections {
			fmt.Fprintf(&b, "  %s\n", h.Title)
		}
	}
	b.WriteString("\n`vx docs WORDS` prints the sections that hold every word.\n")
	_, err := io.WriteString(w, b.String())
	return err
}
