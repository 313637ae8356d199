"""Experiment configuration: frozen dataclasses, named presets, strict overrides.

Every number here comes from the paper's Table 1 (§3.2) unless its comment says
otherwise. Experiments are small deltas from a preset (``replace``), and an
unknown or ill-typed key is refused with the list of valid ones.

Slightly longer than the house's ~350 lines: every preset and recipe field of the paper's Table 1
and of the author's notebooks, with its source, is one table here.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from typing import Any

# The four configurations of §3.4: (attn_res, ffn_res), the two switches of Eq. 1.
CONFIGS: dict[str, tuple[bool, bool]] = {
    "FullResidual": (True, True),
    "AttnOnly": (True, False),  # attention skip kept, FFN skip removed
    "FFNOnly": (False, True),  # FFN skip kept, attention skip removed
    "NoResidual": (False, False),
}
# The configurations as the paper's prose names them (its tables write them as the keys above)
CONFIG_NAMES = {
    "FullResidual": "Full Residual",
    "AttnOnly": "AttnOnly",
    "FFNOnly": "FFNOnly",
    "NoResidual": "No Residual",
}
# Two implementations of §3.1, as values on the same classes (lib/engine/model.py).
IMPLS = ("residualgpt", "nanogpt")
# each implementation as the paper writes its name, for the book's prose
IMPL_NAMES = {"residualgpt": "ResidualGPT", "nanogpt": "nanoGPT"}
# `cpu` stands in for 10M, `cpu-bpe` and `cpu-bpe-ramp` for 124M (GPT-2 BPE and twice the depth; the
# second with the 124M's optimisation, the 124M chapter's search probe "124M warm-up slope"); none
# is the paper's scale, and everything that shows them says so.
# `cpu-sotu` is `cpu-bpe` on the SOTU addresses, the search's corpus of
# documents (each scale has its dataset).
SCALES = ("cpu", "cpu-bpe", "cpu-bpe-ramp", "cpu-sotu", "10M", "124M")
PAPER_SCALES = ("10M", "124M")
# Stand-in -> the paper scale it stands in for.
STAND_IN_FOR = {
    "cpu": "10M",
    "cpu-bpe": "124M",
    "cpu-bpe-ramp": "124M",
    "cpu-sotu": "124M",
    "10M": "10M",
    "124M": "124M",
}
DATASETS = ("shakespeare_char", "shakespeare_gpt2", "openwebtext", "sotu_gpt2")
# The paper's anchor seed: every table's single-seed rows, Fig. 2's diagnostics and the book's
# probes are seed 1337, and so is a run that names no seed. The one place the number is written.
PAPER_SEED = 1337
GAIN_MODES = ("runtime", "weight")
GAIN_TARGETS = ("attn", "mlp")


class ConfigError(ValueError):
    """Bad configuration input; the message names the valid choices."""


def check_choice(kind: str, value: Any, valid) -> None:
    if value not in valid:
        raise ConfigError(f"unknown {kind} {value!r}; valid: {', '.join(map(str, valid))}")


# torch seeds its generators with 64-bit integers, and a run's data stream seeds two more at
# offsets of about two million (lib.engine.data.Batches): 2**63 - 1 leaves room for both,
# far above any seed a sweep names.
MAX_SEED = 2**63 - 1


def check_seed(seed: Any) -> None:
    """The one rule for a seed, on the command line and in the chapters: an
    integer from 0 to ``MAX_SEED``."""
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= MAX_SEED:
        raise ConfigError(
            f"seed must be a non-negative integer up to {MAX_SEED:,} (2**63 - 1), got {seed!r}"
        )


def check_finite(name: str, value: Any) -> None:
    """A float field holds a finite number: an infinite or NaN learning rate, dropout or
    decay can only train a run that diverges (or never moves), so it is refused, however
    it was spelled (1e400, inf, nan)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")


