"""``python -m lib train|sweep|describe|prepare``; bad input exits 2 naming the valid values.

Slightly longer than the house's ~350 lines: every subcommand's options and the one dispatch that
refuses bad input (and turns a Ctrl-C or a closed pipe into one line) before anything runs are one
parser, as argparse keeps them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .engine.config import (
    CONFIGS,
    GAIN_MODES,
    IMPLS,
    MIXERS,
    PAPER_SEED,
    SCALES,
    ConfigError,
    Experiment,
    get_preset,
    replace,
)
from .engine.data import DataError
from .engine.files import RunError
from .engine.runs import RUNS_DIR, check_runs_dir

# The keys of lib.engine.plans.PLANS, which is imported lazily (it pulls in torch).
# Written out so that argparse can list them as choices;
# tests/test_plans.py checks they are PLANS' keys.
PLAN_NAMES = (
    "release",
    "joint_collapse",
    "gain_confound",
    "fixed_val_batches",
    "10m_asymmetry",
    "124m_sweep",
    "124m_longer_budget",
    "124m_search",
    "10m_prefix",
    "10m_whole",
    "10m_schedule_seeds",
    "10m_nanogpt_schedule_seeds",
    "bf16_agreement",
    "mechanism",
    "mixer_test",
    "probe_during",
    "escape_map",
    "escape_long",
    "escape_warmup",
    "bundle",
    "recipes",
    "author_values",
    "schedule_seeds",
    "rounding_twins",
    "gain_twins",
    "gain_seeds",
)


DEFAULT_IMPL = "residualgpt"  # the paper's primary implementation (§3.1)


# The options train and sweep share, so a sweep without --plan builds
# each run exactly as `train` would.
def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--scale", required=True, choices=SCALES)
    p.add_argument("--impl", default=DEFAULT_IMPL, choices=IMPLS)
    # Another budget is another experiment, in its own directory (seed1337_steps300).
    p.add_argument("--steps", type=int, help="override the preset's training steps")
    # Part of the run's path like any off-preset field: the trained model is the same
    # (tests/test_runs.py), but the history, and so every curve drawn from it, is not.
    p.add_argument("--eval-every", type=int, help="override the preset's evaluation interval")
    # the released runs/, guarded by _guard_released
    p.add_argument("--runs-dir", default=str(RUNS_DIR))
    p.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N (default auto)")
    # No default value: None means the preset's precision, so the same command on a GPU and on a CPU
    # writes the same experiment into the same directory (see _precision).
    p.add_argument(
        "--precision",
        choices=("auto", "fp32", "bf16"),
        help=(
            "default: the preset's (fp32 at 10M and the stand-ins, bf16 autocast at 124M); "
            "auto: bf16 on CUDA, fp32 on the CPU; bf16 on the CPU is autocast"
        ),
    )
    # A checkpoint is written only at an evaluation, so a prefix must stop at one
    # (lib.engine.experiment.check_until).
    p.add_argument(
        "--until",
        type=int,
        metavar="N",
        help=(
            "stop after step N (a multiple of the evaluation interval) with status partial, on "
            "the full run's schedule; run again to continue"
        ),
    )
    # How to run, not what: env.json records it, and the run's directory does not change.
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    # Off by default: deterministic kernels cost speed on a GPU, and a CPU run repeats exactly
    # without them (tests/test_runs.py trains one seed twice and compares the histories).
    p.add_argument(
        "--deterministic",
        action="store_true",
        help="CUBLAS_WORKSPACE_CONFIG=:4096:8 and torch.use_deterministic_algorithms(True)",
    )
    # §5.1: runtime multiplies the sublayer's output at every pass (the confound AdamW absorbs);
    # weight scales its output projection once, before the optimiser exists.
    p.add_argument("--gain-mode", choices=GAIN_MODES)
    # 1.0 is no gain; any other value without --gain-mode is refused in _experiment, never ignored.
    p.add_argument("--gain", type=float, default=1.0)
    p.add_argument(
        "--mixer",
        choices=MIXERS,
        default="attention",
        help=(
            "what mixes positions in each block: attention, or the position-blind local MLP (§7.2)"
        ),
    )
    # Repeatable; parse_sets reads the values and
    # lib.engine.config.replace checks the keys and types.
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help=(
            "override any model or training field (e.g. --set n_layer=2 --set beta2=0.95); "
            "an unknown key is refused with the valid ones; the run directory names it"
        ),
    )
    # Not part of the experiment, so not part of the run's path: a run may
    # be resumed with or without it.
    p.add_argument(
        "--micro-batch",
        type=int,
        metavar="B",
        help=(
            "execution option: feed each batch through forward/backward in slices of B sequences "
            "(the same batch and update; faster on a CPU at the 10M shape, see `bench`); "
            "must divide the batch size; recorded in env.json, not in the run's directory"
        ),
    )
    p.add_argument(
        "--fast-dropout",
        action="store_true",
        help=(
            "execution option, CPU only: draw dropout's masks from a NumPy SFC64 stream seeded by "
            "the run's seed instead of torch's serial generator (the same keep probability and "
            "scaling, another random realisation; faster, see `bench`); recorded in env.json, not "
            "in the run's directory"
        ),
    )
    # §4.1's callbacks off; a resume must match
    p.add_argument("--no-diagnostics", action="store_true")
    # Moved aside to a .replaced-* sibling, never deleted: a finished run may be
    # the only copy of hours of work.
    p.add_argument(
        "--force", action="store_true", help="retrain a complete run (the old one is moved aside)"
    )
    # Two steps, not one flag: --force alone never touches the released runs (see _guard_released).
    p.add_argument(
        "--into-released",
        action="store_true",
        help=(
            "allow --force, or a run that is in no plan, in the released runs/ (refused without it)"
        ),
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


class _Parser(argparse.ArgumentParser):
    """argparse with its refusals in one line, as every other refusal here: its message, then the
    valid options (or commands), where argparse would print its whole usage block first.
    ``--help`` still explains each one."""

    def error(self, message):
        valid = [
            a.option_strings[-1]
            for a in self._actions
            if a.option_strings
            and a.help != argparse.SUPPRESS
            and not isinstance(a, argparse._HelpAction)
        ]
        commands = [
            c for a in self._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices
        ]
        said = (
            f"valid commands: {', '.join(commands)}"
            if commands
            else f"valid options: {', '.join(valid)}"
        )
        self.exit(2, f"{self.prog}: error: {message}; {said} (--help explains them)\n")


def parser() -> argparse.ArgumentParser:
    # prog names the entry point the README uses, so usage and error lines
    # show a command a reader can run.
    ap = _Parser(prog="python -m lib", description=__doc__, allow_abbrev=False)
    # required: `python -m lib` alone prints the usage and exits 2 instead of doing nothing.
    sub = ap.add_subparsers(dest="command", required=True)

    # no abbreviations: `--gpu` must not pass for `--gpus` (a worker would spawn workers)
    def add(name, **kw):
        return sub.add_parser(name, allow_abbrev=False, **kw)

    t = add("train", help="train one run (resumes an unfinished one)")
    _common(t)
    t.add_argument("--config", required=True, choices=tuple(CONFIGS))
    # the anchor seed of every single-seed table
    t.add_argument("--seed", type=int, default=PAPER_SEED)
    # A finished run's checkpoint is deleted; the weights the chapters probe
    # are kept only when asked for.
    t.add_argument(
        "--keep-weights", action="store_true", help="save the final weights as weights.pt (fp16)"
    )
    s = add("sweep", help="train several runs; complete ones are skipped, partial ones resumed")
    s.add_argument("--plan", choices=PLAN_NAMES)
    _common(s)
    # A plan names its own scales, so --scale is optional for sweep alone; _sweep_experiments
    # refuses a sweep with neither. This sets a private argparse attribute: _common adds
    # --scale as required for both.
    s._option_string_actions["--scale"].required = False
    # With --plan, --impl narrows the plan like --configs; so it has no default
    # there, or a plan of both implementations (10m_whole) would be narrowed to
    # ResidualGPT's runs by a flag nobody gave.
    s.set_defaults(impl=None)
    s._option_string_actions[
        "--impl"
    ].help = f"without --plan: the implementation (default {DEFAULT_IMPL}); with --plan: narrow it"
    s.add_argument(
        "--configs",
        nargs="+",
        choices=tuple(CONFIGS),
        help=(
            "without --plan: the configurations to train (default all four); with --plan: narrow it"
        ),
    )
    s.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        help=f"without --plan: the seeds to train (default {PAPER_SEED}); with --plan: narrow it",
    )
    # Reads only: not subject to _guard_released, so it also lists the released runs' status.
    s.add_argument("--dry-run", action="store_true", help="list the runs and their status only")
    # Worker processes, not torchrun: each GPU trains whole runs of the plan, which keeps every run
    # a single-process run (torchrun is for one run spread over several GPUs).
    s.add_argument(
        "--gpus",
        help=(
            "GPU indices, e.g. 0,1,2,3: one worker process per GPU (CUDA_VISIBLE_DEVICES), "
            "sharing the plan through run locks"
        ),
    )
    s.add_argument(
        "--shard",
        metavar="K/N",
        help=(
            "train only every N-th run of the plan from the K-th (0-based): "
            "one job of a cluster array"
        ),
    )
    # Hidden: how often held runs are looked at again
    # (lib.engine.sweep.train_queue); the tests shorten it.
    s.add_argument("--poll", type=float, default=10.0, help=argparse.SUPPRESS)
    # The parameter counts are those of a built model, not typed in: tests/test_cli.py
    # checks that describe prints Table 1's 10M count (10,750,080 for each configuration: a
    # removed skip removes no parameter).
    d = add("describe", help="resolved config and parameter count of each configuration (JSON)")
    d.add_argument("--scale", required=True, choices=SCALES)
    d.add_argument("--impl", default=DEFAULT_IMPL, choices=IMPLS)
    w = add(
        "export-weights",
        help=(
            "write weights.pt (fp16 final weights) for complete runs; a run whose "
            "checkpoint was deleted at the end is retrained in a scratch directory and "
            "its weights kept only if it reproduces the run's history"
        ),
    )
    w.add_argument("run_dirs", nargs="+")
    w.add_argument("--device", default="auto", help="auto | cpu | cuda | cuda:N (default auto)")
    a = add(
        "adopt",
        help=(
            "put a retrain from step 0 in the place of a released partial run whose checkpoint is "
            "gone, if it reproduces that run's history within evaluation noise (lib.engine.adopt)"
        ),
    )
    a.add_argument("retrain_dir", help="the retrain's run directory (e.g. under runs-retrain/)")
    a.add_argument(
        "--runs-dir",
        default=str(RUNS_DIR),
        help="where the released partial run is (default runs/)",
    )
    r = add("report", help="best val loss per configuration over a plan's finished runs (markdown)")
    # release by default: the runs the first six chapters read.
    r.add_argument("--plan", default="release", choices=PLAN_NAMES)
    r.add_argument("--runs-dir", default=str(RUNS_DIR))
    r.add_argument(
        "--scale",
        choices=SCALES,
        help="the plan at this scale (e.g. --plan 124m_sweep --scale 124M)",
    )
    b = add(
        "bench", help="tokens/s of fp32 and bf16 training at the 10M shape and the cpu stand-in"
    )
    # The paper's 10M shape and its CPU stand-in: the two the CPU budget decisions rest on
    # (book/reproducibility.md).
    b.add_argument("--scales", nargs="+", choices=SCALES, help="default: 10M cpu")
    # Few: one fp32 step of the 10M batch takes 5.6-17 s on the 2-core CPUs sessions get here
    # (book/reproducibility.md).
    b.add_argument(
        "--steps", type=int, default=5, help="timed steps per measurement (after 2-3 untimed)"
    )
    b.add_argument("--device", default="auto")
    b.add_argument(
        "--batch-size",
        type=int,
        help="replace the presets' batch size (same model and sequence length)",
    )
    # 8: the size the 10M prefixes train with (book/reproducibility.md: with --fast-dropout
    # 1.35-1.61 times the plain loop's speed).
    b.add_argument(
        "--micro-batches",
        nargs="+",
        type=int,
        metavar="B",
        help="micro-batch sizes timed beside the whole batch in the step-cost table (default 8)",
    )
    b.add_argument(
        "--impl",
        choices=IMPLS,
        help=f"the implementation whose AttnOnly step is timed (default {DEFAULT_IMPL})",
    )
    # The throughput table times bf16 too, which at the 10M batch takes
    # minutes a step on an AVX2 CPU.
    b.add_argument(
        "--step-cost-only",
        action="store_true",
        help=(
            "print only the step-cost table, at --scales (default 10M; no fp32/bf16 "
            "throughput table)"
        ),
    )
    b.add_argument(
        "--rounds",
        type=int,
        help=(
            "time the step-cost loops this many times in turn and print each one's median and "
            "range (default 1)"
        ),
    )
    pr = add("prepare", help="fetch and encode a dataset")
    pr.add_argument("dataset", choices=("tinyshakespeare", "openwebtext"))
    # A local copy for a machine without network, or for the tests; the Hub's conversion otherwise.
    pr.add_argument(
        "--source",
        help=(
            "openwebtext: a local .parquet file, folder of them, or .jsonl file "
            "instead of the Hub's Parquet conversion"
        ),
    )
    pr.add_argument(
        "--n-docs",
        type=int,
        default=None,
        help="openwebtext: documents to take (default 100,000, §3.3)",
    )
    pr.add_argument(
        "--out-dir",
        help="openwebtext: where to write (default $OPENWEBTEXT_DIR or data/openwebtext)",
    )
    pr.add_argument(
        "--threads", type=int, help="openwebtext: tokeniser threads (default: all cores)"
    )
    pr.add_argument("--force", action="store_true", help="openwebtext: replace a prepared set")
    return ap


def _precision(args, exp: Experiment) -> str:
    """The precision ``exp`` trains in: its preset's (fp32 at 10M and at the stand-ins, bf16 at
    124M), so that ``train`` and ``sweep`` write one experiment to one directory; ``--precision``
    replaces it, ``auto`` meaning bf16 on CUDA and fp32 on the CPU."""
    from .engine.train import resolve_device, resolve_precision

    if args.precision is None:
        return exp.train.precision
    # auto depends on the machine, so it is resolved here, once, and the run
    # records the value it resolved to.
    return resolve_precision(args.precision, resolve_device(args.device))


def parse_sets(items: list[str]) -> dict:
    """``["n_layer=2", "val_mode=fixed"]`` -> ``{"n_layer": 2, "val_mode": "fixed"}``: a value that
    reads as JSON (a number, true/false) is that, and Python's True/False are booleans too; anything
    else is a string. ``lib.engine.config.replace`` checks keys and types."""
    out = {}
    for item in items:
        # partition, not split: a value may itself contain "=".
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set needs KEY=VALUE, got {item!r}")
        # Python's spelling too, since --set tie_weights=False is what a reader of
        # lib.engine.config would type.
        if text in ("True", "False"):
            out[key] = text == "True"
            continue
        try:
            # JSON reads 2 as an int and 3e-4 as a float (replace() turns an int into a float for a
            # float field); what is not JSON (manual, cosine) stays a string, which
            # lib.engine.config's checks accept or refuse.
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


# Fields that name the experiment, or that have a flag of their own: never a --set key, so a run
# cannot be relabelled (--set scale=10M on the stand-in) and a flag and a --set can never disagree.
OWN_FLAG = {
    "scale": "--scale",
    "dataset": "--scale (each scale has its dataset)",
    "seed": "--seed",
    "impl": "--impl",
    "attn_res": "--config",
    "ffn_res": "--config",
    "mixer": "--mixer",
    "max_steps": "--steps",
    "precision": "--precision",
    "gain_mode": "--gain-mode",
    "gain": "--gain",
}


def _experiment(args, config: str, seed: int) -> Experiment:
    # Checked before the preset is built, so the message names the flag to use instead.
    sets = parse_sets(args.set)
    for key in sets:
        if key in OWN_FLAG:
            raise ConfigError(
                f"--set {key}=...: {key} is given by {OWN_FLAG[key]}, not by --set "
                f"(fields with their own flag: {', '.join(OWN_FLAG)})"
            )
    # Two spellings of one field: refused rather than letting one silently win.
    if args.eval_every is not None and "eval_interval" in sets:
        raise ConfigError("--eval-every and --set eval_interval=... both given; give one")
    # Every run is a small delta from its preset (STYLE rule 3); the path names each
    # delta (lib.engine.runs.run_path).
    preset = get_preset(args.scale, args.impl or DEFAULT_IMPL, config, seed)
    # The flags and the --set keys in one replace: none can clash (OWN_FLAG, and the
    # eval_interval check above), and --set cannot change the precision (OWN_FLAG), so the
    # preset's precision is the one to start from.
    overrides = {"mixer": args.mixer, "precision": _precision(args, preset), **sets}
    if args.steps is not None:
        overrides["max_steps"] = args.steps
    if args.eval_every is not None:
        overrides["eval_interval"] = args.eval_every
    if args.gain_mode is not None:
        overrides.update(gain_mode=args.gain_mode, gain=args.gain)
    elif args.gain != 1.0:
        raise ConfigError(f"--gain {args.gain} needs --gain-mode; valid: {', '.join(GAIN_MODES)}")
    return replace(preset, **overrides)


def _guard_released(args, exps) -> None:
    """The released ``runs/`` takes the plans' runs only, trained from committed code, and is never
    retrained into by accident: a dirty ``lib/``, ``--force`` there, or a run in no plan (a smoke
    run, another learning rate), needs ``--into-released``."""
    from .engine.plans import command_for, planned

    # Resolved, so runs/../runs or a symlink to it is the released runs/
    # too; any folder inside it counts.
    if args.into_released or not Path(args.runs_dir).resolve().is_relative_to(RUNS_DIR.resolve()):
        return
    if args.force:
        raise ConfigError(
            f"--force in the released {RUNS_DIR}: it would move released runs aside and retrain "
            f"them; retrain into --runs-dir DIR, or pass --into-released to replace them on purpose"
        )
    # A run in no plan would sit among the released runs where no chapter reads
    # it and releasable() skips it.
    stray = [e for e in exps if not planned(e)]
    if stray:
        raise ConfigError(
            f"`{command_for(stray[0])}` is in no plan, so it does not belong in the released "
            f"{RUNS_DIR}; train it with --runs-dir DIR (or pass --into-released)"
        )
    # A run trained from uncommitted lib/ can never be released (tests/test_released.py):
    # refused before it costs hours, where before a whole segment of a 10M run was trained
    # and then could not be committed.
    from .engine.host import git_state

    if git_state()["git_dirty_lib"]:
        raise ConfigError(
            "lib/ has uncommitted changes, and a run trained from them into the released "
            f"{RUNS_DIR} could never be released: commit them first, or train with --runs-dir DIR"
        )


# How to run, as opposed to what to run (the Experiment): the same for every run of a sweep.
def _run_kwargs(args) -> dict:
    return dict(
        runs_dir=args.runs_dir,
        device=args.device,
        compile=args.compile,
        deterministic=args.deterministic,
        diagnostics=not args.no_diagnostics,
        force=args.force,
        progress=not args.quiet,
        until=args.until,
        micro_batch=args.micro_batch,
        fast_dropout=args.fast_dropout,
    )


# One JSON line per finished run: a sweep's log can be read back by a program, and the line is the
# summary.json fields a reader checks first.
def _print_summary(s: dict) -> None:
    # .get: a released summary may lack a field no reader checks
    # (RunDir.problems); the line shows null for it
    print(
        json.dumps(
            {
                k: s.get(k)
                for k in (
                    "scale",
                    "impl",
                    "config",
                    "seed",
                    "status",
                    "steps",
                    "best_val_loss",
                    "best_step",
                    "unigram_floor",
                    "escape_step",
                    "tokens_per_s",
                    "wall_s",
                )
            }
        )
    )


def _sweep_experiments(args) -> list[Experiment]:
    from .engine.plans import resolve, with_steps

    if args.plan:
        # A plan refuses a --configs, --seeds or --impl that selects none of its runs
        # (lib.engine.plans.resolve).
        exps = with_steps(
            resolve(
                args.plan,
                args.scale,
                args.configs,
                args.seeds,
                None if args.impl is None else [args.impl],
            ),
            args.steps,
        )
        # Refused rather than applied: a plan with a --set would train runs that no
        # plan, and so no chapter, has.
        if args.set or args.mixer != "attention":
            raise ConfigError(
                "--set and --mixer are for one run or a sweep without --plan; "
                "a plan names its own experiments"
            )
        # --precision applies to a plan too: each run's preset precision
        # unless the flag says otherwise.
        exps = [replace(e, precision=_precision(args, e)) for e in exps]
    else:
        if args.scale is None:
            raise ConfigError(f"sweep needs --plan or --scale; valid scales: {', '.join(SCALES)}")
        # Seed by seed, the four configurations of one seed together: a sweep cut short
        # still leaves complete matched-seed comparisons (§3.4: one seed, four
        # configurations, everything else equal).
        exps = [
            _experiment(args, c, s)
            for s in args.seeds or [PAPER_SEED]
            for c in args.configs or list(CONFIGS)
        ]
    return exps


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C that knows where its run stands (``RunDir.standing``): main's one line says it."""

    def __init__(self, where: str):
        super().__init__(where)
        self.where = where


