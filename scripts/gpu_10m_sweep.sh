#!/usr/bin/env bash
# The paper-scale 10M sweep as one command for a lent GPU machine: Table 3 (`residualgpt`, the four
# configurations x seeds 1337, 42, 123) and Table 2 (the author's `nanogpt`, the four configurations x
# seed 1337), deterministic mode, the 10M preset's 3,000 steps, fp32 as the author's 10M notebooks ran.
#
# A 10.7M-parameter model uses a small part of one large GPU, so the sixteen runs train at the
# same time (one process each, one CPU thread each). Every run is cut off after DEADLINE_S seconds;
# a run cut off stays `running` in its summary.json, and scripts/stage_finished_runs.sh never
# stages it. Checkpoints do not come back (a machine starts bare each call), so a run cut off
# cannot be resumed: it is retrained from scratch by the next call. Give the device call a
# timeout_s of at least DEADLINE_S + 60 so the archive is written. Final weights do not come back
# either (about 21 MB each in fp16, over the 16 MiB a returned file may have), so at 10M the
# fixed-validation-batch chapter has no checkpoint to probe. What comes back, under $OUT:
#   runs_10M.tar.gz   the run directories, checkpoints left out (runs/<scale>/... layout)
#   sweep.log         every run's output, each line prefixed with its configuration and seed
#
# On the device (TinyShakespeare must travel: cp ../shared/data/tinyshakespeare/input.txt to the
# git-ignored data/tinyshakespeare/ first, and name data/tinyshakespeare in `carry`):
#   bash scripts/gpu_10m_sweep.sh
# Back here:
#   tar -xzf <files_at>/runs_10M.tar.gz -C runs && bash scripts/stage_finished_runs.sh
# A CPU rehearsal of the mechanics (minutes, not a result):
#   OUT=/tmp/out SCALE=cpu STEPS=2 DEADLINE_S=300 PYTHON=.venv/bin/python bash scripts/gpu_10m_sweep.sh
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder that comes back}"
SCALE=${SCALE:-10M}
DEADLINE_S=${DEADLINE_S:-480}
PYTHON=${PYTHON:-python3}
STEPS_ARG=()
[ -n "${STEPS:-}" ] && STEPS_ARG=(--steps "$STEPS")
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
# The device machine is offline: without the data every run would try to download it.
"$PYTHON" -c "from lib.engine.data import shakespeare_path; shakespeare_path(download=False)" || {
  echo "TinyShakespeare is not here: copy it to data/tinyshakespeare/input.txt and carry that folder" >&2; exit 2; }
work=$(mktemp -d)
log="$OUT/sweep.log"
mkdir -p "$OUT"
{ date -u +"start %FT%TZ"; nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; "$PYTHON" -c \
  "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"; } >"$log" 2>&1

start=$(date +%s)
for spec in residualgpt:1337 residualgpt:42 residualgpt:123 nanogpt:1337; do
  impl=${spec%%:*} seed=${spec##*:}
  for config in FullResidual AttnOnly FFNOnly NoResidual; do
    (timeout -k 15 "$DEADLINE_S" "$PYTHON" -m lib train --scale "$SCALE" --impl "$impl" --config "$config" \
       --seed "$seed" --precision fp32 --deterministic --quiet --runs-dir "$work" "${STEPS_ARG[@]}" 2>&1; \
       echo "exit $?") | sed -u "s/^/[$impl $config $seed] /" >>"$log" &
  done
done
wait
echo "all runs returned after $(( $(date +%s) - start )) s" >>"$log"

tar -C "$work" --exclude=checkpoints --exclude=run.lock -czf "$OUT/runs_10M.tar.gz" .
n_complete=$(find "$work" -name summary.json -exec grep -l '"status": "complete"' {} + | wc -l)
echo "complete runs: $n_complete of 16" | tee -a "$log"
[ "$n_complete" -eq 16 ]
