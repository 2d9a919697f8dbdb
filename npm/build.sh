#!/usr/bin/env bash
# npm/build.sh builds vx's npm packages from one version number and packs each into a tarball,
# ready to publish: the six platform packages first (@vzn/vx-linux-x64, …, each one CGO_ENABLED=0
# binary), then @vzn/vx (the `vx` shim, @vzn/vx/config, optionalDependencies on every platform
# package packed, at the same version) and @vzn/vx-mcp. Each carries the repository's LICENSE (MIT).
#
#   bash npm/build.sh [--version V] [--out DIR] [--platforms "linux-x64 darwin-arm64 …"]
#
# The version defaults to the one vx reports (`vx --version`, cmd/vx/app.go), and the binaries
# report the version they are packed under (-X main.version). --out defaults to npm/dist (ignored
# by git); DIR/packages/ holds the staged package folders and DIR/ the tarballs, with
# DIR/publish-order.txt listing them in the order to publish:
#
#   while read -r t; do npm publish --access public "DIR/$t"; done < DIR/publish-order.txt
#
# --platforms builds only those platform packages (the others are left out of the folder, never
# packed without a binary), and @vzn/vx's optionalDependencies name only those: Yarn (1 and
# Berry, PnP or node-modules) fails an install on an optional dependency that is nowhere to be
# found, where npm, pnpm and bun warn. For a quick local try; a release builds all six.
#
# The binaries are built without -trimpath so that Go's build cache, warm from `go build` and
# cmd/vx's TestCrossBuild (same flags), makes each platform a link of a few seconds, where a cold
# cross-compile takes over a minute.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "npm/build.sh: no $tool on PATH: building the packages needs go, node and npm" >&2; exit 1; }
done
repo="$(cd "$here/.." && pwd)"
all_platforms="linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64"

version=""
out="$here/dist"
platforms="$all_platforms"
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --platforms) platforms="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "npm/build.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$version" ]; then
  version="$(sed -n 's/^var version = "\(.*\)"$/\1/p' "$repo/cmd/vx/app.go")"
fi
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "npm/build.sh: version \"$version\" is not semver" >&2
  exit 2
fi
for p in $platforms; do
  case " $all_platforms " in *" $p "*) ;; *) echo "npm/build.sh: unknown platform $p (known: $all_platforms)" >&2; exit 2 ;; esac
done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
stage="$out/packages"
rm -rf "$stage"
rm -f "$out"/*.tgz "$out/publish-order.txt"
mkdir -p "$stage"

# goPlatform turns an npm platform (node's process.platform-process.arch) into GOOS/GOARCH.
goPlatform() {
  local os="${1%-*}" cpu="${1#*-}"
  case "$os" in win32) os=windows ;; esac
  case "$cpu" in x64) cpu=amd64 ;; esac
  echo "$os $cpu"
}

# stageJSON edits a package.json in place with a node expression on `p` (node comes with npm).
stageJSON() {
  VX_VERSION="$version" VX_PLATFORMS="$platforms" node -e '
    const fs = require("fs"); const f = process.argv[1];
    const p = JSON.parse(fs.readFileSync(f, "utf8"));
    const version = process.env.VX_VERSION, platforms = process.env.VX_PLATFORMS.split(" ").filter(Boolean);
    '"$2"'
    fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");
  ' "$1"
}

order=()
for p in $platforms; do
  read -r goos goarch < <(goPlatform "$p")
  dir="$stage/vx-$p"
  exe=vx
  [ "$goos" = windows ] && exe=vx.exe
  mkdir -p "$dir/bin"
  began=$SECONDS
  (cd "$repo" && CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" GOFLAGS= \
    go build -ldflags "-s -w -X main.version=$version" -o "$dir/bin/$exe" ./cmd/vx)
  chmod 755 "$dir/bin/$exe"
  files='"bin/'$exe'"'
  if [ "$goos" = linux ]; then
    # Each task's supervisor (and sandbox): a small program next to vx, so that a task does not
    # pay for starting the whole of vx (see docs/performance.md).
    (cd "$repo" && CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" GOFLAGS= \
      go build -ldflags "-s -w" -o "$dir/bin/vx-sandbox" ./cmd/vx-sandbox)
    chmod 755 "$dir/bin/vx-sandbox"
    files="$files, \"bin/vx-sandbox\""
  fi
  echo "npm/build.sh: built $p (GOOS=$goos GOARCH=$goarch) in $((SECONDS - began))s" >&2
  cp "$here/platform/package.json" "$dir/package.json"
  sed "s/@PLATFORM@/$p/g" "$here/platform/README.md" > "$dir/README.md"
  stageJSON "$dir/package.json" '
    const [os, cpu] = "'"$p"'".split("-");
    p.name = "@vzn/vx-" + os + "-" + cpu; p.version = version;
    p.description = "The vx binary for " + os + " " + cpu + " (installed by @vzn/vx)";
    p.repository.directory = "npm/platform";
    p.os = [os]; p.cpu = [cpu];
    p.files = ['"$files"', "README.md", "LICENSE"];'
  cp "$repo/LICENSE" "$dir/LICENSE"
  order+=("vx-$p")
done

cp -R "$here/vx" "$stage/vx"
cp -R "$here/vx-mcp" "$stage/vx-mcp"
cp "$repo/LICENSE" "$stage/vx/LICENSE"
cp "$repo/LICENSE" "$stage/vx-mcp/LICENSE"
stageJSON "$stage/vx/package.json" '
  p.version = version;
  p.optionalDependencies = {};
  for (const q of platforms) p.optionalDependencies["@vzn/vx-" + q] = version;'
stageJSON "$stage/vx-mcp/package.json" '
  p.version = version; p.peerDependencies["@vzn/vx"] = version;'
order+=(vx vx-mcp)

for d in "${order[@]}"; do
  tgz="$(cd "$out" && npm pack --silent "$stage/$d" | tail -n 1)"
  echo "$tgz" >> "$out/publish-order.txt"
  echo "npm/build.sh: packed $out/$tgz" >&2
done