def _describe(args, argv) -> None:
    from .engine.model import GPT

    out = {}
    # Built on the CPU only to count: describe trains nothing.
    for c in CONFIGS:
        exp = get_preset(args.scale, args.impl, c)
        out[c] = {"n_params": GPT(exp.model).num_params(), "experiment": exp.to_dict()}
    print(json.dumps(out, indent=2))


def _bench_tables(args) -> tuple[list[str], list[str], str, list[int]]:
    """What `bench` will time, refused before any model is built where the trainer or the machine
    would refuse it: the throughput table's scales, the step-cost table's, the implementation and
    the micro-batches."""
    from .engine.experiment import check_fits
    from .engine.train import check_micro_batch, resolve_device

    # The step-cost table times a preset's whole batch: a --batch-size would not reach it.
    if args.step_cost_only and args.batch_size is not None:
        raise ConfigError("--step-cost-only times each preset's whole batch: drop --batch-size")
    # Zero timed steps would time nothing (and divide by no time).
    if args.steps < 1:
        raise ConfigError(
            f"--steps {args.steps}: must be at least 1 (the timed steps of each measurement)"
        )
    # The step-cost table: the paper's 10M shape, and with --step-cost-only any preset's
    # (a stand-in's bench row, e.g. --step-cost-only --scales cpu-bpe-ramp); the
    # throughput table: --scales.
    scales = args.scales or (["10M"] if args.step_cost_only else ["10M", "cpu"])
    timed = scales if args.step_cost_only else [s for s in scales if s == "10M"]
    # The step-cost table's own options are refused, not dropped, where no table is timed.
    given = [
        flag
        for flag, value in (
            ("--rounds", args.rounds),
            ("--micro-batches", args.micro_batches),
            ("--impl", args.impl),
        )
        if value is not None
    ]
    if not timed and given:
        raise ConfigError(
            f"{' and '.join(given)} {'applies' if len(given) == 1 else 'apply'} to the "
            f"step-cost table, which --scales {' '.join(scales)} does not time: add 10M "
            f"to --scales, or use --step-cost-only"
        )
    impl = args.impl or DEFAULT_IMPL
    micro_batches = [8] if args.micro_batches is None else args.micro_batches
    # The step is set against an fp32 matmul rate: a preset that trains in bf16 (124M)
    # would read as a utilisation of nothing, so it is refused, not timed.
    fp32 = [s for s in SCALES if get_preset(s, impl).train.precision == "fp32"]
    for scale in timed:
        if scale not in fp32:
            raise ConfigError(
                f"--scales {scale}: the step-cost table times fp32 steps against an fp32 "
                f"matmul rate, and {scale} trains in "
                f"{get_preset(scale, impl).train.precision}; valid: {', '.join(fp32)}"
            )
        for b in micro_batches:
            check_micro_batch(b, get_preset(scale, impl, "AttnOnly").train.batch_size)
    # as train: a step that cannot fit
    if not args.step_cost_only and args.batch_size is not None:
        for scale in scales:
            check_fits(
                replace(get_preset(scale, impl, "FullResidual"), batch_size=args.batch_size),
                resolve_device(args.device),
            )
    return scales, timed, impl, micro_batches


