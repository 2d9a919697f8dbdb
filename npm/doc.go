// Package npm holds vx's npm packages and their test: @vzn/vx (the `vx` shim in vx/bin/vx.js and
// the @vzn/vx/config types in vx/config/index.d.ts), @vzn/vx-mcp (vx-mcp/), and the template of
// the six platform packages that carry the binary (platform/). build.sh stages and packs them from
// one version; the test packs them, installs the tarballs offline into a fresh workspace with npm
// (and pnpm), runs `vx` through the shim, and type-checks configs with a pinned TypeScript.
// There is no Go code to import here.
package npm
