// Package docs holds the vx reference manual: the Markdown files of this folder, embedded in the
// binary so that `vx docs` and the searchDocs MCP tool answer offline.
package docs

import "embed"

// FS holds every Markdown file of the manual, at the top level of the file system ("cli.md").
//
//go:embed *.md
var FS embed.FS

// Dir is where the manual lives in the repository; section URLs are relative to the repository root.
const Dir = "docs"