def _bench(args, argv) -> None:
    from .engine.bench import bench, step_cost

    scales, timed, impl, micro_batches = _bench_tables(args)
    for scale in timed:  # what one step of the preset's model costs here
        print(
            step_cost(
                scale,
                impl=impl,
                micro_batches=micro_batches,
                steps=args.steps,
                device=args.device,
                rounds=1 if args.rounds is None else args.rounds,
            ).to_markdown(index=False),
            end="\n\n",
        )
    if not args.step_cost_only:
        print(
            bench(scales, args.steps, args.device, batch_size=args.batch_size).to_markdown(
                index=False
            )
        )


def _export_weights(args, argv) -> None:
    from .engine.experiment import recover_weights
    from .engine.runs import RunDir, export_weights

    for d in args.run_dirs:
        rd = RunDir(d)
        # never rewritten: it is the run's final weights already
        if (rd.path / "weights.pt").exists():
            print(f"{d}/weights.pt exists; left as it is")
            continue
        # finishing deleted the checkpoint
        if rd.status == "complete" and not rd.ckpt.exists():
            recover_weights(rd, rd.experiment(), device=args.device)
        else:
            export_weights(rd)
        print(f"wrote {d}/weights.pt")


def _adopt(args, argv) -> None:
    from .engine.adopt import adopt

    print(json.dumps(adopt(args.retrain_dir, args.runs_dir)))


