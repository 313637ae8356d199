#!/usr/bin/env bash
# Stage every finished run (status complete or diverged) for commit: its four JSON files and,
# where the run keeps one, weights.pt. Unfinished runs and checkpoints are never staged.
set -euo pipefail
cd "$(dirname "$0")/.."
find runs -name summary.json | sort | while read -r s; do
  d=$(dirname "$s")
  if grep -qE '"status": "(complete|diverged)"' "$s"; then
    git add -f "$d"/{config.json,env.json,history.jsonl,summary.json}
    [ -f "$d/weights.pt" ] && git add -f "$d/weights.pt"
  fi
done
git status --short runs
