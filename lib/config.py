"""Experiment configuration: frozen dataclasses, named presets, strict overrides.

Every number here comes from the paper's Table 1 (§3.2) unless its comment says
otherwise. Experiments are small deltas from a preset (``replace``), and an
unknown or ill-typed key is refused with the list of valid ones.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

# The four configurations of §3.4: (attn_res, ffn_res), the two switches of Eq. 1.
CONFIGS: dict[str, tuple[bool, bool]] = {
    "FullResidual": (True, True),
    "AttnOnly": (True, False),   # attention skip kept, FFN skip removed
    "FFNOnly": (False, True),    # FFN skip kept, attention skip removed
    "NoResidual": (False, False),
}
# Two implementations of §3.1, as values on the same classes (lib/model.py).
IMPLS = ("residualgpt", "nanogpt")
# `cpu` stands in for 10M, `cpu-bpe` for 124M (GPT-2 BPE and twice the depth);
# neither is the paper's scale, and everything that shows them says so.
SCALES = ("cpu", "cpu-bpe", "10M", "124M")
PAPER_SCALES = ("10M", "124M")
# Stand-in -> the paper scale it stands in for.
STAND_IN_FOR = {"cpu": "10M", "cpu-bpe": "124M", "10M": "10M", "124M": "124M"}
DATASETS = ("shakespeare_char", "shakespeare_gpt2", "openwebtext")
GAIN_MODES = ("runtime", "weight")
GAIN_TARGETS = ("attn", "mlp")


class ConfigError(ValueError):
    """Bad configuration input; the message names the valid choices."""


def check_choice(kind: str, value: Any, valid) -> None:
    if value not in valid:
        raise ConfigError(f"unknown {kind} {value!r}; valid: {', '.join(map(str, valid))}")


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 65          # TinyShakespeare characters (§3.3)
    block_size: int = 256         # context length
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.2
    attn_res: bool = True         # Eq. 1, first line
    ffn_res: bool = True          # Eq. 1, second line
    impl: str = "residualgpt"     # residualgpt | nanogpt (§3.1)

    def __post_init__(self):
        check_choice("implementation", self.impl, IMPLS)
        if self.n_embd % self.n_head:
            raise ConfigError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")

    # The implementation decides these; they are not independent knobs (§3.1).
    @property
    def tie_weights(self) -> bool:
        return self.impl == "residualgpt"

    @property
    def bias(self) -> bool:       # biases in the attention/MLP Linear layers
        return self.impl == "nanogpt"

    @property
    def flash(self) -> bool:      # F.scaled_dot_product_attention vs manual softmax
        return self.impl == "residualgpt"

    @property
    def config_name(self) -> str:
        return {v: k for k, v in CONFIGS.items()}[(self.attn_res, self.ffn_res)]


@dataclass(frozen=True)
class TrainConfig:
    batch_size: int = 64
    grad_accum: int = 1
    max_steps: int = 3000
    lr: float = 3e-4
    min_lr: float = 3e-5
    warmup_steps: int = 100
    schedule: str = "cosine"      # cosine (after linear warm-up) | constant
    weight_decay: float = 0.1
    decay_all: bool = False       # False: decay >=2-D tensors only (ResidualGPT)
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0        # 0 disables clipping
    eval_interval: int = 100
    eval_batches: int = 50        # fixed validation batches (§3.3)
    train_eval_batches: int = 10  # train-loss estimate; its own generator, not the training stream
    val_mode: str = "fixed"       # fixed (ResidualGPT) | random (nanoGPT, fresh batches each eval)
    val_seed: int = 99991         # §3.1: fixed validation batches are drawn once with this seed

    def __post_init__(self):
        check_choice("schedule", self.schedule, ("cosine", "constant"))
        check_choice("val_mode", self.val_mode, ("fixed", "random"))
        for name in ("batch_size", "grad_accum", "max_steps", "eval_interval", "eval_batches"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.grad_accum  # times block_size, see Experiment


@dataclass(frozen=True)
class Experiment:
    """One run: a scale preset, an implementation, a configuration, a seed."""
    scale: str = "10M"
    dataset: str = "shakespeare_char"
    seed: int = 1337
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    gain_mode: str | None = None  # runtime | weight (§5.1); None: no gain
    gain: float = 1.0
    gain_target: str = "mlp"      # the sublayer whose skip AttnOnly removes

    def __post_init__(self):
        check_choice("scale", self.scale, SCALES)
        check_choice("dataset", self.dataset, DATASETS)
        if self.gain_mode is not None:
            check_choice("gain mode", self.gain_mode, GAIN_MODES)
        check_choice("gain target", self.gain_target, GAIN_TARGETS)
        if self.gain <= 0:
            raise ConfigError(f"gain must be > 0, got {self.gain}")

    @property
    def impl(self) -> str:
        return self.model.impl

    @property
    def config_name(self) -> str:
        return self.model.config_name

    @property
    def is_stand_in(self) -> bool:
        return self.scale not in PAPER_SCALES

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["config_name"] = self.config_name
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "Experiment":
        d = {k: v for k, v in d.items() if k != "config_name"}
        return cls(**{**d, "model": ModelConfig(**d["model"]), "train": TrainConfig(**d["train"])})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


# --- presets -----------------------------------------------------------------
_RESIDUALGPT_TRAIN_10M = TrainConfig()  # the defaults above are Table 1's 10M column
_PRESETS: dict[str, Experiment] = {
    # 10,750,080 parameters (residualgpt, vocab 65); Table 1 "≈10.7M".
    "10M": Experiment(scale="10M", dataset="shakespeare_char",
                      model=ModelConfig(), train=_RESIDUALGPT_TRAIN_10M),
    # 124,356,864 parameters (residualgpt, vocab 50,257); Table 1 "124.4M".
    "124M": Experiment(
        scale="124M", dataset="openwebtext",
        model=ModelConfig(vocab_size=50257, block_size=1024, n_layer=12, n_head=12,
                          n_embd=768, dropout=0.1),
        train=TrainConfig(batch_size=16, grad_accum=8,   # 16 x 8 x 1024 = 131K tokens/step
                          max_steps=20000, lr=6e-4, min_lr=6e-5, warmup_steps=2000,
                          eval_interval=500)),
    # 1,207,680 parameters: the 10M stand-in for a 2-core CPU (0.24 s/step here, ~7 min a run).
    "cpu": Experiment(
        scale="cpu", dataset="shakespeare_char",
        model=ModelConfig(block_size=128, n_layer=6, n_head=4, n_embd=128, dropout=0.0),
        train=TrainConfig(batch_size=32, max_steps=1500, lr=1e-3, min_lr=1e-4,
                          warmup_steps=100, eval_interval=100)),
    # 8,814,976 parameters: the 124M stand-in, GPT-2 BPE tokens and twice the depth of
    # `cpu` (12 layers); the 50,257-way output layer (6.4M of the parameters) dominates its cost.
    "cpu-bpe": Experiment(
        scale="cpu-bpe", dataset="shakespeare_gpt2",
        model=ModelConfig(vocab_size=50257, block_size=128, n_layer=12, n_head=4,
                          n_embd=128, dropout=0.0),
        # Sized (batch 8 x 128 tokens, 800 steps, 9 evaluations of 20 + 10 batches) for about
        # 10 minutes a run on 2 cores; the 124M chapter's budget table shows the measured cost.
        train=TrainConfig(batch_size=8, max_steps=800, lr=1e-3, min_lr=1e-4,
                          warmup_steps=100, eval_interval=100, eval_batches=20)),
}

# nanoGPT's recipe. From §3.1/Table 1: constant lr 3e-4, random validation batches
# drawn afresh at every evaluation. Our decision (not stated in the paper, and a
# departure from Table 1's shared wd 0.1 / clip 1.0): PyTorch's default AdamW weight
# decay (0.01) on every parameter and no gradient clipping, as nanoGPT-style code has.
_NANOGPT_TRAIN = dict(lr=3e-4, min_lr=3e-4, warmup_steps=0, schedule="constant",
                      weight_decay=0.01, decay_all=True, grad_clip=0.0, val_mode="random")


def get_preset(scale: str, impl: str = "residualgpt", config: str = "FullResidual",
               seed: int = 1337) -> Experiment:
    """The resolved experiment for a scale preset, implementation and configuration."""
    check_choice("scale", scale, SCALES)
    check_choice("implementation", impl, IMPLS)
    check_choice("configuration", config, tuple(CONFIGS))
    exp = _PRESETS[scale]
    attn_res, ffn_res = CONFIGS[config]
    model = dataclasses.replace(exp.model, impl=impl, attn_res=attn_res, ffn_res=ffn_res)
    train = exp.train if impl == "residualgpt" else dataclasses.replace(exp.train, **_NANOGPT_TRAIN)
    return dataclasses.replace(exp, model=model, train=train, seed=seed)


def off_preset_steps(exp: Experiment) -> int | None:
    """``exp``'s training steps where they differ from its scale preset's (a shortened smoke run, the
    124M stand-in's longer-budget probe), else None. Run directories, commands and labels use it."""
    steps = exp.train.max_steps
    return None if steps == _PRESETS[exp.scale].train.max_steps else steps


def _coerce(name: str, value: Any, typ: Any) -> Any:
    """Check one override against its declared type; bool/int/float/str only."""
    typ = {"int": int, "float": float, "bool": bool, "str": str}.get(str(typ), typ)
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if typ in (int, float, bool, str) and type(value) is not typ:
        raise ConfigError(f"{name} must be {typ.__name__}, got {type(value).__name__} {value!r}")
    return value


def replace(exp: Experiment, **overrides) -> Experiment:
    """``exp`` with overrides applied to whichever part owns each key.

    Keys may name Experiment, ModelConfig or TrainConfig fields
    (``replace(exp, max_steps=20, seed=7)``). Unknown keys raise ConfigError
    listing the valid ones; a wrong type raises too.
    """
    parts = {"experiment": exp, "model": exp.model, "train": exp.train}
    fields = {name: {f.name: f.type for f in dataclasses.fields(obj)} for name, obj in parts.items()}
    fields["experiment"] = {k: v for k, v in fields["experiment"].items() if k not in ("model", "train")}
    changes: dict[str, dict] = {"experiment": {}, "model": {}, "train": {}}
    for key, value in overrides.items():
        owner = next((p for p, fs in fields.items() if key in fs), None)
        if owner is None:
            valid = sorted(k for fs in fields.values() for k in fs)
            raise ConfigError(f"unknown config key {key!r}; valid: {', '.join(valid)}")
        typ = fields[owner][key]
        if value is not None or "None" not in str(typ):
            value = _coerce(key, value, typ.split(" | ")[0] if isinstance(typ, str) else typ)
        changes[owner][key] = value
    model = dataclasses.replace(exp.model, **changes["model"])
    train = dataclasses.replace(exp.train, **changes["train"])
    return dataclasses.replace(exp, model=model, train=train, **changes["experiment"])
