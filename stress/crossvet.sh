#!/bin/sh
# crossvet.sh runs `go build ./...` and `go vet ./...` (which type-checks the tests too) for every
# platform vx supports, pure Go. Run it from anywhere in the module. cmd/vx's TestCrossBuild
# builds only the vx binary, cheaply enough for every CI run; this is the whole check.
set -eu
cd "$(dirname "$0")/.."
status=0
for p in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
	goos=${p%/*} goarch=${p#*/}
	echo "== $p"
	GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go build ./... || status=1
	GOOS=$goos GOARCH=$goarch CGO_ENABLED=0 go vet ./... || status=1
done
exit $status
