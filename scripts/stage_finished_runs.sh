#!/usr/bin/env bash
# Stage every finished run (status complete or diverged) and every prefix (status partial: the first steps
# of a run, trained with --until) for commit: its four JSON files and, where the run keeps one, weights.pt.
# Running runs, checkpoints, run locks and the .replaced-* folders that --force leaves are never staged.
# Prints each directory it stages and a count.
set -euo pipefail
cd "$(dirname "$0")/.."
n=0
while read -r s; do
  d=$(dirname "$s")
  case "$d" in *.replaced-*) continue ;; esac
  if grep -qE '"status": "(complete|diverged|partial)"' "$s"; then
    git add -f "$d"/{config.json,env.json,history.jsonl,summary.json}
    [ -f "$d/weights.pt" ] && git add -f "$d/weights.pt"
    echo "staged $d ($(grep -oE '"status": "[a-z]+"' "$s" | cut -d'"' -f4))"
    n=$((n + 1))
  fi
done < <(find runs -name summary.json | sort)
echo "$n run directories staged"