def _check_floats(obj) -> None:
    # Every float field of a config, so that one added later is covered without being listed here.
    for f in dataclasses.fields(obj):
        if str(f.type).startswith("float"):
            check_finite(f.name, getattr(obj, f.name))


# Each implementation of §3.1 is a bundle of model fields (below) and training fields
# (``_NANOGPT_TRAIN``). nanoGPT's values are those of the author's `Notebooks/10M/NanoGPT_10M.ipynb`
# (Karpathy's lecture `gpt.py` with the two switches), read point by point; book/reproducibility.md
# lists each one and where it departs from the paper's Table 1. Keeping every difference a field
# lets the bundle be taken apart one factor at a time (book/escape_and_bundle.ipynb).
MODEL_RECIPES: dict[str, dict[str, Any]] = {
    "residualgpt": dict(
        tie_weights=True,
        qkv_bias=False,
        bias=False,
        head_bias=False,
        attn_kernel="sdpa",
        scaled_init=True,
        emb_dropout=True,
    ),
    "nanogpt": dict(
        tie_weights=False,  # separate token embedding and lm_head
        qkv_bias=False,  # Head's key/query/value: nn.Linear(..., bias=False)
        # attention proj and both FFN layers: nn.Linear default bias
        bias=True,
        head_bias=True,  # lm_head = nn.Linear(n_embd, vocab): with bias
        attn_kernel="manual",  # masked softmax, dropout on the attention weights
        scaled_init=False,  # N(0, 0.02) on every Linear and Embedding, no 1/sqrt(2L)
        emb_dropout=False,
    ),  # token + position embeddings go straight into block 0
}
# Where one scale's recipe departs from its implementation's bundle. No notebook holds the paper's
# primary 10M estimate (§8.1, Phase 3); the 10M ResidualGPT recipe is the closest one, Table 3's,
# read in the author's `Notebooks/10M/AttnOnly_seed_stability.ipynb` (cell 4: N(0, 0.02) on every
# Linear and Embedding, no GPT-2 1/sqrt(2L) on the output projections; cells 1 and 5: Table 1's
# schedule, dropout, optimiser and clipping, which the 10M preset already has). The stand-ins keep
# GPT-2's scaling, and every released run's config.json records the value it trained with
# (book/reproducibility.md, "The author's 10M recipes").
SCALE_RECIPES: dict[tuple[str, str], dict[str, Any]] = {
    ("10M", "residualgpt"): dict(scaled_init=False)
}
# The released nanogpt runs trained before the recipe was read from the author's notebook had
# biases on q/k/v and dropout after the embeddings; their config.json has no bundle fields.
_LEGACY_NANOGPT = {**MODEL_RECIPES["nanogpt"], "qkv_bias": True, "emb_dropout": True}
ATTN_KERNELS = ("sdpa", "manual")
MIXERS = ("attention", "local")
PRECISIONS = ("fp32", "bf16")


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = 65  # TinyShakespeare characters (§3.3)
    block_size: int = 256  # context length
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.2
    attn_res: bool = True  # Eq. 1, first line
    ffn_res: bool = True  # Eq. 1, second line
    # residualgpt | nanogpt (§3.1): the recipe the fields below default to
    impl: str = "residualgpt"
    # The implementation bundle; None takes the value of ``impl``'s recipe (MODEL_RECIPES).
    tie_weights: bool | None = None  # lm_head shares the token embedding
    qkv_bias: bool | None = None  # bias on the query/key/value projection
    bias: bool | None = None  # bias on the attention output projection and both FFN layers
    head_bias: bool | None = None  # bias on lm_head
    # sdpa (F.scaled_dot_product_attention) | manual (masked softmax)
    attn_kernel: str | None = None
    scaled_init: bool | None = None  # GPT-2's N(0, 0.02/sqrt(2 n_layer)) on the c_proj weights
    emb_dropout: bool | None = None  # dropout on token + position embeddings
    # What mixes positions inside a Block: attention (the paper) or `local`, the author's
    # position-blind token-wise MLP of the same parameter count (§7.2,
    # Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb).
    mixer: str = "attention"

    def __post_init__(self):
        check_choice("implementation", self.impl, IMPLS)
        for key, value in MODEL_RECIPES[self.impl].items():
            if getattr(self, key) is None:
                object.__setattr__(self, key, value)
        check_choice("attention kernel", self.attn_kernel, ATTN_KERNELS)
        check_choice("mixer", self.mixer, MIXERS)
        _check_floats(self)
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0 <= self.dropout < 1:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.n_embd % self.n_head:
            raise ConfigError(f"n_embd={self.n_embd} is not divisible by n_head={self.n_head}")

    @property
    def flash(self) -> bool:  # F.scaled_dot_product_attention vs manual softmax
        return self.attn_kernel == "sdpa"

    @property
    def departures(self) -> dict[str, Any]:
        """Bundle fields whose value differs from ``impl``'s recipe (a
        factor switched on its own)."""
        return {
            k: getattr(self, k)
            for k, v in MODEL_RECIPES[self.impl].items()
            if getattr(self, k) != v
        }

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
    schedule: str = "cosine"  # cosine (after linear warm-up) | constant
    weight_decay: float = 0.1
    decay_all: bool = False  # False: decay >=2-D tensors only (ResidualGPT)
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0  # 0 disables clipping
    eval_interval: int = 100
    eval_batches: int = 50  # fixed validation batches (§3.3)
    train_eval_batches: int = 10  # train-loss estimate; its own generator, not the training stream
    val_mode: str = "fixed"  # fixed (ResidualGPT) | random (nanoGPT, fresh batches each eval)
    val_seed: int = 99991  # §3.1: fixed validation batches are drawn once with this seed
    # Training precision: fp32, or bf16 autocast (CUDA or CPU). Each preset names the
    # precision it is defined in, the author's (10M and the stand-ins: fp32; 124M
    # ResidualGPT: bf16 autocast, as in Notebooks/124M); a run in another precision gets its
    # own directory (lib.engine.runs.run_path).
    precision: str = "fp32"

    def __post_init__(self):
        check_choice("schedule", self.schedule, ("cosine", "constant"))
        check_choice("val_mode", self.val_mode, ("fixed", "random"))
        check_choice("precision", self.precision, PRECISIONS)
        _check_floats(self)
        for name in (
            "batch_size",
            "grad_accum",
            "max_steps",
            "eval_interval",
            "eval_batches",
            "train_eval_batches",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not self.lr > 0:  # also refuses NaN
            raise ConfigError(f"lr must be > 0, got {self.lr}")
        for name in ("min_lr", "warmup_steps", "weight_decay", "grad_clip", "val_seed"):
            if not getattr(self, name) >= 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        # A seed's own range (check_seed): a larger one overflows torch's generator
        # only once the run has begun.
        if not 0 <= self.val_seed <= MAX_SEED:
            raise ConfigError(
                f"val_seed must be an integer from 0 to {MAX_SEED:,} (2**63 - 1), got "
                f"{self.val_seed}"
            )
        for name in ("beta1", "beta2"):
            if not 0 <= getattr(self, name) < 1:
                raise ConfigError(f"{name} must be in [0, 1), got {getattr(self, name)}")

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.grad_accum  # times block_size, see Experiment


@dataclass(frozen=True)
class Experiment:
    """One run: a scale preset, an implementation, a configuration, a seed."""

    scale: str = "10M"
    dataset: str = "shakespeare_char"
    seed: int = PAPER_SEED
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    gain_mode: str | None = None  # runtime | weight (§5.1); None: no gain
    gain: float = 1.0
    gain_target: str = "mlp"  # the sublayer whose skip AttnOnly removes

    def __post_init__(self):
        check_choice("scale", self.scale, SCALES)
        check_choice("dataset", self.dataset, DATASETS)
        check_seed(self.seed)
        if self.gain_mode is not None:
            check_choice("gain mode", self.gain_mode, GAIN_MODES)
        check_choice("gain target", self.gain_target, GAIN_TARGETS)
        if not (isinstance(self.gain, (int, float)) and math.isfinite(self.gain) and self.gain > 0):
            raise ConfigError(f"gain must be a finite number > 0, got {self.gain}")

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
        model = dict(d["model"])
        # written before the bundle fields
        if model.get("impl") == "nanogpt" and "qkv_bias" not in model:
            model = {**_LEGACY_NANOGPT, **model}
        return cls(**{**d, "model": ModelConfig(**model), "train": TrainConfig(**d["train"])})

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


# --- presets -----------------------------------------------------------------
# The defaults above are Table 1's 10M column. fp32: the author's 10M notebooks (NanoGPT_10M,
# AttnOnly_seed_stability, 10M_MIXTURE_EXPERIMENT) use no autocast; the 124M ones do (bf16 on CUDA).
_RESIDUALGPT_TRAIN_10M = TrainConfig()
_PRESETS: dict[str, Experiment] = {
    # 10,750,080 parameters (residualgpt, vocab 65); Table 1 "≈10.7M".
    "10M": Experiment(
        scale="10M", dataset="shakespeare_char", model=ModelConfig(), train=_RESIDUALGPT_TRAIN_10M
    ),
    # 124,356,864 parameters (residualgpt, vocab 50,257); Table 1 "124.4M".
    "124M": Experiment(
        scale="124M",
        dataset="openwebtext",
        model=ModelConfig(
            vocab_size=50257, block_size=1024, n_layer=12, n_head=12, n_embd=768, dropout=0.1
        ),
        train=TrainConfig(
            batch_size=16,
            grad_accum=8,  # 16 x 8 x 1024 = 131K tokens/step
            max_steps=20000,
            lr=6e-4,
            min_lr=6e-5,
            warmup_steps=2000,
            eval_interval=500,
            precision="bf16",
        ),
    ),
    # 1,207,680 parameters: the 10M stand-in for a 2-core CPU (0.24 s/step here, ~7 min a run).
    "cpu": Experiment(
        scale="cpu",
        dataset="shakespeare_char",
        model=ModelConfig(block_size=128, n_layer=6, n_head=4, n_embd=128, dropout=0.0),
        train=TrainConfig(
            batch_size=32, max_steps=1500, lr=1e-3, min_lr=1e-4, warmup_steps=100, eval_interval=100
        ),
    ),
    # 8,814,976 parameters: the 124M stand-in, GPT-2 BPE tokens and twice the depth of
    # `cpu` (12 layers); the 50,257-way output layer (6.4M of the parameters) dominates its cost.
    "cpu-bpe": Experiment(
        scale="cpu-bpe",
        dataset="shakespeare_gpt2",
        model=ModelConfig(
            vocab_size=50257, block_size=128, n_layer=12, n_head=4, n_embd=128, dropout=0.0
        ),
        # Sized (batch 8 x 128 tokens, 800 steps, 9 evaluations of 20 + 10 batches) for about
        # 10 minutes a run on 2 cores; the 124M chapter's budget table shows the measured cost.
        train=TrainConfig(
            batch_size=8,
            max_steps=800,
            lr=1e-3,
            min_lr=1e-4,
            warmup_steps=100,
            eval_interval=100,
            eval_batches=20,
        ),
    ),
}
# 8,814,976 parameters: `cpu-bpe`'s model with the 124M's optimisation, as the 124M chapter's
# search probe "124M warm-up slope" trains it (lib.engine.plans.SEARCH_PROBES), for Table 5's
# sweep: the 124M's rate, dropout and warm-up slope (6e-4 over 2,000 steps), trained for the
# warm-up's first 1,200 steps, so its rate climbs to 3.6e-4 and never decays (lr_at: the 124M's
# schedule's rates, cut at step 1,200). min_lr is the 124M's, unused. Its departures from
# `cpu-bpe` are these fields, no others.
_PRESETS["cpu-bpe-ramp"] = dataclasses.replace(
    _PRESETS["cpu-bpe"],
    scale="cpu-bpe-ramp",
    model=dataclasses.replace(_PRESETS["cpu-bpe"].model, dropout=0.1),
    train=dataclasses.replace(
        _PRESETS["cpu-bpe"].train,
        max_steps=1200,
        lr=6e-4,
        min_lr=6e-5,
        warmup_steps=2000,
        eval_interval=50,
    ),
)
# 8,814,976 parameters: `cpu-bpe` on the 233 State of the Union addresses
# (lib.engine.data.sotu_gpt2), the corpus lever of the 124M chapter's search: documents, 1.87M
# training tokens, where TinyShakespeare is one text of 304K.
_PRESETS["cpu-sotu"] = dataclasses.replace(
    _PRESETS["cpu-bpe"], scale="cpu-sotu", dataset="sotu_gpt2"
)

# nanoGPT's training recipe, as the author's NanoGPT_10M.ipynb runs it: constant lr 3e-4, and
# `torch.optim.AdamW(model.parameters(), lr=3e-4)`, i.e. PyTorch's defaults, betas (0.9, 0.999) and
# weight decay 0.01 on every parameter; no gradient clipping; fresh random validation batches at
# each evaluation; no autocast (fp32). Table 1 lists beta2 0.95, weight decay 0.1 and clipping 1.0
# as "shared"; the code does not, and we follow the code (book/reproducibility.md).
_NANOGPT_TRAIN = dict(
    lr=3e-4,
    min_lr=3e-4,
    warmup_steps=0,
    schedule="constant",
    beta2=0.999,
    weight_decay=0.01,
    decay_all=True,
    grad_clip=0.0,
    val_mode="random",
    precision="fp32",
)


def get_preset(
    scale: str, impl: str = "residualgpt", config: str = "FullResidual", seed: int = PAPER_SEED
) -> Experiment:
    """The resolved experiment for a scale preset, implementation and configuration."""
    check_choice("scale", scale, SCALES)
    check_choice("implementation", impl, IMPLS)
    check_choice("configuration", config, tuple(CONFIGS))
    exp = _PRESETS[scale]
    attn_res, ffn_res = CONFIGS[config]
    model = dataclasses.replace(
        exp.model,
        impl=impl,
        attn_res=attn_res,
        ffn_res=ffn_res,
        **{**MODEL_RECIPES[impl], **SCALE_RECIPES.get((scale, impl), {})},
    )
    train = exp.train if impl == "residualgpt" else dataclasses.replace(exp.train, **_NANOGPT_TRAIN)
    return dataclasses.replace(exp, model=model, train=train, seed=seed)


def off_preset_steps(exp: Experiment) -> int | None:
    """``exp``'s training steps where they differ from its scale preset's (a shortened
    smoke run, the 124M stand-in's longer-budget probe), else None. Run
    directories, commands and labels use it."""
    steps = exp.train.max_steps
    return None if steps == _PRESETS[exp.scale].train.max_steps else steps


# Fields a run directory names in its own way (``lib.engine.runs.run_path``)
# or that the configuration names.
_NAMED_ELSEWHERE = {"attn_res", "ffn_res", "impl", "mixer", "max_steps", "precision"}


def off_preset_fields(exp: Experiment) -> dict[str, Any]:
    """Model and training fields of ``exp`` that differ from its preset (scale,
    implementation and configuration): a factor of the implementation bundle switched on
    its own, another depth, another evaluation cadence. Each one becomes part of the run's
    directory name, so that two experiments never share a directory. Steps, precision and
    mixer are named by their own functions."""
    # The seed is no model or training field: the preset at the paper's
    # seed compares the same fields.
    preset = get_preset(exp.scale, exp.impl, exp.config_name)
    # Each scale has its dataset, and no directory names it: another dataset under the same scale
    # would share the preset's run directory. Refused; another corpus is another scale (`cpu-sotu`).
    if exp.dataset != preset.dataset:
        raise ConfigError(
            (
                f"dataset {exp.dataset!r} at scale {exp.scale!r}, whose dataset is "
                f"{preset.dataset!r}: each scale has its dataset; valid scales for "
                f"{exp.dataset!r}: "
            )
            + ", ".join(s for s, e in _PRESETS.items() if e.dataset == exp.dataset)
        )
    out = {}
    for part in ("model", "train"):
        ours, ref = getattr(exp, part), getattr(preset, part)
        for f in dataclasses.fields(ours):
            if f.name not in _NAMED_ELSEWHERE and getattr(ours, f.name) != getattr(ref, f.name):
                out[f.name] = getattr(ours, f.name)
    return out


# Named elsewhere in a comparison (the implementation) or the same on both sides by construction
# (the two switches: a preset is FullResidual, and every configuration departs from it alike).
_NOT_COMPARED = ("attn_res", "ffn_res", "impl")


def recorded_fields(exp: Experiment) -> dict[str, Any]:
    """Every field of an experiment that its config.json records, the model's and the training's,
    and the dataset: what a stand-in is compared with its paper preset on, field by field (the
    limitations page, the 124M search)."""
    out = {"dataset": exp.dataset}
    for part in (exp.model, exp.train):
        out.update(
            {
                f.name: getattr(part, f.name)
                for f in dataclasses.fields(part)
                if f.name not in _NOT_COMPARED
            }
        )
    return out


def departures(exp: Experiment, reference: Experiment) -> dict[str, tuple[Any, Any]]:
    """The recorded fields in which ``exp`` differs from ``reference``: name
    -> (reference's value, exp's)."""
    a, b = recorded_fields(reference), recorded_fields(exp)
    return {k: (a[k], b[k]) for k in a if a[k] != b[k]}


def off_preset_precision(exp: Experiment) -> str | None:
    """``exp``'s precision where it differs from the one its preset (scale and
    implementation) is defined in, else None: a bf16 prefix of the author's fp32 nanoGPT,
    an fp32 run of 10M ResidualGPT."""
    reference = get_preset(exp.scale, exp.impl).train.precision
    return None if exp.train.precision == reference else exp.train.precision


def _coerce(name: str, value: Any, typ: Any) -> Any:
    """Check one override against its declared type; bool/int/float/str only."""
    typ = {"int": int, "float": float, "bool": bool, "str": str}.get(str(typ), typ)
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    # --set reads 1e400 as inf (JSON), but "inf" and "-inf" as text: either way the refusal is the
    # finite one, not a wrong-type message for a value that is a number.
    if (
        typ is float
        and isinstance(value, str)
        and value.strip().lstrip("+-").lower() in ("inf", "infinity", "nan")
    ):
        check_finite(name, float(value))
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
    fields = {
        name: {f.name: f.type for f in dataclasses.fields(obj)} for name, obj in parts.items()
    }
    fields["experiment"] = {
        k: v for k, v in fields["experiment"].items() if k not in ("model", "train")
    }
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
    # another implementation: its recipe, except the fields overridden here
    if "impl" in changes["model"]:
        impl = changes["model"]["impl"]
        check_choice("implementation", impl, IMPLS)
        scale = changes["experiment"].get("scale", exp.scale)
        recipe = {**MODEL_RECIPES[impl], **SCALE_RECIPES.get((scale, impl), {})}
        changes["model"] = {**recipe, **changes["model"]}
    model = dataclasses.replace(exp.model, **changes["model"])
    train = dataclasses.replace(exp.train, **changes["train"])
    return dataclasses.replace(exp, model=model, train=train, **changes["experiment"])
