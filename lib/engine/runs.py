"""Run directories that describe themselves (STYLE rule 5).

``runs/<scale>/<impl>/<config>[/gain-<mode>-<g>]/seed<N>[_steps<S>][_<precision>][_mixer-local][_<field>-<value>...]/``
holds ``config.json`` (resolved), ``env.json``, ``history.jsonl``, ``summary.json`` and
``checkpoints/latest.pt``. Every write is atomic; a complete run is never overwritten unless forced
(and then the old directory is kept aside).

Every rule about a run directory lives here: its path from the experiment, the lock, the checks that
a run is what its config says, the checkpoint. How its files are written is lib.engine.files; what
env.json records is lib.engine.host.
Longer than the house's ~350 lines for that reason: whether a run is sound (its config, history,
summary, env.json and weights) is one function's decision, RunDir.problems, with its helpers beside
it. The lock that keeps two processes off one run is lib.engine.lock.
"""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path

from .config import Experiment, off_preset_fields, off_preset_precision, off_preset_steps
from .files import RunError, as_written, load_torch_file, save_torch_atomic
from .gain import construct
from .host import ROOT
from .thresholds import escape_step

RUNS_DIR = ROOT / "runs"  # the released runs; lib.cli refuses to retrain into them unless told to
# An adoption under way (lib.engine.adopt) marks both run directories with this file until it is
# done: a kill leaves it, and then the run is neither trained nor read until the same `adopt`
# command, run again, has finished it.
ADOPTING = "adopting.json"


def run_path(exp: Experiment, runs_dir=RUNS_DIR) -> Path:
    # The path is a function of the experiment alone, never of the machine or the command that
    # trained it, so a sweep, a chapter and `report` find one run in one place. The order of the
    # suffixes below is part of the released layout: changing it would move every released run away
    # from where its config says it is (placement_problems would then name them all).
    parts = [exp.scale, exp.impl, exp.config_name]
    if exp.gain_mode is not None:
        # :g gives one spelling per value: 2.0 is gain-weight-2, 0.25 is gain-weight-0.25.
        parts.append(f"gain-{exp.gain_mode}-{exp.gain:g}")
    # A preset run's leaf is its seed alone (seed1337); each suffix below marks
    # one departure from the preset.
    leaf = f"seed{exp.seed}"
    # a shortened or longer run never shares a directory with the preset's
    if off_preset_steps(exp):
        leaf += f"_steps{exp.train.max_steps}"
    if off_preset_precision(exp):  # e.g. the bf16 CPU prefix of the author's fp32 nanoGPT
        leaf += f"_{exp.train.precision}"
    # the local-mixer test (§7.2) never shares the attention run's directory
    if exp.model.mixer != "attention":
        leaf += f"_mixer-{exp.model.mixer}"
    # a bundle factor on its own, another depth, ...
    for key, value in sorted(off_preset_fields(exp).items()):
        # Sorted, so two commands that set the same fields in another order name the same directory.
        leaf += f"_{key}-{_spelled(value)}" if isinstance(value, float) else f"_{key}-{value}"
    return Path(runs_dir).joinpath(*parts, leaf)


