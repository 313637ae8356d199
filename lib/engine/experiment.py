"""Build, train and record one experiment in its run directory.

Longer than the house's ~350 lines because one run's whole life is here and nowhere else:
building the seeded model, refusing bad input before anything is written, resuming, recording
after each evaluation, rebuilding a lost summary, and recovering a finished run's weights by
retraining it and checking it reproduces.
"""

from __future__ import annotations

import datetime as dt
import math
import shutil
import sys
import time
from pathlib import Path

import torch

from .config import STAND_IN_FOR, ConfigError, Experiment
from .data import Batches, load_corpus
from .diagnostics import default_callbacks
from .files import (
    RunError,
    remove_stale_tmp,
    save_bytes_atomic,
    save_torch_atomic,
    write_json_atomic,
    write_jsonl_atomic,
)
from .floors import unigram_floor
from .gain import construct
from .host import environment, memory_bytes
from .lock import RunLock, RunLocked
from .model import GPT, MaskStream
from .runs import (
    RUNS_DIR,
    RunDir,
    check_run_path,
    env_problem,
    export_weights,
    run_path,
)
from .thresholds import escape_step
from .train import (
    Callback,
    Dist,
    Trainer,
    check_fast_dropout,
    check_micro_batch,
    init_distributed,
    resolve_device,
    set_deterministic,
)


def check_until(exp: Experiment, until: int | None) -> None:
    """A prefix ends where a checkpoint is written: at a positive
    multiple of the evaluation interval."""
    # Elsewhere the prefix would stop between checkpoints: its summary would name a step
    # its history and its checkpoint never reached, and continuing it would repeat the
    # steps since the last evaluation.
    if until is not None and (until < 1 or until % exp.train.eval_interval):
        raise ConfigError(
            f"--until {until}: must be a positive multiple of the evaluation interval "
            f"({exp.train.eval_interval}), where a checkpoint is written"
        )


def check_fits(
    exp: Experiment, device: str, micro_batch: int | None = None, fast_dropout: bool = False
) -> None:
    """Refuse, before anything is built or written, a run its data or its machine cannot hold: the
    corpus must load and have the model's vocabulary, a window of ``block_size + 1`` tokens must fit
    in each split, and a lower bound of what one step keeps in memory must fit in the device's
    (``lib.engine.host.memory_bytes``)."""
    # a missing file or tokenizer is a DataError here, before the run's folder
    corpus = load_corpus(exp.dataset)
    m, t = exp.model, exp.train
    # A corpus with fewer token types than the model would train dead logits; one with more would
    # fail on its first id past the embedding.
    if corpus.vocab_size != m.vocab_size:
        raise ConfigError(
            f"{exp.dataset} has vocabulary {corpus.vocab_size} but the model expects {m.vocab_size}"
        )
    shortest = min(("train", len(corpus.train)), ("val", len(corpus.val)), key=lambda kv: kv[1])
    if shortest[1] <= m.block_size:  # a window and its targets, shifted by one
        raise ConfigError(
            f"block_size={m.block_size} does not fit: the {exp.dataset} {shortest[0]} split has "
            f"{shortest[1]:,} tokens and a window needs block_size + 1; valid: 1 to "
            f"{shortest[1] - 1:,}"
        )
    # A lower bound, so that no run that fits is refused: the fixed validation and train-estimate
    # batches (int64 inputs and targets, kept on the device), the position table with its
    # gradient and AdamW's two moments, and per layer the activations backward must keep for the
    # FFN alone (its input, C, and its 4C hidden before and after the GELU: 9C a token), in the
    # precision's bytes, for one micro-batch.
    rows = (micro_batch or t.batch_size) * m.block_size
    width = 2 if t.precision == "bf16" else 4
    need = (
        (t.eval_batches + t.train_eval_batches) * t.batch_size * m.block_size * 2 * 8
        + 4 * 4 * m.block_size * m.n_embd
        + m.n_layer * rows * 9 * m.n_embd * width
    )
    # A kernel that writes the attention scores out keeps at least one (batch, n_head, T, T) tensor
    # per layer for backward (the softmax's output), quadratic in block_size: nanoGPT's manual
    # kernel always (with its T x T causal mask, one byte an entry), and sdpa_math, the `sdpa`
    # kernel written out for --fast-dropout, where dropout draws masks
    # (lib.engine.model.CausalSelfAttention). The fused kernels never hold it.
    scores = not m.flash or (fast_dropout and m.dropout > 0)
    if scores:
        need += m.n_layer * rows * m.n_head * m.block_size * width + (
            0 if m.flash else m.block_size**2
        )
    have = memory_bytes(device)
    if have is not None and need > have:
        heads = (
            f", and {m.n_head} heads' {m.block_size} x {m.block_size} attention scores"
            if scores
            else ""
        )
        raise ConfigError(
            f"block_size={m.block_size}: one training step needs at least {need / 2**30:.1f} GiB "
            f"of memory (batch {micro_batch or t.batch_size} x {m.block_size} tokens x {m.n_layer} "
            f"layers{heads}), more than the {have / 2**30:.1f} GiB of {device}; lower block_size "
            "or batch_size, or pass --micro-batch"
        )