def _prepare(args, argv) -> None:
    from .engine import data

    if args.dataset == "tinyshakespeare":
        # Downloads if need be, checks the sha256 and prints where the file is.
        print(data.shakespeare_path())
        return
    kw = {
        "source": args.source,
        "out_dir": args.out_dir,
        "threads": args.threads,
        "force": args.force,
    }
    # Left out when not given, so prepare_openwebtext's own default (the paper's 100,000) applies.
    kw |= {"n_docs": args.n_docs} if args.n_docs is not None else {}
    print(json.dumps(data.prepare_openwebtext(**kw)))


def _report(args, argv) -> None:
    from .book import release_report
    from .engine.plans import resolve

    # A mistyped folder would otherwise report "no finished runs", as if nothing had been trained.
    if not Path(args.runs_dir).is_dir():
        raise ConfigError(f"--runs-dir {args.runs_dir}: no such directory")
    # Each run that is left out is listed with its reason below: the table never drops a run in
    # silence.
    table, totals = release_report(resolve(args.plan, args.scale), args.runs_dir)
    print(table.to_markdown(index=False) if len(table) else "no finished runs")
    print(
        f"\n{totals['finished']} of {totals['planned']} runs finished; "
        f"wall time {totals['wall_s']:,.0f} s ({totals['wall_s'] / 3600:.2f} h); "
        f"unigram floors: {totals['floors']}; diverged: {totals['diverged'] or 'none'}"
    )
    for path in totals["unfinished"]:
        print(f"  not finished: {path}")
    for problem in totals["invalid"]:
        print(f"  left out: {problem}")
    for line in totals["read_from"]:
        print(f"  the search probe's run: {line}")


