"""Shared fixtures: offline data paths and tiny experiments that train in seconds."""
import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
os.environ.setdefault("TINYSHAKESPEARE_PATH", str(SHARED / "tinyshakespeare" / "input.txt"))
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(SHARED / "tiktoken-cache"))

from lib.config import get_preset, replace  # noqa: E402


@pytest.fixture
def tiny():
    """A 2-layer, 32-wide AttnOnly model on TinyShakespeare characters: ~10 s for 20 steps."""
    def make(config="AttnOnly", seed=1337, **kw):
        exp = get_preset("cpu", "residualgpt", config, seed)
        base = dict(n_layer=2, n_embd=32, n_head=2, block_size=32, batch_size=8, max_steps=20,
                    eval_interval=5, eval_batches=3, train_eval_batches=2, warmup_steps=5)
        return replace(exp, **{**base, **kw})
    return make