def build_model(exp: Experiment) -> GPT:
    """The seeded, initialised model, with the experiment's gain applied (before any optimiser)."""
    # Seeded right before construction: the four configurations of one seed have the same parameters
    # in the same order (a skip is a switch, not a module), so they start from identical weights,
    # the matched-seed comparison the paper's sweeps rely on.
    # The global generator, not a private one: it goes on to draw the dropout masks, so one seed
    # fixes both, and the trainer's checkpoint saves its state for an exact resume.
    torch.manual_seed(exp.seed)
    return construct(exp)


def run_summary(
    exp: Experiment,
    hist: list[dict],
    *,
    steps: int,
    status: str,
    best: tuple,
    train_s: float,
    tokens_per_step: int,
    floor: float,
    n_params: int,
    device: str | None,
    wall_s: float | None,
) -> dict:
    """The run's ``summary.json``, from its history and the few facts the history does not hold;
    ``best`` is (best validation loss, its step). A diverged run's best loss is ``None`` (its loss
    before it diverged is kept apart, as ``best_val_loss_before_divergence``, so that no reader
    pools it by mistake), with the step and the reason."""
    # Finite values only: in memory a row that diverged at evaluation holds NaN (JSON turns it into
    # None only when written), and a NaN would pass for the final loss.
    vals = [r for r in hist if r.get("val_loss") is not None and math.isfinite(r["val_loss"])]
    # What a reader needs without opening the history: the identity of the run, its outcome against
    # the floor, and its cost. The stand-in fields let every table say when a number is a
    # stand-in's, not the paper scale's.
    out = {
        "scale": exp.scale,
        "impl": exp.impl,
        "config": exp.config_name,
        "seed": exp.seed,
        "gain_mode": exp.gain_mode,
        "gain": exp.gain,
        "stand_in": exp.is_stand_in,
        "stands_in_for": STAND_IN_FOR[exp.scale],
        "steps": steps,
        "max_steps": exp.train.max_steps,
        "best_val_loss": best[0] if vals else None,
        "best_step": best[1],
        "final_val_loss": vals[-1]["val_loss"] if vals else None,
        "unigram_floor": floor,
        "escape_step": escape_step(hist, floor),
        "status": status,
        "n_params": n_params,
        "device": device,
        # optimisation time only (the trainer's clock skips evaluations), None before the first step
        "tokens_per_s": steps * tokens_per_step / train_s if train_s else None,
        "train_s": round(train_s, 2),
        "wall_s": wall_s,
        "updated": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }
    if status == "diverged":
        out.update(
            best_val_loss=None,
            best_val_loss_before_divergence=out["best_val_loss"],
            diverged_step=hist[-1]["step"],
            diverged_reason=hist[-1].get("reason", "non-finite loss"),
        )
    return out


