#!/bin/sh
# Checks that every source line made it into the bundle.
set -e
for f in src/*; do
  grep -qF "$(head -1 "$f")" dist/bundle.js || { echo "missing $f in dist/bundle.js"; exit 1; }
done
echo "ok $(basename "$PWD")"