def _spelled(value: float) -> str:
    """A float as a directory name spells it: ``:g`` (0.002, 1e-05: every released name)
    where that is the value, else its shortest exact form (0.0020000001), so two
    values never share a directory."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def check_runs_dir(runs_dir: str, released=RUNS_DIR) -> None:
    """A ``--runs-dir`` that names a folder: not an empty one (which reads as the current
    directory), and not a folder inside the released ``runs/`` (a run's path starts with
    its scale, so ``--runs-dir runs/cpu`` would grow a second tree there,
    ``runs/cpu/cpu/...``, that no reader looks at)."""
    from .config import ConfigError

    if not runs_dir.strip():
        raise ConfigError(f"--runs-dir is empty; give a directory (the default is {released})")
    # Resolved, so a symlink into runs/ or runs/cpu/../cpu is inside it too.
    here = Path(runs_dir).resolve()
    if here != Path(released).resolve() and here.is_relative_to(Path(released).resolve()):
        raise ConfigError(
            f"--runs-dir {runs_dir} is inside the released {released}, whose run paths start with "
            f"the scale (runs/cpu/...): give --runs-dir {released} itself, or a folder outside it"
        )


def check_run_path(path) -> None:
    """Refuse a run directory the file system cannot hold, before any of its folders is
    made: a name longer than the file system allows would fail at the innermost mkdir,
    after its parents were created."""
    from .config import ConfigError

    path = Path(path)
    # The limits of the nearest folder that exists: the one the first new folder would be made in.
    base = next(p for p in (path, *path.parents) if p.exists())
    try:
        name_max = os.pathconf(base, "PC_NAME_MAX")
    except (OSError, ValueError):  # no pathconf (or not for this file system): the common limit
        name_max = 255
    for part in path.relative_to(base).parts:
        if len(os.fsencode(part)) > name_max:
            raise ConfigError(
                f"{path}: the folder name {part[:40]}... is {len(os.fsencode(part))} bytes, longer "
                f"than the {name_max} the file system at {base} allows; choose a shorter "
                "--runs-dir"
            )


def as_experiment(d) -> Experiment | None:
    """The experiment a config.json describes, or None when it describes none."""
    # A list or a number is valid JSON but no experiment; Experiment.from_dict
    # would raise AttributeError on it.
    if not isinstance(d, dict):
        return None
    try:
        return Experiment.from_dict(d)
    # A missing field, an unknown one, or a value lib.engine.config refuses (ConfigError
    # is a ValueError): a hand-edited or foreign config.json reads as "no experiment",
    # and each caller names the file.
    except (KeyError, TypeError, ValueError):
        return None


def _differences(a: Experiment, b: Experiment) -> dict:
    """The fields (dotted) in which two experiments differ: ``{field: (a's value, b's value)}``."""

    # Flattened to dotted names (train.lr, model.n_layer), so a mismatch message names the one field
    # that differs instead of printing two whole configs.
    def flat(d, pre=""):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from flat(v, f"{pre}{k}.")
            else:
                yield f"{pre}{k}", v

    fa, fb = dict(flat(a.to_dict())), dict(flat(b.to_dict()))
    return {k: (fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)}


# What the trainer writes as a run's status (lib.engine.train): a
# summary.json with any other is unreadable.
STATUSES = ("running", "partial", "complete", "diverged")


def _number(v) -> bool:
    # bool is an int to Python, never a loss or a step to a reader
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v) -> bool:
    return _number(v) and math.isfinite(v)


def _integer(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# The summary fields the readers index (lib.book.tables, lib.engine.results) and what each
# must hold; None is allowed where the trainer writes it: no finite loss yet (a diverged
# run's best), no escape, no best step before the first evaluation, no wall time in a
# summary rebuilt from its history.
SUMMARY_FIELDS = {
    "steps": ("an integer", _integer),
    "best_val_loss": ("a finite number or null", lambda v: v is None or _finite(v)),
    "best_step": ("an integer or null", lambda v: v is None or _integer(v)),
    "escape_step": ("an integer or null", lambda v: v is None or _integer(v)),
    "unigram_floor": ("a finite number", _finite),
    "wall_s": ("a number or null", lambda v: v is None or _number(v)),
}


def env_problem(env) -> str | None:
    """What is wrong with an env.json's shape, for the readers of its segments
    (``RunDir.segments``): an object, whose ``resumed`` is a list of objects, each segment's step an
    integer and its micro-batch an integer or null."""
    if not isinstance(env, dict):
        return "is not a JSON object"
    resumed = env.get("resumed", [])
    if not isinstance(resumed, list) or not all(isinstance(seg, dict) for seg in resumed):
        return "has a 'resumed' that is not a list of objects"
    for seg in (env, *resumed):
        if not _integer(seg.get("step", 0)) or not (
            seg.get("micro_batch") is None or _integer(seg["micro_batch"])
        ):
            return f"has a segment whose step or micro_batch is not an integer ({str(seg)[:60]})"
    return None


@functools.lru_cache(maxsize=None)
def model_shapes(exp: Experiment) -> dict[str, tuple]:
    """``{name: shape}`` of the state dict ``exp``'s model has (a runtime gain's ``inner.`` names
    too), built on the meta device by the function that trains it (``gain.construct``): no
    memory, no generator drawn from."""
    import torch

    with torch.device("meta"):
        return {k: tuple(v.shape) for k, v in construct(exp).state_dict().items()}


# What the weights check found, by the file's path, modification time and size and what it was
# checked against: a reader asks problems of one run many times (each table, each verdict),
# and reading weights.pt each time would cost a torch.load. A rewritten file has another mtime
# or size, so it is checked again.
_WEIGHTS_CHECKED: dict[tuple, str | None] = {}


def _weights_problem(weights: dict, exp: Experiment) -> str | None:
    """What keeps a state dict (weights.pt's, a checkpoint's) from being ``exp``'s model: a key
    missing or extra, a tensor of another shape, a non-finite value. None where it fits."""
    import torch

    want = model_shapes(exp)
    got = {k: tuple(v.shape) if torch.is_tensor(v) else None for k, v in weights.items()}
    if got != want:
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        shaped = [
            f"{k} is {'no tensor' if got[k] is None else list(got[k])}, not {list(want[k])}"
            for k in sorted(set(got) & set(want))
            if got[k] != want[k]
        ]
        said = (
            ([f"missing {', '.join(missing[:3])}"] if missing else [])
            + ([f"unexpected {', '.join(extra[:3])}"] if extra else [])
            + shaped[:3]
        )
        return f"does not fit the model of its config.json ({'; '.join(said)})"
    if bad := next(
        (k for k, v in weights.items() if v.is_floating_point() and not torch.isfinite(v).all()),
        None,
    ):
        return f"holds non-finite values in {bad}"
    return None


# What a checkpoint's trainer state must hold for lib.engine.train.Trainer.load_state_dict.
TRAINER_STATE = (
    "model",
    "optimizer",
    "batches",
    "torch_rng",
    "step",
    "history",
    "best_val",
    "best_step",
    "train_time",
    "status",
)


# A view of one run directory: it reads, it never writes (lib.engine.experiment writes).
# The readers of runs/ (chapters, `report`, release staging) go through it, so one set of
# checks applies to all of them.
class RunDir:
    def __init__(self, path):
        self.path = Path(path)
        # One checkpoint per run, overwritten after each evaluation (the one a resume needs); it is
        # deleted when the run finishes and is never committed (.gitignore).
        self.ckpt = self.path / "checkpoints" / "latest.pt"

    def read_json(self, name: str):
        # Missing is None, not an error: a run being created has some files and not others,
        # and each caller decides what absence means. A file that exists but does not parse
        # is always an error naming it.
        p = self.path / name
        if not p.exists():
            return None
        try:
            return json.loads(p.read_text())
        except (OSError, ValueError) as e:
            raise RunError(f"{p} is not readable JSON ({e})") from e

    @property
    def summary(self) -> dict | None:
        return self.read_json("summary.json")

    @property
    def status(self) -> str | None:
        """The summary's status, None without one, and ``"unreadable"`` when summary.json cannot be
        read (never an exception: every reader asks this first; ``problems`` names the file)."""
        try:
            s = self.summary
        except RunError:
            return "unreadable"
        # A summary that parses but is no object, or whose status is none the trainer writes, is as
        # unusable as one that does not parse: every reader compares the status with these strings.
        if s is None:
            return None
        return s["status"] if isinstance(s, dict) and s.get("status") in STATUSES else "unreadable"

    def standing(self) -> str:
        """Where an interrupted run stands and how it goes on, for the line a Ctrl-C prints. True at
        any instant: the summary is written after the history and the checkpoint of its step, so
        where it meets the history's last row the checkpoint is there too; where it does not, the
        evaluation past it was being recorded, and the resume either has its checkpoint or cuts its
        row and recomputes it (``interrupted_rows``)."""
        try:
            s, hist = self.summary, self.history()
        except RunError:
            s, hist = None, []
        last = hist[-1].get("step") if hist else None
        if not isinstance(s, dict):
            if not self.ckpt.exists():
                return (
                    f"{self.path} has no checkpoint yet; run the same command again to start it "
                    "from step 0"
                )
            return (
                f"{self.path} stands at its step-0 checkpoint; run the same command again to "
                "resume from there"
            )
        if last is None or last == s.get("steps"):
            return (
                f"{self.path} stands at step {s.get('steps')} ({s.get('status')}), its last "
                "evaluation and checkpoint; run the same command again to resume from there"
            )
        return (
            f"{self.path} stands at step {s.get('steps')} ({s.get('status')}), stopped while "
            f"recording its step-{last} evaluation; run the same command again to resume from its "
            "last checkpoint (an evaluation without one is recomputed)"
        )

    def segments(self) -> list[dict]:
        """How each stretch of training was executed, first to last: ``step`` (where it
        began), ``micro_batch`` (None: the whole batch) and ``fast_dropout``, from
        env.json, which holds the first segment's settings and each resumed segment's under
        ``"resumed"``. Empty without env.json."""
        env = self.read_json("env.json") or {}
        # problems names it too, and a reader that asked it first leaves the run out
        if wrong := env_problem(env):
            raise RunError(f"{self.path / 'env.json'} {wrong}")
        # A run from before --fast-dropout existed has no such key: it drew torch's masks.
        return [
            {
                "step": seg.get("step", 0),
                "micro_batch": seg.get("micro_batch"),
                "fast_dropout": bool(seg.get("fast_dropout", False)),
            }
            for seg in ([env, *env.get("resumed", [])] if env else [])
        ]

    def history(self) -> list[dict]:
        p = self.path / "history.jsonl"
        if not p.exists():
            return []
        rows = []
        # Numbered from 1, as an editor shows them, for the error message; a blank line (the file's
        # last newline, or one left by hand) is no row.
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if line:
                try:
                    rows.append(json.loads(line))
                except ValueError as e:
                    raise RunError(f"{p} line {i} is not JSON ({e})") from e
                # [1, 2] or 5 is JSON but no evaluation: every reader asks a row
                # for its step and its loss.
                if not isinstance(rows[-1], dict):
                    raise RunError(f"{p} line {i} is not a JSON object ({line[:40]})")
        return rows

    def adoption_cut_off(self) -> str | None:
        """What to do about an adoption into or out of this directory that a kill cut
        off (``ADOPTING``), or None."""
        if not (self.path / ADOPTING).exists():
            return None
        try:
            plan = self.read_json(ADOPTING)
            retrain = plan["retrain"]
        except (RunError, TypeError, KeyError):
            retrain = "<the retrain's directory>"
        return (
            f"{self.path} is in the middle of an adoption that was cut off "
            f"({self.path / ADOPTING}); run `python -m lib adopt {retrain}` again to finish it"
        )

    def problems(self, exp: Experiment) -> list[str]:
        """Why this finished run cannot stand for ``exp`` (empty when it can): each reader of
        ``runs/`` (the chapters, ``report``) leaves such a run out and names the file. Checked:
        the three files exist and parse; ``config.json`` describes ``exp`` (not just the path);
        the history reaches the summary's step, which is the budget for a complete run; the
        summary's best loss is the history's."""
        out = []
        if wrong := self.adoption_cut_off():
            return [wrong]
        try:
            # A file that does not parse makes every other check meaningless: that
            # one problem is the answer.
            cfg, summ, hist = self.read_json("config.json"), self.summary, self.history()
            env = self.read_json("env.json")
        except RunError as e:
            return [str(e)]
        # Without env.json a run cannot say which machine and commit produced it (STYLE rule 5);
        # one of another shape would stop the readers of its segments (the paper-shape chapter,
        # the reproducibility costs).
        if env is None:
            out.append(f"{self.path / 'env.json'} is missing")
        elif wrong := env_problem(env):
            out.append(f"{self.path / 'env.json'} {wrong}")
        if cfg is None:
            out.append(f"{self.path / 'config.json'} is missing")
        # The directory's name alone does not prove what trained there: a run copied or renamed by
        # hand would pass for its neighbour. Compared as resolved experiments, as check_config does.
        elif as_experiment(cfg) != exp:
            got = as_experiment(cfg)
            diff = (
                ""
                if got is None
                else ", ".join(
                    f"{k}={v} (expected {want})" for k, (v, want) in _differences(got, exp).items()
                )
            )
            out.append(
                f"{self.path / 'config.json'} describes another experiment than its directory"
                + (f": {diff}" if diff else "")
            )
        # From here on each check needs the summary (and then the history), so
        # a missing one ends the list.
        if summ is None:
            return out + [f"{self.path / 'summary.json'} is missing"]
        if not isinstance(summ, dict) or summ.get("status") not in STATUSES:
            return out + [
                f"{self.path / 'summary.json'} has no status (one of {', '.join(STATUSES)})"
            ]
        # A field a reader indexes that is missing or of another type would stop that reader
        # (a KeyError in `report`, a TypeError in a comparison below): named here, and the
        # checks that compare values end.
        if wrong := self.summary_shape(summ):
            return out + [wrong]
        if not hist:
            return out + [f"{self.path / 'history.jsonl'} is missing or empty"]
        if wrong := self._row_types(hist):
            return out + [wrong]
        last = hist[-1].get("step")
        # Both are written at every evaluation, one after the other; for a finished run they
        # disagree only if a file was edited, truncated or copied from another run (or a kill
        # fell between the two writes), and a reader would then plot a curve that ends at
        # another step than the table's.
        if last != summ.get("steps"):
            out.append(
                f"{self.path / 'history.jsonl'} ends at step {last}, {self.path / 'summary.json'} "
                f"says {summ.get('steps')}"
            )
        out += self._history_problems(hist, summ, exp)
        # Only a complete run is checked against its budget: a partial run (a
        # prefix) stops early on purpose.
        if summ.get("status") == "complete" and summ.get("steps") != exp.train.max_steps:
            out.append(
                f"{self.path / 'summary.json'} says complete at step {summ.get('steps')} of a "
                f"{exp.train.max_steps}-step budget"
            )
        # Weights are part of the run where it has them (the chapters that probe a model load them):
        # checked here, so one function decides for every reader whether a run is sound.
        if (self.path / "weights.pt").exists() and (wrong := self.weights_problem(exp, summ)):
            out.append(wrong)
        # Every run's best loss but a diverged run's, whose best_val_loss is None
        # by design (lib.engine.experiment.run_summary): a prefix's table shows it
        # as well as a complete run's.
        if summ.get("status") != "diverged":
            # The summary's best is the same float the history holds (JSON round-trips Python floats
            # exactly), so the tolerance only forgives the last bits; any real difference means the
            # summary is from another history.
            vals = [r["val_loss"] for r in hist if r.get("val_loss") is not None]
            best = summ.get("best_val_loss")
            if (
                not vals
                or best is None
                or not math.isclose(min(vals), best, rel_tol=1e-9, abs_tol=1e-12)
            ):
                out.append(
                    f"{self.path / 'summary.json'} best_val_loss {best} is not the history's best "
                    f"{min(vals) if vals else None}"
                )
        return out

    def summary_shape(self, summ: dict) -> str | None:
        """The summary fields a reader indexes that are missing or of another type
        (``SUMMARY_FIELDS``), as one line naming the file; None where each is there."""
        if wrong := [
            f"{k} is {'missing' if k not in summ else repr(summ[k])[:20]}, not {what}"
            for k, (what, ok) in SUMMARY_FIELDS.items()
            if k not in summ or not ok(summ[k])
        ]:
            return f"{self.path / 'summary.json'}: {'; '.join(wrong)}"
        return None

    def weights(self, exp: Experiment, summ: dict) -> dict:
        """The model weights of ``weights.pt`` (as stored: fp16), checked against ``exp`` and the
        run's summary: written by this project, of ``exp`` (not a file copied from another run), the
        complete run's final step, every key and shape of ``exp``'s model, every value finite. A
        RunError naming the file otherwise."""
        path = self.path / "weights.pt"
        # weights_only loading (lib.engine.files.load_torch_file): a weights.pt arrives with a clone
        # or a download, and an unrestricted torch.load would run whatever code its pickle names.
        blob = load_torch_file(
            path, "the run is left out; python -m lib export-weights rebuilds it"
        )
        if not (
            isinstance(blob, dict)
            and {"experiment", "model"} <= set(blob)
            and isinstance(blob["model"], dict)
        ):
            raise RunError(
                f"{path} is not a weights file this project wrote (no experiment and model)"
            )
        # A weights file copied into the wrong directory would otherwise be
        # probed as the directory's run.
        if as_experiment(blob["experiment"]) != exp:
            raise RunError(
                f"{path} is not this run's: it holds another experiment than config.json"
            )
        # only the final step's weights: a chapter that probes "the trained
        # model" must not read a prefix's
        if summ.get("status") != "complete" or blob.get("step") != summ.get("steps"):
            raise RunError(
                f"{path} holds step {blob.get('step')}, but the run is {summ.get('status')} at "
                f"step {summ.get('steps')}: not the run's final weights"
            )
        weights = blob["model"]
        # The same names and shapes as the model the experiment builds, so load_state_dict (strict)
        # cannot fail later with torch's message, which does not name the file. A NaN or infinite
        # weight would load without complaint and give a NaN loss, which no probe may read.
        if wrong := _weights_problem(weights, exp):
            raise RunError(f"{path} {wrong}; the run is left out")
        return weights

    def weights_problem(self, exp: Experiment, summ: dict) -> str | None:
        """``weights``' RunError as a line (None when the file is sound),
        remembered for the file as it is now."""
        path = self.path / "weights.pt"
        st = path.stat()
        key = (
            str(path.resolve()),
            st.st_mtime_ns,
            st.st_size,
            exp.to_json(),
            summ.get("status"),
            summ.get("steps"),
        )
        if key not in _WEIGHTS_CHECKED:
            try:
                self.weights(exp, summ)
                _WEIGHTS_CHECKED[key] = None
            except RunError as e:
                _WEIGHTS_CHECKED[key] = str(e)
        return _WEIGHTS_CHECKED[key]

    def refuse_damaged(self, exp: Experiment) -> None:
        """Raise for a run that has stopped (finished, or a prefix at its stop) whose files fail
        ``problems``: it is not done, and training over it would hide what is wrong. `train` and
        `sweep` say it in the same words, and the message names every problem itself: `report` walks
        a plan's runs only, so it would not list an off-plan run."""
        if problems := self.problems(exp):
            raise RunError(
                f"{self.path} is {self.status} but damaged: {'; '.join(problems)}; every reader "
                "leaves it out; move it aside (or --force) to retrain it"
            )

    def _row_types(self, hist: list[dict]) -> str | None:
        """The first history row whose step is no integer or whose loss is no number (nor lib's
        null, a divergence row's): every comparison of the other checks would stop at it."""
        hp = self.path / "history.jsonl"
        if not all(_integer(r.get("step")) for r in hist):
            return f"{hp} has a row without an integer step"
        if bad := next(
            (r for r in hist if not (r.get("val_loss") is None or _number(r["val_loss"]))), None
        ):
            return (
                f"{hp} step {bad['step']} has val_loss {repr(bad['val_loss'])[:20]}, not a number"
            )
        return None

    def _history_problems(self, hist: list[dict], summ: dict, exp: Experiment) -> list[str]:
        """Where the history contradicts itself or the summary made from it: steps out of order, a
        non-finite loss in a run not marked diverged, a status its last row does not bear out, and
        an escape or best step that is not the history's. The trainer writes none of these; each is
        a file edited, mixed or cut by hand."""
        hp, sp, status = self.path / "history.jsonl", self.path / "summary.json", summ.get("status")
        steps = [r.get("step") for r in hist]
        out = [
            f"{hp} steps are not increasing ({a} then {b})"
            for a, b in zip(steps, steps[1:])
            if b <= a
        ][:1]
        # Only lib's divergence row may lack a finite loss: the trainer stops at a non-finite one
        # and marks it, so a NaN (or a null) anywhere else was never trained, and a mean over it
        # would be NaN or a wrong number.
        for r in hist:
            v = r.get("val_loss")
            if not r.get("diverged") and not _finite(v):
                shown = "null" if v is None else "NaN" if v != v else v
                out.append(
                    f"{hp} step {r['step']} has val_loss {shown}, but {sp} says {status}: a "
                    "non-finite loss makes a run diverged, and only its last row"
                )
                break
        diverged = bool(hist[-1].get("diverged"))
        if status == "diverged" and not diverged:
            out.append(f"{sp} says diverged, but the last row of {hp} is no divergence")
        elif status != "diverged" and any(r.get("diverged") for r in hist):
            out.append(f"{sp} says {status}, but {hp} holds a divergence row")
        # The trainer stops at a divergence, so its row is the last: one before it means
        # rows of two runs, or an edit.
        if (early := next((r["step"] for r in hist[:-1] if r.get("diverged")), None)) is not None:
            out.append(
                f"{hp} has a divergence row at step {early}, before its last row: a run stops "
                "where it diverges"
            )
        if status == "partial" and steps[-1] >= exp.train.max_steps:
            out.append(
                f"{sp} says partial at step {steps[-1]}, the end of its {exp.train.max_steps}-step "
                "budget"
            )
        floor = summ.get("unigram_floor")
        if summ.get("escape_step") != (e := escape_step(hist, floor)):
            out.append(
                f"{sp} escape_step {summ.get('escape_step')} is not the history's ({e} against its "
                f"unigram floor {floor})"
            )
        finite = [r for r in hist if _finite(r.get("val_loss"))]
        # min keeps the first of equal losses, as the trainer's strict "<" does.
        best = min(finite, key=lambda r: r["val_loss"])["step"] if finite else None
        if status != "diverged" and summ.get("best_step") != best:
            out.append(f"{sp} best_step {summ.get('best_step')} is not the history's ({best})")
        return out

    def experiment(self) -> Experiment:
        """The experiment ``config.json`` describes; a clear error if there is none."""
        cfg = self.read_json("config.json")
        exp = as_experiment(cfg)  # None for a list or a number too
        if exp is None:
            raise RunError(
                f"{self.path / 'config.json'} is "
                + ("missing: not a run directory" if cfg is None else "not a valid experiment")
            )
        return exp

    def placement_problems(self, runs_dir) -> list[str]:
        """``problems`` of the experiment this run's own config.json describes, and whether
        the run is in that experiment's directory under ``runs_dir`` (for readers that walk
        a folder rather than a plan)."""
        try:
            exp = self.experiment()
        except RunError as e:
            return [str(e)]
        # Walking a folder finds a run by its summary.json, not by its path: a run
        # trained elsewhere and copied into the wrong directory would otherwise be read
        # as the experiment its path names.
        where = run_path(exp, runs_dir)
        return self.problems(exp) + (
            []
            if where == self.path
            else [
                f"{self.path / 'config.json'} describes another experiment than its directory (it "
                f"belongs in {where})"
            ]
        )

    def check_config(self, exp: Experiment) -> None:
        """Refuse to reuse a directory that holds a different experiment."""
        existing = self.read_json("config.json")
        # Compared as resolved experiments, so a config.json written before a field existed (and so
        # holding its default) still matches.
        if existing is not None and as_experiment(existing) != exp:
            raise RunError(
                f"{self.path / 'config.json'} describes a different experiment; "
                f"use another runs directory or remove it"
            )

    # A checkpoint is trusted only for the experiment it says it belongs to: resuming another
    # experiment's optimiser and data state would produce a run that is neither.
    def load_checkpoint(self, exp: Experiment) -> dict:
        if not self.ckpt.exists():
            raise RunError(
                f"{self.ckpt} does not exist (a run deletes its checkpoint when it finishes)"
            )
        state = load_torch_file(self.ckpt, "delete it to retrain from scratch")
        if not isinstance(state, dict) or as_experiment(state.get("experiment") or {}) != exp:
            raise RunError(
                f"checkpoint {self.ckpt} belongs to a different experiment "
                f"(or another program); delete it or use another runs directory"
            )
        # Of the right experiment but not whole, or not this model's: said here, naming the
        # file, rather than by torch or a KeyError half-way through loading, or (a NaN) as a
        # divergence recorded for good.
        trainer = state.get("trainer")
        if not isinstance(trainer, dict) or (
            gone := [k for k in TRAINER_STATE if k not in trainer]
        ):
            raise RunError(
                f"{self.ckpt} has no {gone[0] if isinstance(trainer, dict) else 'trainer'} state: "
                "not a checkpoint this project wrote whole; move it away to resume from the "
                "history's start"
            )
        if not isinstance(trainer["model"], dict) or (
            wrong := _weights_problem(trainer["model"], exp)
        ):
            raise RunError(
                f"{self.ckpt} {wrong or 'holds no model state dict'}; move it away (the run then "
                "counts as one whose checkpoint is gone, see `python -m lib adopt`)"
            )
        return state

    def interrupted_rows(self, trainer_state: dict) -> list[dict]:
        """The rows of history.jsonl that a resume from this checkpoint (its ``trainer`` state)
        cuts, since it will recompute them bitwise: the one evaluation that a kill, a Ctrl-C or a
        full disk interrupted after its row was written and before its checkpoint was
        (lib.engine.experiment._Recorder writes the history, the checkpoint, then the summary, so
        the summary never takes in a row whose checkpoint is not written). Empty where the file and
        the checkpoint meet. A RunError where the checkpoint is not this history's: the rows it
        records differ from the file's, the file stops short of it, or the file runs past it by rows
        the summary has recorded or by more than one evaluation (an older segment's checkpoint, put
        back from elsewhere: resuming it would rewrite released rows)."""
        hist, hp = self.history(), self.path / "history.jsonl"
        # The checkpoint holds the history it was taken at; compared as the
        # file holds it (NaN as null).
        own, step = as_written(trainer_state["history"]), trainer_state["step"]
        # no file yet, or lost: the resumed run writes the checkpoint's rows at its next evaluation
        if not hist:
            return []
        move = (
            "the checkpoint is not this history's; move it away (the run then counts as one whose "
            "checkpoint is gone, see `python -m lib adopt`)"
        )
        if len(hist) < len(own) or hist[: len(own)] != own:
            at = next((o.get("step") for o, h in zip(own, hist) if o != h), None)
            where = (
                f"its row at step {at} differs from the file's"
                if at is not None
                else f"the file stops at step {hist[-1].get('step')}"
            )
            raise RunError(
                f"{self.ckpt} (step {step}) records another history than {hp}: {where}; {move}"
            )
        extra = hist[len(own) :]
        summ = self.summary if self.status != "unreadable" else None
        recorded = summ.get("steps") if isinstance(summ, dict) else None
        # Not recorded by the summary: it is None (a kill within the first evaluation's
        # writes) or an earlier step.
        unrecorded = (
            len(extra) == 1
            and _integer(extra[0].get("step"))
            and not (_integer(recorded) and recorded >= extra[0]["step"])
        )
        if not extra or unrecorded:
            return extra
        said = f" and {self.path / 'summary.json'} step {recorded}" if _integer(recorded) else ""
        raise RunError(
            f"{self.ckpt} is at step {step} but {hp} reaches step {hist[-1].get('step')}{said}: "
            f"{move}"
        )