class _Recorder(Callback):
    """Writes history, checkpoint and summary after every evaluation."""

    # The trainer calls back and the recorder writes: lib.engine.train never imports
    # lib.engine.runs, so the Trainer stays model- and directory-agnostic (STYLE rule 4).
    def __init__(
        self,
        rd: RunDir,
        exp: Experiment,
        floor: float,
        n_params: int,
        device: str,
        wall_before: float,
    ):
        self.rd, self.exp, self.floor, self.n_params, self.device = rd, exp, floor, n_params, device
        self.t0, self.wall_before = time.perf_counter(), wall_before

    def wall(self) -> float:
        # wall time, evaluations and writes included, over every segment of a
        # resumed run: what a run costs
        return self.wall_before + time.perf_counter() - self.t0

    def summary(self, trainer: Trainer) -> dict:
        return run_summary(
            self.exp,
            trainer.history,
            steps=trainer.step,
            status=trainer.status,
            best=(trainer.best_val, trainer.best_step),
            train_s=trainer.train_time,
            tokens_per_step=trainer.tokens_per_step,
            floor=self.floor,
            n_params=self.n_params,
            device=self.device,
            wall_s=round(self.wall(), 2),
        )

    def on_history(self, trainer, step):
        # After every evaluation, each file written whole or not at all (atomic rename), in this
        # order: the history, the checkpoint (which holds the history it was taken at), the summary.
        # A kill at any instant therefore leaves summary <= checkpoint <= history, the history at
        # most one evaluation ahead, and the summary never counting a row whose checkpoint is not
        # written: a resume cuts such a row and recomputes it bitwise (RunDir.interrupted_rows), and
        # a summary that meets the history's last row has its checkpoint there.
        write_jsonl_atomic(self.rd.path / "history.jsonl", trainer.history)
        # a diverged run is finished; its weights are of no use to resume
        if trainer.status != "diverged":
            save_torch_atomic(
                self.rd.ckpt,
                {
                    "experiment": self.exp.to_dict(),
                    "wall_s": self.wall(),
                    "trainer": trainer.state_dict(),
                },
            )
        write_json_atomic(self.rd.path / "summary.json", self.summary(trainer))


def _mark_interrupted(rd: RunDir) -> None:
    """A run stopped by Ctrl-C between two evaluations stands at the last one, whose summary was
    written while the run was under way ("running", which every reader leaves out). Where that
    summary, the history and the checkpoint meet at one step past 0, the summary is marked
    ``partial`` there: the prefix it is, resumable from that checkpoint. A Ctrl-C that fell between
    the writes of an evaluation leaves the summary as it is (the reproducibility page's partial
    runs: the same command with ``--until`` at that step)."""
    s = rd.read_json("summary.json")
    hist = rd.history() if (rd.path / "history.jsonl").exists() else []
    if (
        isinstance(s, dict)
        and s.get("status") == "running"
        and hist
        and rd.ckpt.exists()
        and s.get("steps") == hist[-1]["step"] > 0
    ):
        write_json_atomic(rd.path / "summary.json", {**s, "status": "partial"})


def _move_aside(rd: RunDir, why: str) -> None:
    """Move the run's files (never deleted) into a
    ``.replaced-<time>`` sibling; the run lock stays."""
    # to the microsecond, so two moves of one run within a second get two names
    # (mkdir would refuse the second)
    aside = rd.path.with_name(
        rd.path.name + ".replaced-" + dt.datetime.now().strftime("%Y%m%d%H%M%S%f")
    )
    aside.mkdir()
    for child in rd.path.iterdir():
        # the lock stays put: moving a held lock file away would let a third
        # process lock a new one beside it
        if child.name != "run.lock":
            shutil.move(child, aside / child.name)
    # said, so nothing vanishes in silence
    print(f"{why}: moved {rd.path} aside to {aside}", file=sys.stderr)


def _env_device(rd: RunDir) -> str | None:
    """The device env.json names, None where it names none or is no JSON object (a damaged env.json
    is not this rebuild's to refuse: RunDir.problems names it to every reader)."""
    env = rd.read_json("env.json")
    return env.get("device") if isinstance(env, dict) else None


