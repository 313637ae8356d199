#!/usr/bin/env bash
# The GPU path, checked on a GPU machine in a few minutes: the CUDA tests (a few dozen steps at the 10M
# shape in fp32 and bf16 and at the 124M shape in bf16, fused AdamW, TF32), the throughput bench at
# the 10M shape, and a 2-GPU torchrun of a short run where there are two GPUs. Writes under $OUT:
#   gpu_check.log   everything, with the measured tokens/s
# TinyShakespeare must be on the machine (data/tinyshakespeare/input.txt, or $TINYSHAKESPEARE_PATH), and
# tiktoken's files for the 124M shape ($TIKTOKEN_CACHE_DIR), if it is offline.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${OUT:?set OUT to the folder that comes back}"
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT"
log="$OUT/gpu_check.log"
{
  date -u +"start %FT%TZ"; nvidia-smi -L || true
  "$PYTHON" -m pytest -q -s tests/test_cuda.py
  "$PYTHON" -m lib bench --scales 10M --steps 10 --device cuda
  if [ "$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())')" -ge 2 ]; then
    "$PYTHON" -m torch.distributed.run --standalone --nproc_per_node 2 -m lib train --scale 10M \
      --config AttnOnly --steps 40 --eval-every 20 --set grad_accum=2 --set batch_size=32 \
      --runs-dir "$(mktemp -d)" --quiet
  fi
  date -u +"end %FT%TZ"
} 2>&1 | tee "$log"