def _train(args, argv) -> None:
    from .engine.experiment import run
    from .engine.runs import RunDir, run_path

    exp = _experiment(args, args.config, args.seed)
    # Before anything is built or written: a refused command leaves no directory behind.
    _guard_released(args, [exp])
    training = RunDir(run_path(exp, args.runs_dir))
    try:
        summary = run(exp, keep_weights=args.keep_weights, **_run_kwargs(args))
        # Under torchrun every rank returns the summary; one line is printed, not one per rank.
        if int(os.environ.get("RANK", 0)) == 0:
            _print_summary(summary)
    except KeyboardInterrupt:
        raise Interrupted(training.standing()) from None


def _sweep(args, argv) -> int | None:
    from .engine.plans import PLANS, keeps_weights
    from .engine.probe_reads import ProbeRun, released_run
    from .engine.runs import RunDir, run_path
    from .engine.sweep import shard, spawn_workers, train_queue, without_option

    # Sharded before anything else, so a job of an array sees, lists and guards only its own runs.
    exps = shard(_sweep_experiments(args), args.shard)
    if args.dry_run:
        for i, exp in enumerate(exps, 1):
            rd = RunDir(run_path(exp, args.runs_dir))
            # as train_queue: a search probe's run of the same experiment is read, not trained
            read = released_run(exp, args.runs_dir)
            line = read.read_line() if isinstance(read, ProbeRun) else rd.path
            print(f"[{i}/{len(exps)}] {rd.status or 'missing':9s} {line}", flush=True)
        return None
    _guard_released(args, exps)
    if args.gpus is not None:
        # '' too: refused by spawn_workers, never a sweep in this one process
        if args.fast_dropout:  # refused here, not once in every worker
            raise ConfigError("--fast-dropout with --gpus: it is an option for one CPU process")
        if os.environ.get("LIB_SWEEP_WORKER"):
            raise ConfigError(
                "--gpus inside a sweep worker: a worker trains on the one GPU it was given"
            )
        if args.force:
            raise ConfigError(
                "--force with --gpus: every worker would retrain every finished run; "
                "retrain them with one process (without --gpus) instead"
            )
        # Each worker reruns this very command minus --gpus, so it resolves the same plan in
        # the same order; the run locks keep them off each other's runs.
        return spawn_workers(
            without_option(list(argv if argv is not None else sys.argv[1:]), "--gpus"),
            args.gpus,
            args.device,
        )
    kwargs = _run_kwargs(args)
    # a plan whose runs stop at steps of their own (a sweep without --plan has none)
    if args.plan and (rule := PLANS[args.plan].stop) is not None:

        def stop(e, cap=args.until, rule=rule):
            return rule(e, RunDir(run_path(e, args.runs_dir)).summary, cap)

        kwargs["until"] = stop
    # keeps_weights: a sweep keeps the final weights of exactly the runs the book probes.
    train_queue(
        exps,
        kwargs,
        keeps_weights,
        poll_s=args.poll,
        log=lambda m: print(m, flush=True),
        on_done=_print_summary,
    )
    return None