def _without_summary(rd: RunDir, exp: Experiment, force: bool) -> dict | None:
    """A run directory with a history but no checkpoint, and no summary or one that says
    ``running`` (a run cut off where its checkpoint could not follow, or one that lost its
    summary). A history that reaches the last step is a finished run that lost its summary: the
    summary is rebuilt from it (never retrained) and returned. A shorter one cannot be resumed,
    and training afresh would overwrite it: refused unless ``force``, which moves it aside and
    returns None (train from step 0)."""
    hist = rd.history()
    last = hist[-1]["step"]
    vals = [r for r in hist if r.get("val_loss") is not None]
    # Rebuilt only when the history itself proves the run finished: it reaches the budget, did not
    # diverge, and has a validation loss to be best. Anything less could be a run cut off mid-way,
    # which a rebuilt summary would call complete.
    if last != exp.train.max_steps or hist[-1].get("diverged") or not vals:
        if not force:
            raise RunError(
                f"{rd.path} has a history to step {last} of {exp.train.max_steps} but no finished "
                "summary.json and no checkpoint to resume from; move it away, or retrain it with "
                "--force (it is kept aside)"
            )
        _move_aside(rd, "--force")
        return None
    # min picks the first of equal losses, as the trainer's strict "<" does, so the
    # rebuilt best_step is the same
    best = min(vals, key=lambda r: r["val_loss"])
    # The facts the history lacks are recomputed (they follow from the experiment and the corpus);
    # wall time cannot be, so it is None rather than a guess, and the summary says it was rebuilt.
    summary = run_summary(
        exp,
        hist,
        steps=last,
        status="complete",
        best=(best["val_loss"], best["step"]),
        train_s=hist[-1].get("train_time_s") or 0.0,
        tokens_per_step=exp.train.batch_size * exp.train.grad_accum * exp.model.block_size,
        floor=unigram_floor(load_corpus(exp.dataset)),
        n_params=GPT(exp.model).num_params(),
        device=_env_device(rd),
        wall_s=None,
    )
    summary["rebuilt_from_history"] = True
    # lost with it: the directory is this experiment's (run_path)
    if not (rd.path / "config.json").exists():
        write_json_atomic(rd.path / "config.json", exp.to_dict())
    write_json_atomic(rd.path / "summary.json", summary)
    print(
        (
            f"{rd.path}: summary.json was missing; rebuilt from its complete history (nothing "
            "retrained)"
        ),
        file=sys.stderr,
    )
    return rd.summary  # read back from disk: the caller gets exactly what the readers will read


def run(exp: Experiment, runs_dir=RUNS_DIR, until: int | None = None, **kwargs) -> dict:
    """Train ``exp`` into its run directory (resuming if a checkpoint exists); return its summary.
    While it trains, the directory's ``run.lock`` keeps every other process out (``RunLocked``); see
    ``_run`` for the arguments."""
    # Bad input is refused before anything is written (the lock below creates the directory).
    check_micro_batch(kwargs.get("micro_batch"), exp.train.batch_size)
    check_until(exp, until)
    check_fast_dropout(
        kwargs.get("fast_dropout", False),
        resolve_device(kwargs.get("device", "auto")),
        kwargs.get("compile", False),
        Dist.from_env().world,
    )
    rd = RunDir(run_path(exp, runs_dir))
    # its files may be in three places: lib.engine.adopt finishes it, nothing else
    if wrong := rd.adoption_cut_off():
        raise RunError(wrong)
    # A finished run is never trained again (STYLE rule 5): asking for it returns what
    # it recorded. Its config.json must still be this experiment's, or another
    # experiment's result would be handed back.
    if rd.status in ("complete", "diverged") and not kwargs.get("force"):
        rd.check_config(exp)
        rd.refuse_damaged(exp)  # a finished run that no reader would accept is not "done"
        # killed after its last summary: end it
        if rd.ckpt.parent.exists() or list(rd.path.glob(".*.tmp")):
            with RunLock(rd.path):
                _finish(rd, kwargs.get("keep_weights", False))
        if (
            kwargs.get("keep_weights")
            and rd.status == "complete"
            and not (rd.path / "weights.pt").exists()
        ):
            recover_weights(rd, exp, **{k: v for k, v in kwargs.items() if k != "keep_weights"})
        return rd.summary  # reading a finished run needs no lock
    # The lock below makes the run's folder and its parents and writes run.lock: what the file
    # system or the data cannot hold, and a run that cannot be read, are refused first, so a refusal
    # leaves the file system as it was.
    # never trained over (not even with --force): kept for a person to look at
    if rd.status == "unreadable":
        raise RunError(
            f"{rd.path / 'summary.json'} cannot be read; move the run away (or repair the file)"
        )
    check_run_path(rd.path)
    check_fits(
        exp,
        resolve_device(kwargs.get("device", "auto")),
        kwargs.get("micro_batch"),
        kwargs.get("fast_dropout", False),
    )
    # flock excludes every other process: a second rank taking the lock would
    # find it held by rank 0 and refuse
    if not Dist.from_env().is_main:  # a torchrun rank: rank 0 holds the lock for the job
        return _run(exp, runs_dir, until=until, **kwargs)
    # what the lock creates, deepest first
    made = [p for p in (rd.path, *rd.path.parents) if not p.exists()]
    try:
        with RunLock(rd.path):
            return _run(exp, runs_dir, until=until, **kwargs)
    except RunLocked:  # another process's run: never touched
        raise
    except BaseException:
        _remove_if_untouched(rd, made)
        raise


