#!/usr/bin/env bash
# Put the book's JavaScript (MathJax 3, require.js, the ipywidgets embed script,
# plotly.min.js) in book/assets/, from the npm registry and the installed plotly
# package, so the built HTML loads nothing from the network. Not committed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
dest=book/assets
if [ -f "$dest/.complete" ]; then exit 0; fi
rm -rf "$dest"; mkdir -p "$dest"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent mathjax@3.2.2 requirejs@2.3.8 @jupyter-widgets/html-manager@1.0.15 >/dev/null)
for t in "$tmp"/*.tgz; do mkdir -p "${t%.tgz}" && tar -xzf "$t" -C "${t%.tgz}"; done
cp -r "$tmp"/mathjax-3.2.2/package/es5 "$dest/mathjax"
cp "$tmp"/requirejs-2.3.8/package/require.js "$dest/require.js"
cp "$tmp"/jupyter-widgets-html-manager-1.0.15/package/dist/embed-amd.js "$dest/embed-amd.js"
cp "$($PY -c 'import plotly, pathlib; print(pathlib.Path(plotly.__file__).parent / "package_data" / "plotly.min.js")')" "$dest/plotly.min.js"
touch "$dest/.complete"
echo "book assets ready in $dest ($(du -sh "$dest" | cut -f1))"