def export_weights(rd: RunDir) -> None:
    """Write ``weights.pt`` from the checkpoint of a run that has just finished
    (``train --keep-weights``): the model weights in fp16 plus the experiment and the step they are
    from (~2.4 MB at `cpu`). Refused for a checkpoint that is not the run's last step: a prefix's
    weights must never pass for the run's."""
    exp = rd.experiment()
    state = rd.load_checkpoint(exp)
    # The checkpoint of a run that has just finished holds its last step; an older one (a prefix, a
    # resumed run stopped early) would give weights that no row of the history describes.
    step, status = state["trainer"]["step"], state["trainer"].get("status")
    if status != "complete" or step != exp.train.max_steps:
        raise RunError(
            f"{rd.ckpt} is step {step} of {exp.train.max_steps} ({status}): weights.pt holds a "
            "complete run's final weights; train it to the end with --keep-weights"
        )
    # fp16 halves the released file; the chapters that load it (lib.engine.results.load_model)
    # return fp32. Integer and boolean buffers are kept as they are. The optimiser state is
    # dropped: weights.pt is for reading.
    weights = {
        k: v.half() if v.is_floating_point() else v for k, v in state["trainer"]["model"].items()
    }
    save_torch_atomic(
        rd.path / "weights.pt", {"experiment": state["experiment"], "model": weights, "step": step}
    )