def _remove_if_untouched(rd: RunDir, made: list[Path]) -> None:
    """A run that stopped before it wrote a file of its own (a full disk at its first write, a
    Ctrl-C before it) leaves nothing behind: the lock and the folders made for it are removed,
    so a refusal changes nothing."""
    if (
        rd.path not in made
        or not rd.path.is_dir()
        or any(c.name != "run.lock" for c in rd.path.iterdir())
    ):
        return
    (rd.path / "run.lock").unlink(missing_ok=True)
    for folder in made:
        try:
            folder.rmdir()
        except OSError:  # not empty (another run's folder appeared in it) or already gone
            break


# Largest |difference| of a recorded validation loss that counts as the same run: about ten times
# below the tightest seed-to-seed spread the paper reports (FFNOnly, std 0.0009 in Table 3), so a
# run with other weights would miss it at some evaluation.
WEIGHTS_MATCH_TOL = 1e-4


def recover_weights(rd: RunDir, exp: Experiment, **kwargs) -> Path:
    """``weights.pt`` for a complete run that finished without it (a finished run's checkpoint is
    deleted): retrain the run in a scratch directory, check that every validation loss it records
    equals the run's own (within ``WEIGHTS_MATCH_TOL``; the same code on the same kind of machine
    reproduces them exactly), and only then add the final weights to the run. The run's other files
    are never written; on a mismatch nothing is written and the error gives the difference."""
    import tempfile

    if rd.status != "complete":
        raise RunError(
            f"{rd.path} is {rd.status or 'missing'}: weights.pt holds a complete run's final "
            "weights; train it to the end with --keep-weights"
        )
    env = rd.read_json("env.json")
    if env is None:  # how it was executed is part of what a retrain must repeat: never guessed
        raise RunError(
            f"{rd.path} has no env.json: how it was trained (micro-batches, dropout's masks) is "
            "not recorded, so no retrain can be checked to be the same run"
        )
    # The run's own settings, whatever the command said: the retrain must be the same run. Without
    # dropout --fast-dropout draws nothing, so only with dropout does a segment's stream matter.
    segments = {
        (seg["micro_batch"], seg["fast_dropout"] and exp.model.dropout > 0) for seg in rd.segments()
    }
    # with dropout, each slicing or stream draws its own masks: one retrain cannot follow both
    if len(segments) > 1:
        raise RunError(
            f"{rd.path} was trained in segments with different --micro-batch or --fast-dropout "
            f"({sorted(segments, key=str)}); its weights cannot be recovered by one retrain"
        )
    micro_batch, fast_dropout = segments.pop()
    kwargs = {
        **kwargs,
        "micro_batch": micro_batch,
        "fast_dropout": fast_dropout,
        "diagnostics": env.get("diagnostics", kwargs.get("diagnostics", True)),
        "deterministic": env.get("deterministic", kwargs.get("deterministic", False)),
        "force": False,
    }
    print(
        (
            f"{rd.path}: finished without weights.pt; retraining it in a scratch directory to "
            "recover them"
        ),
        file=sys.stderr,
    )
    # Under the run's lock for the whole retrain, so no other process trains or moves the run
    # meanwhile; in a scratch directory, so the run's own files are only read, and the scratch
    # run goes away with its folder.
    with RunLock(rd.path), tempfile.TemporaryDirectory(prefix="lib-weights-") as tmp:
        again = _run(exp, tmp, keep_weights=True, **kwargs)
        ours = {r["step"]: r.get("val_loss") for r in rd.history()}
        theirs = {r["step"]: r.get("val_loss") for r in RunDir(run_path(exp, tmp)).history()}
        diffs = [
            abs(ours[k] - theirs[k])
            for k in ours
            if ours[k] is not None and theirs.get(k) is not None
        ]
        # The same evaluation steps and every loss within the tolerance; an empty comparison
        # proves nothing, so it fails too.
        same = again["status"] == "complete" and sorted(ours) == sorted(theirs) and diffs
        if not same or max(diffs) > WEIGHTS_MATCH_TOL:
            raise RunError(
                f"{rd.path}: the retrained run does not reproduce the released history (largest "
                f"validation-loss difference {max(diffs) if diffs else 'n/a'}, tolerance "
                f"{WEIGHTS_MATCH_TOL}); its weights would not be this run's, so none were written"
            )
        # the one file added to the released run, copied whole before the
        # scratch directory is removed
        save_bytes_atomic(rd.path / "weights.pt", (run_path(exp, tmp) / "weights.pt").read_bytes())
    print(
        (
            f"{rd.path}: wrote weights.pt (largest validation-loss difference from the released "
            f"history {max(diffs):.2e})"
        ),
        file=sys.stderr,
    )
    return rd.path / "weights.pt"


