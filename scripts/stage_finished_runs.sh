#!/usr/bin/env bash
# Stage for commit the released runs that may be committed (lib.engine.sweep.releasable): a plan's runs, complete or
# diverged (or a prefix plan's partial runs), whose files are consistent: the four JSON files and, where the
# run keeps one, weights.pt. Runs still training, runs in no plan (smoke runs, other settings), inconsistent
# runs, checkpoints, run locks and the .replaced-* folders that --force leaves are never staged; each one
# skipped is printed with the reason. Prints each directory it stages and the counts; fails if lib cannot say.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
listing=$("$PY" -c '
from lib.engine.host import ROOT
from lib.engine.runs import RUNS_DIR
from lib.engine.sweep import releasable
ok, skipped = releasable(RUNS_DIR)
for p in ok:
    print("ok\t" + str(p.relative_to(ROOT)))
for s in skipped:
    print("skip\t" + s)
')
n=0
skipped=0
while IFS=$'\t' read -r kind d; do
  [ -n "$kind" ] || continue
  if [ "$kind" = ok ]; then
    git add -f "$d"/{config.json,env.json,history.jsonl,summary.json}
    [ -f "$d/weights.pt" ] && git add -f "$d/weights.pt"
    echo "staged $d"
    n=$((n + 1))
  else
    echo "skipped $d"
    skipped=$((skipped + 1))
  fi
done <<< "$listing"
echo "$n run directories staged, $skipped skipped"