# One function a subcommand, each called with the parsed arguments and the command line (which
# `sweep --gpus` hands on to its workers); what one returns is the exit status (None: 0).
COMMANDS = {
    "describe": _describe,
    "bench": _bench,
    "export-weights": _export_weights,
    "adopt": _adopt,
    "prepare": _prepare,
    "report": _report,
    "train": _train,
    "sweep": _sweep,
}


def main(argv=None) -> int:
    ap = parser()
    args, extra = ap.parse_known_args(argv)
    if extra:  # let the subcommand's parser complain, so its usage (all valid options) is shown
        sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    # Set by torchrun: only `train` knows how to share one run among ranks.
    world = int(os.environ.get("WORLD_SIZE", 1))
    try:
        if args.command in ("train", "sweep", "report"):
            check_runs_dir(args.runs_dir, RUNS_DIR)
        # Every rank runs this same command: any other command would be run
        # once per rank, side by side.
        if world > 1 and args.command != "train":
            raise ConfigError(
                f"`{args.command}` under torchrun: torchrun trains one run over several processes "
                f"(`torchrun --nproc_per_node N -m lib train ...`); a plan over several GPUs is "
                f"`python -m lib sweep --gpus 0,1,...`"
            )
        status = COMMANDS[args.command](args, argv)
        # Inside the try: stdout is flushed here, where a closed pipe can be caught,
        # not at the interpreter's exit.
        sys.stdout.flush()
    except KeyboardInterrupt as e:
        # Ctrl-C: what was written stays (every file is atomic), and the lock
        # is released on the way out. `train` says where its run stands.
        where = (
            e.where
            if isinstance(e, Interrupted)
            else (
                "each run stands at its last evaluation (finished runs are kept); run the same "
                "command again to resume"
            )
        )
        print(f"python -m lib: interrupted: {where}", file=sys.stderr)
        return 130  # 128 + SIGINT, as a shell reports it
    except BrokenPipeError:
        # The reader of the output went away (`describe | head -1`): it has what it wanted, so
        # nothing is said. stdout is pointed at /dev/null, or the interpreter's last flush would
        # raise the same error at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a tool that the closed pipe ended reports it
    # Anything else (a bug, a CUDA error) keeps its traceback: only the errors lib raises on
    # purpose, and the operating system's, are the user's to fix from a one-line message.
    except (ConfigError, ValueError, RunError, DataError, OSError) as e:
        # bad input, or an unreadable or unwritable file (OSError names it): one line, exit 2,
        # no traceback
        print(f"python -m lib: error: {e}", file=sys.stderr)
        return 2
    # Destroyed on every way out, a refused command included: NCCL warns when a
    # process group outlives the program.
    finally:
        if world > 1:
            import torch.distributed

            if torch.distributed.is_initialized():
                torch.distributed.destroy_process_group()
    return status or 0