def _prepare(rd: RunDir, exp: Experiment, until: int | None, force: bool) -> dict | None:
    """Rank 0's look at the run directory before training: the summary to return if there is nothing
    to train (a finished run, a summary rebuilt from a complete history, a released prefix that
    reaches ``until``), else None, with anything in the way moved aside (never deleted)."""
    # (An unreadable summary.json never gets here: run refuses it before it takes the lock.)
    if rd.status in ("complete", "diverged"):
        if not force:
            rd.check_config(exp)
            return rd.summary
        _move_aside(rd, "--force")
    # Before anything is written: a directory holding another experiment is refused,
    # never resumed or overwritten.
    rd.check_config(exp)
    _cut_first_evaluation(rd)
    if rd.status in (None, "running") and rd.history() and not rd.ckpt.exists():
        if (rebuilt := _without_summary(rd, exp, force)) is not None:
            return rebuilt
    # A released prefix arrives without its checkpoint (checkpoints are not released): it can be
    # read, not continued, and training here would replace it by a run nobody compared with it
    # (lib.engine.adopt: retrain beside it, then adopt).
    if rd.status == "partial" and not rd.ckpt.exists():
        # its summary is returned or its steps read below: a damaged one is refused, as sweep does
        if not force:
            rd.refuse_damaged(exp)
        if until is not None and rd.summary["steps"] >= until:
            return rd.summary  # the released prefix already reaches that far
        if not force:
            steps = rd.summary["steps"]
            raise RunError(
                f"{rd.path} is a partial run ({steps} of {exp.train.max_steps} steps) whose "
                "checkpoint is gone, so it cannot be continued, and training here would replace "
                "it. Retrain it from step 0 beside it (the same command with --runs-dir "
                f"runs-retrain and --until {steps} or more), then `python -m lib adopt <that run's "
                "directory>` puts the retrain in its place if it reproduces this history; or "
                "--force moves it aside and retrains here"
            )
        _move_aside(
            rd, f"--force: partial run without its checkpoint ({rd.summary['steps']} steps)"
        )
    return None  # train: from the checkpoint if there is one, else from step 0


def _load(trainer: Trainer, rd: RunDir, state: dict) -> None:
    """The checkpoint's state into the trainer; what torch or the trainer refuses
    is a RunError naming the file."""
    try:
        trainer.load_state_dict(state["trainer"])
    except (RuntimeError, ValueError, KeyError, TypeError) as e:
        raise RunError(
            f"{rd.ckpt} does not fit this run: {str(e).splitlines()[0]}; move it away (the run "
            "then counts as one whose checkpoint is gone, see `python -m lib adopt`)"
        ) from None


def _cut_first_evaluation(rd: RunDir) -> None:
    """A run killed within its first evaluation's writes, after the history and before the
    checkpoint: its one row (step 0), with no checkpoint and no summary, is removed, and the run
    starts again from step 0, which recomputes it bitwise. Any other history without a checkpoint is
    more than a kill can leave, and is left to the refusals of ``_prepare``."""
    if rd.ckpt.exists() or rd.status is not None:
        return
    hist = rd.history()
    if len(hist) == 1 and hist[0].get("step") == 0:
        (rd.path / "history.jsonl").unlink()
        print(
            (
                f"{rd.path}: its first evaluation was cut off before its checkpoint was written; "
                "starting again from step 0, which recomputes it"
            ),
            file=sys.stderr,
        )


