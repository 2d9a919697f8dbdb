package docsearch

import (
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/vzn/vx/docs"
)

const cliMD = "# Commands\n\nEvery verb.\n\n## vx run\n\nRuns tasks.\n\n```sh\n# not a heading\nvx run build\n```\n\n### Flags\n\n`--force` ignores cache hits.\n\n" +
	"## vx cache prune\n\nFrees cache space. The cache the cache the cache.\n\n## Flags\n\nRepeated heading.\n"
const mcpMD = "# The MCP server\n\n## runTasks\n\nRuns tasks for an agent; see the `cache`.\n\n## [Setting up](x.md) _Claude_ Code #\n\nsnake_case_word here.\n"

func testIndex(t testing.TB) *Index {
	t.Helper()
	idx, err := New(fstest.MapFS{
		"cli.md": {Data: []byte(cliMD)},
		"mcp.md": {Data: []byte(mcpMD)},
		"x.txt":  {Data: []byte("# ignored\n")},
	}, "docs")
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func titles(r *Result) string {
	var ts []string
	for _, s := range r.Sections {
		ts = append(ts, s.Title)
	}
	return strings.Join(ts, " | ")
}

func TestSections(t *testing.T) {
	idx := testIndex(t)
	var got []string
	for _, s := range idx.sections {
		got = append(got, s.URL)
	}
	want := "docs/cli.md#commands docs/cli.md#vx-run docs/cli.md#flags docs/cli.md#vx-cache-prune docs/cli.md#flags-1 " +
		"docs/mcp.md#the-mcp-server docs/mcp.md#runtasks docs/mcp.md#setting-up-claude-code"
	if strings.Join(got, " ") != want {
		t.Fatalf("urls\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	run := idx.sections[1]
	if !strings.HasPrefix(run.Text, "## vx run\n\nRuns tasks.\n\n```sh\n# not a heading\n") || !strings.HasSuffix(run.Text, "```\n") {
		t.Fatalf("section text %q", run.Text)
	}
}

func TestSearch(t *testing.T) {
	idx := testIndex(t)
	for _, tc := range []struct{ query, want string }{
		{"cache", "vx cache prune | Flags | runTasks"}, // heading hit first
		{"CACHE prune", "vx cache prune"},              // every word, any case
		{"run force", "Flags"},                         // an enclosing heading counts
		{"cach", "vx cache prune | Flags | runTasks"},  // a word prefix
		{"run tasks", "runTasks | vx run"},             // camelCase parts
		{"runtasks", "runTasks"},                       // the whole name
		{"snake_case_word", "Setting up Claude Code"},  // punctuation splits
		{"xyzzy plugh", ""},                            // no match
		{"cache xyzzy", ""},                            // one word missing
		{"not a heading", "vx run"},                    // code blocks are text
	} {
		r, err := idx.Search(tc.query, DefaultLimit)
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		if got := titles(r); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.query, got, tc.want)
		}
		if r.Sections == nil {
			t.Errorf("%q: nil sections (want an empty list)", tc.query)
		}
	}
}

func TestSearchLimit(t *testing.T) {
	idx := testIndex(t)
	r, err := idx.Search("cache", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Limit != 1 || r.Total != 3 || len(r.Sections) != 1 {
		t.Fatalf("limit %d total %d sections %d", r.Limit, r.Total, len(r.Sections))
	}
	if r, _ := idx.Search("cache", 1000); r.Limit != MaxLimit {
		t.Fatalf("limit %d", r.Limit)
	}
	if _, err := idx.Search(" -- ", 5); err == nil {
		t.Fatal("a query with no words was answered")
	}
}

func TestManualIndexes(t *testing.T) {
	idx, err := Manual()
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.sections) == 0 {
		t.Fatal("the embedded manual has no sections")
	}
	seen := map[string]bool{}
	for _, s := range idx.sections {
		if seen[s.URL] {
			t.Errorf("two sections at %s", s.URL)
		}
		seen[s.URL] = true
	}
}

// BenchmarkSearchManual measures one query over the whole embedded manual, index already built.
func BenchmarkSearchManual(b *testing.B) {
	idx, err := Manual()
	if err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{"cache key", "run", "claude code mcp", "xyzzy"} {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if _, err := idx.Search(q, DefaultLimit); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIndexManual measures building the index, the once-per-process cost of the first query.
func BenchmarkIndexManual(b *testing.B) {
	for b.Loop() {
		if _, err := New(docs.FS, docs.Dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestManualLinks checks that every link between pages of the manual names a page and heading that
// exist.
func TestManualLinks(t *testing.T) {
	idx, err := Manual()
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	pages := map[string]bool{}
	for _, s := range idx.sections {
		anchors[s.URL] = true
		pages[s.File] = true
	}
	link := regexp.MustCompile(`\]\(([a-z0-9-]*\.md)?(#[a-z0-9_-]+)?\)`)
	for _, s := range idx.sections {
		for _, m := range link.FindAllStringSubmatch(s.Text, -1) {
			file := s.File
			if m[1] != "" {
				file = "docs/" + m[1]
			}
			if !pages[file] {
				t.Errorf("%s links to a missing page %s", s.URL, m[0])
			} else if m[2] != "" && !anchors[file+m[2]] {
				t.Errorf("%s links to a missing heading %s", s.URL, m[0])
			}
		}
	}
}

// chapterFS is a manual whose front page describes two of its three pages, and whose cache page's
// sections mention the cache far more often than its introduction does.
func chapterFS() fstest.MapFS {
	return fstest.MapFS{
		"index.md": {Data: []byte("# The manual\n\n## Contents\n\n| page | what it covers |\n| --- | --- |\n" +
			"| [Running](run.md) | how tasks *run* |\n| [The cache](cache.md) | keys and `hits` |\n\n## Conventions\n\nWords.\n")},
		"cache.md": {Data: []byte("# The cache\n\nWhat vx keeps.\n\n## The cache key\n\nThe cache key: cache, cache, cache.\n\n" +
			"### Inputs\n\nA cache input.\n\n## Where the cache lives\n\nThe cache lives in .vx/cache, a cache folder.\n")},
		"run.md":   {Data: []byte("# Running\n\nA run restores from the cache, the cache, the cache.\n\n## Workers\n\nThe cache again.\n")},
		"extra.md": {Data: []byte("# Extra\n\n## Notes\n\nNothing.\n")},
	}
}

func TestSearchChapterFirst(t *testing.T) {
	idx, err := New(chapterFS(), "docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, want string }{
		// the page's own introduction first, though its sections mention the word more
		{"cache", "The cache | The cache key | Where the cache lives | Inputs | Running | Contents | Workers"},
		{"CACHE", "The cache | The cache key | Where the cache lives | Inputs | Running | Contents | Workers"},
		// a word the introduction's heading lacks: no lift, the section with both words leads
		{"cache key", "The cache key | Inputs | Contents"},
	} {
		r, err := idx.Search(tc.query, DefaultLimit)
		if err != nil {
			t.Fatalf("%q: %v", tc.query, err)
		}
		if got := titles(r); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestContents(t *testing.T) {
	idx, err := New(chapterFS(), "docs")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range idx.Contents().Pages {
		var hs []string
		for _, h := range p.Sections {
			hs = append(hs, h.Title+" "+h.URL)
		}
		got = append(got, fmt.Sprintf("%s %s %s [%s] {%s}", p.Title, p.File, p.URL, p.Summary, strings.Join(hs, ", ")))
	}
	want := []string{
		"The manual docs/index.md docs/index.md#the-manual [] {Contents docs/index.md#contents, Conventions docs/index.md#conventions}",
		"Running docs/run.md docs/run.md#running [how tasks run] {Workers docs/run.md#workers}",
		"The cache docs/cache.md docs/cache.md#the-cache [keys and hits] {The cache key docs/cache.md#the-cache-key, Where the cache lives docs/cache.md#where-the-cache-lives}",
		"Extra docs/extra.md docs/extra.md#extra [] {Notes docs/extra.md#notes}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("contents\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestManualContents checks that the embedded manual's contents list every page, the front page
// first, each with its title and a summary for every page the front page links.
func TestManualContents(t *testing.T) {
	c, err := ManualContents()
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(docs.FS, "*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pages) != len(names) || c.Pages[0].File != "docs/index.md" {
		t.Fatalf("%d pages, want %d, index.md first", len(c.Pages), len(names))
	}
	for _, p := range c.Pages {
		if p.Title == "" || len(p.Sections) == 0 {
			t.Errorf("%s: title %q, %d sections", p.File, p.Title, len(p.Sections))
		}
	}
	if c.Pages[1].File != "docs/getting-started.md" || c.Pages[1].Summary == "" {
		t.Errorf("second page %s, summary %q", c.Pages[1].File, c.Pages[1].Summary)
	}
}