def _finish(rd: RunDir, keep_weights: bool) -> None:
    """The end of a run whose summary says it is finished: ``weights.pt`` kept if asked for (from
    the checkpoint), the checkpoint deleted and any half-written file of a killed writer removed.
    Run at the end of training, and again by the next command when a kill fell after the last
    summary and before these steps."""
    if keep_weights and rd.status == "complete" and rd.ckpt.exists():
        export_weights(rd)  # from the checkpoint, so it must come before the checkpoint goes
    # AdamW's two moments make a checkpoint about three times the weights:
    # kept only while it can be resumed
    shutil.rmtree(rd.ckpt.parent, ignore_errors=True)
    remove_stale_tmp(rd.path)  # a killed earlier attempt's half-written files


def _run(
    exp: Experiment,
    runs_dir=RUNS_DIR,
    device: str = "auto",
    compile: bool = False,
    deterministic: bool = False,
    diagnostics: bool = True,
    force: bool = False,
    progress: bool = True,
    callbacks=(),
    keep_weights: bool = False,
    until: int | None = None,
    micro_batch: int | None = None,
    fast_dropout: bool = False,
) -> dict:
    """Train ``exp`` into its run directory (resuming if a checkpoint exists); return its summary.

    ``micro_batch`` and ``fast_dropout`` are execution options (``Trainer``,
    ``lib.engine.model.MaskStream``): the run's configuration and directory are the same with or
    without them, and env.json records them (each resumed segment its own).

    ``until=N`` stops after step N with status ``partial`` and keeps the checkpoint: the first N
    steps of the full run, on its schedule. Running again with a larger ``until``, or none,
    continues it exactly. A complete (or diverged) run is returned as it is, whatever ``until``
    says, unless ``force``, in which case the old directory is moved aside, never deleted. A partial
    run whose checkpoint is gone (a released prefix on a fresh clone) is refused unless ``force``
    (``lib.engine.adopt``). A finished run's checkpoint (model, optimiser and RNG state, only needed
    to resume) is deleted; ``keep_weights`` first saves the final model weights as ``weights.pt``
    (fp16) for chapters that probe the trained model.
    """
    rd = RunDir(run_path(exp, runs_dir))
    # _run is what acts on ``until``, so it checks it whichever caller it came from
    check_until(exp, until)
    dist = Dist.from_env()
    device = resolve_device(device)
    if dist.world > 1 and device.startswith("cuda"):  # torchrun: one GPU per rank
        device = f"cuda:{dist.local_rank}"
    dist = init_distributed(device)
    # Rank 0 alone looks at (and may move) the files; every rank gets its answer, so all return or
    # all train, and none waits at a barrier the others never reach.
    done = dist.broadcast(_prepare(rd, exp, until, force) if dist.is_main else None)
    if done is not None:
        return done
    # cuBLAS reads its workspace setting once per process, at its first call, so a process trains
    # with one determinism setting (a sweep passes its --deterministic to every run)
    set_deterministic(deterministic)
    # Again here, for the callers that come straight to _run (a torchrun rank, a weights recovery):
    # cheap, the corpus is loaded once per process.
    check_fits(exp, device, micro_batch, fast_dropout)
    corpus = load_corpus(exp.dataset)
    model = build_model(exp).to(device)
    # The data stream is seeded by the run seed too, so two seeds differ in initialisation and in
    # data order; the fixed validation batches depend on val_seed alone.
    batches = Batches(
        corpus,
        exp.model.block_size,
        exp.train.batch_size,
        exp.seed,
        eval_batches=exp.train.eval_batches,
        train_eval_batches=exp.train.train_eval_batches,
        val_seed=exp.train.val_seed,
        device=device,
    )
    trainer = Trainer(
        model,
        exp.train,
        batches,
        device=device,
        progress=progress and dist.is_main,
        compile=compile,
        tokens_per_sample=exp.model.block_size,
        dist=dist,
        micro_batch=micro_batch,
        masks=MaskStream(exp.seed) if fast_dropout else None,
        callbacks=[*(default_callbacks() if diagnostics else []), *callbacks],
    )
    # how it was run (not what was trained: that is config.json), so that a
    # reader can tell two machines apart
    env = {
        **environment(device, deterministic, compile, exp.train.precision, diagnostics),
        "world_size": dist.world,
        "micro_batch": trainer.micro_batch,
        "fast_dropout": fast_dropout,
    }
    wall_before = 0.0
    # Rank 0 and the others meet at two barriers, in the same order: before fit (checkpoint read)
    # and after it (summary written).
    if not dist.is_main:  # every rank resumes from rank 0's checkpoint; rank 0 alone writes
        if rd.ckpt.exists():
            _load(trainer, rd, rd.load_checkpoint(exp))
        dist.barrier()  # rank 0 may overwrite the checkpoint once every rank has read it
        trainer.fit(until)
        dist.barrier()  # rank 0 has written the summary
        return rd.summary
    if rd.ckpt.exists():
        recorded = rd.read_json("env.json") or {}  # how the earlier segments ran
        if wrong := env_problem(recorded):  # its segments are appended to below
            raise RunError(f"{rd.path / 'env.json'} {wrong}; repair it or move the run away")
        before = recorded.get("diagnostics")
        if before is not None and before != diagnostics:
            raise RunError(
                f"{rd.path} was trained with diagnostics {'on' if before else 'off'}; resume it "
                f"the same way ({'without' if before else 'with'} --no-diagnostics), or its "
                "history would mix both"
            )
        state = rd.load_checkpoint(exp)
        # The checkpoint must be this history's: its rows are the file's, and the file runs
        # past it by no more than the one evaluation a kill can leave unrecorded (refused
        # otherwise: an older segment's checkpoint put back would rewrite the rows past it).
        # That row is cut once every refusal below has passed (a refused resume leaves the run
        # as it was) and before anything else is written, so a kill from then on leaves the
        # same state as the kill that left it.
        cut = rd.interrupted_rows(state["trainer"])
        # The other generator for the rest of the run would be a third realisation,
        # neither run's: refused, as above.
        if exp.model.dropout > 0 and ("mask_stream" in state["trainer"]) != fast_dropout:
            was = "with" if "mask_stream" in state["trainer"] else "without"
            raise RunError(
                f"{rd.path} was trained {was} --fast-dropout; resume it the same way, or its "
                "dropout masks would switch generator part-way"
            )
        _load(trainer, rd, state)
        if cut:
            write_jsonl_atomic(rd.path / "history.jsonl", state["trainer"]["history"])
            print(
                (
                    f"{rd.path}: the evaluation at step {cut[0]['step']} was cut off before its "
                    f"checkpoint was written; resuming from step {state['trainer']['step']}, which "
                    "recomputes it"
                ),
                file=sys.stderr,
            )
        # deleted while the run was away: the checkpoint knows it
        if not (rd.path / "config.json").exists():
            write_json_atomic(rd.path / "config.json", exp.to_dict())
        wall_before = state["wall_s"]  # wall time accumulates over the segments of a resumed run
        # Appended, never replaced: a run resumed on another machine keeps both
        # machines' records, in order.
        env = {**recorded, "resumed": [*recorded.get("resumed", []), {"step": trainer.step, **env}]}
    else:
        # before the first step: from now on check_config protects the
        # directory, even if the run is killed
        write_json_atomic(rd.path / "config.json", exp.to_dict())
    write_json_atomic(rd.path / "env.json", env)
    recorder = _Recorder(rd, exp, unigram_floor(corpus), model.num_params(), device, wall_before)
    # last: it records what the diagnostics callbacks added to each row
    trainer.callbacks.append(recorder)
    dist.barrier()
    try:
        trainer.fit(until)
    except KeyboardInterrupt:
        _mark_interrupted(rd)
        raise
    # fit ends complete, partial or diverged; "running" here is a bug, and is
    # said rather than recorded as done
    if trainer.status == "running":
        raise RunError(f"training of {rd.path} stopped before max_steps")
    # Written once more: fit can change the status after its last evaluation (a prefix at or past
    # ``until``), and the time since then belongs in the summary.
    write_json_atomic(rd.path / "summary.json", recorder.summary(trainer))
    # a prefix keeps its checkpoint: the next call continues from it
    if trainer.status != "partial":
        _finish(rd, keep_weights)
    remove_stale_tmp(rd.path)  # a killed earlier attempt's half-written files
    dist.barrier()
    return rd.summary
