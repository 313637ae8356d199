"""What every chapter does: validate its parameters, (re)train on request, load runs, tabulate.

A chapter's first code cell holds its papermill parameters; its second calls
``Chapter.open(name, globals())``, which refuses unknown parameter names and
bad values with a message naming the valid ones and prints the scale banner; it trains nothing. The next
cell calls ``Chapter.retrain`` when a seed is given.

Longer than the house's ~350 lines because a chapter's parameters are many and each is checked with a
message naming the valid values (``open``), and retraining a seed must resolve the same experiments the
released runs were trained from (``retrain_experiments``); the one-chapter computations live in
``lib.claims`` and the tables in ``lib.book.tables``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from ..engine import plans
from ..engine.config import (
    CONFIGS,
    PAPER_SEED,
    STAND_IN_FOR,
    ConfigError,
    Experiment,
    check_seed,
    get_preset,
    off_preset_steps,
    replace,
)
from ..engine.data import load_corpus
from ..engine.host import ROOT
from ..engine.results import (
    FINISHED,
    histories_of,
    left_out,
    pooled,
    summaries_of,
    unfinished,
    unigram_floors,
    usable,
)
from ..engine.runs import RUNS_DIR, RunDir, run_path
from ..engine.thresholds import NOISE_BATCHES, judged_floor
from ..engine.train import Callback
from .tables import show_tables_as_the_book_does, variant_label

# Every training chapter's parameters cell: these names and defaults, overridden by papermill's -p NAME VALUE.
# A name that is not here is refused (``Chapter.open``), never ignored.
PARAMETERS = {"scale": "auto", "seed": None, "steps": None, "runs_dir": None, "device": "auto", "compile": False,
              "eval_batches": None}
RETRAIN_DIR = ROOT / "runs-retrain"  # where chapters train; never the released runs/
_IPYTHON_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "open"}  # IPython's own globals, never a parameter


# Its own class, so the tests can tell a refused parameter from any other ValueError.
class ParameterError(ValueError):
    pass


class EvalPrinter(Callback):
    """One line per evaluation of a retrain, so a notebook shows its progress in the cell output."""

    def __init__(self, label: str):
        self.label = label

    def on_history(self, trainer, step):
        r = trainer.history[-1]
        # None: the row a non-finite training loss appends; the run has diverged and stops there
        val = r.get("val_loss")
        # flushed: each line shows in the cell as it happens, not when the cell ends
        print(f"{self.label}, step {step:,} of {trainer.cfg.max_steps:,}: "
              + (f"val loss {val:.4f}" if val is not None else "diverged"), flush=True)


def check_runs_dir_parameter(value) -> None:
    """A chapter's ``runs_dir``: None, or a folder's path as a string (or a Path). papermill's ``-p runs_dir 5`` gives
    an int, which Path() would meet with a TypeError naming no parameter."""
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise ParameterError(f"runs_dir must be None or a folder's path (a string), got {value!r}")


@dataclass(frozen=True)
class ChapterSpec:
    impl: str
    configs: tuple[str, ...]
    paper_scale: str                 # what "auto" means on a GPU
    stand_in: str                    # what "auto" means on a CPU
    plan: str                        # lib.engine.plans function listing the released runs
    gains: bool = False              # the gain-confound chapter retrains gain variants
    probe: str | None = None         # lib.engine.plans function of a stand-in-only probe the chapter shows
    anchor_configs: tuple[str, ...] = ()  # configurations the tables need at seed 1337 only (retrained only then)
    deterministic: bool = False      # the paper ran this chapter's runs under forced determinism (Fig. 4)


CHAPTERS = {
    # Table 2: the nanoGPT implementation, all four configurations.
    "joint_collapse": ChapterSpec("nanogpt", tuple(CONFIGS), "10M", "cpu", "joint_collapse"),
    # §5.1: the gains act on AttnOnly's FFN, the sublayer whose skip it removes
    "gain_confound": ChapterSpec("residualgpt", ("AttnOnly",), "10M", "cpu", "gain_confound", gains=True),
    # §5.2: the two checkpoints whose gap the evaluation noise is weighed against
    "fixed_val_batches": ChapterSpec("residualgpt", plans.NOISE_PAIR, "10M", "cpu", "fixed_val_batches"),
    # Phase 3 (Fig. 4) ran under forced determinism on an A100 (Fig. 4's caption, §8.3); Table 3, which the
    # chapter's first table is read against, is the original record.
    "10m_asymmetry": ChapterSpec("residualgpt", tuple(CONFIGS), "10M", "cpu", "10m_asymmetry", deterministic=True),
    # Table 5: NoResidual is one seed-1337 anchor.
    "124m_sweep": ChapterSpec("residualgpt", tuple(CONFIGS), "124M", "cpu-bpe", "124m_sweep",
                              probe="124m_longer_budget", anchor_configs=("NoResidual",)),
}


# Not plans.PLANS itself: there a plan's defaults train seed 1337 only, and the joint collapse chapter shows
# seed 42 too (the release trains it last).
PLAN_FOR = {  # scale -> the released experiments of each chapter
    "joint_collapse": lambda scale: plans.joint_collapse(scale, seeds=(PAPER_SEED, 42)),
    "gain_confound": lambda scale: plans.gain_confound(scale),
    "fixed_val_batches": lambda scale: plans.fixed_val_batches(scale),
    "10m_asymmetry": lambda scale: plans.asymmetry_10m(scale),
    "124m_sweep": lambda scale: plans.sweep_124m(scale),
}


def user_names(namespace: dict) -> dict:
    """The parameter-like variables a notebook (or papermill) defined: scalars and strings,
    not modules, functions, imported constants or IPython's own names."""
    # papermill injects the parameters as plain assignments in a cell of their own, so they sit in the globals
    # beside everything else; "_" names are IPython's output history (_, __, _i1). A Path is a runs_dir.
    return {k: v for k, v in namespace.items()
            if not k.startswith("_") and k not in _IPYTHON_NAMES
            and isinstance(v, (type(None), str, int, float, bool, Path))}


@dataclass
class Probe:
    """A chapter's stand-in probe (``ChapterSpec.probe``): its finished runs, the commands for those not
    finished, the seed it trains, and whether it applies at the chapter's scale."""
    summaries: pd.DataFrame
    histories: pd.DataFrame
    missing: list[str]
    seed: int
    applies: bool


@dataclass
class Chapter:
    name: str
    spec: ChapterSpec
    scale: str
    seed: int | None  # None: the released runs only
    steps: int | None  # None: the preset's budget
    runs_dir: Path  # where a retrain writes; released runs are read from runs/
    device: str  # auto | cpu | cuda
    compile: bool = False
    eval_batches: int | None = None  # a retrain's evaluation batches (validation and train estimate); None: preset's
    # where the chapter reads the runs it shows: runs/ for the book; another folder laid out like it (a GPU sweep's
    # --runs-dir) for a reader computing the front page from runs of their own
    released_dir: Path = RUNS_DIR

    @classmethod
    def open(cls, name: str, namespace: dict, announce: bool = True, released_dir=None) -> "Chapter":
        if name not in CHAPTERS:
            raise ParameterError(f"unknown chapter {name!r}; valid: {', '.join(CHAPTERS)}")
        spec = CHAPTERS[name]
        given = user_names(namespace)
        # A misspelt name (seeds=7) would otherwise show the released runs as if nothing had been asked for.
        unknown = sorted(set(given) - set(PARAMETERS))
        if unknown:
            raise ParameterError(f"unknown parameter(s) {', '.join(unknown)}; valid: {', '.join(PARAMETERS)}")
        p = {**PARAMETERS, **given}  # the defaults, then what the cell gave
        # "auto", or one of this chapter's two scales: the 10M chapter cannot be opened at 124M
        valid_scales = ("auto", spec.stand_in, spec.paper_scale)
        if p["scale"] not in valid_scales:
            raise ParameterError(f"scale {p['scale']!r} is not valid for this chapter; valid: "
                                 f"{', '.join(valid_scales)}")
        if p["seed"] is not None:  # the command line's rule (lib.engine.config.check_seed)
            try:
                check_seed(p["seed"])
            except ConfigError as e:
                raise ParameterError(f"{e} (or None)") from None  # the message is the whole story
        # bool is refused on its own: True is an int to Python, and steps=True would mean one step
        if p["steps"] is not None and (not isinstance(p["steps"], int) or isinstance(p["steps"], bool)
                                       or p["steps"] < 1):
            raise ParameterError(f"steps must be None or a positive integer, got {p['steps']!r}")
        # steps and eval_batches set how a retrain runs; without a seed nothing is trained, and the released runs
        # never change
        if p["steps"] is not None and p["seed"] is None:
            raise ParameterError("steps applies to retraining; give a seed too (e.g. -p seed 7 -p steps 20)")
        n = p["eval_batches"]
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise ParameterError(f"eval_batches must be None or a positive integer, got {n!r}")
        if n is not None and p["seed"] is None:
            raise ParameterError("eval_batches applies to retraining; give a seed too (e.g. -p seed 7 -p steps 20 "
                                 "-p eval_batches 2)")
        if p["device"] not in ("auto", "cpu", "cuda"):  # the choices the parameters cell documents
            raise ParameterError(f"device {p['device']!r}; valid: auto, cpu, cuda")
        if not isinstance(p["compile"], bool):  # a string "False" would be true
            raise ParameterError(f"compile must be True or False, got {p['compile']!r}")
        # "auto" shows the released stand-in runs wherever the book is built; it means the paper's scale
        # only for a retrain (a seed given) on a machine with CUDA.
        cuda = torch.cuda.is_available() and p["device"] != "cpu"
        paper = cuda and p["seed"] is not None
        scale = p["scale"] if p["scale"] != "auto" else (spec.paper_scale if paper else spec.stand_in)
        check_runs_dir_parameter(p["runs_dir"])
        runs_dir = Path(p["runs_dir"] or RETRAIN_DIR)  # the default is runs-retrain/
        # Resolved, so runs/ given by a relative path or through a link is caught too: every table and test reads the
        # released runs, and a finished run is never overwritten (STYLE rule 5).
        if runs_dir.resolve().is_relative_to(RUNS_DIR.resolve()):
            raise ParameterError(f"runs_dir {p['runs_dir']!r} is in the released runs/, which a chapter never writes; "
                                 f"valid: any other directory (default {RETRAIN_DIR.relative_to(ROOT)}/)")
        # None is runs/, looked up when called (not bound when this was defined)
        ch = cls(name, spec, scale, p["seed"], p["steps"], runs_dir, p["device"], p["compile"], p["eval_batches"],
                 Path(released_dir or RUNS_DIR))
        show_tables_as_the_book_does()  # every DataFrame shown after this cell reads as frame_html writes it
        if announce:
            print(ch.banner())
        return ch

    # -- what the chapter shows ------------------------------------------------
    @property
    def stand_in(self) -> bool:
        return self.scale not in ("10M", "124M")  # cpu and cpu-bpe

    def banner(self) -> str:
        e = get_preset(self.scale, self.spec.impl)
        # the preset's shape, so a reader sees how far a stand-in is from the paper's model
        shape = (f"{e.model.n_layer} layers x {e.model.n_embd} wide, block {e.model.block_size}, "
                 f"batch {e.train.batch_size}, {e.train.max_steps:,} steps, data {e.dataset}")
        # Said on every stand-in page, in capitals: its losses must never be read as the paper's (lib.engine.config).
        if self.stand_in:
            text = (f"Scale: {self.scale!r}, a CPU STAND-IN for the paper's {STAND_IN_FOR[self.scale]} "
                    f"({shape}). Its losses are not the paper's scale; compare orderings and gaps, "
                    f"not absolute values.")
        else:
            text = f"Scale: {self.scale!r}, the paper's scale ({shape})."
        if self.seed is not None:
            text += (f"\nRetraining seed {self.seed}" + (f" for {self.steps} steps" if self.steps else "")
                     + (f", {self.eval_batches} batches an evaluation" if self.eval_batches else "")
                     + f" into {self.runs_dir} (released runs are never overwritten).")
        return text

    def experiments(self) -> list[Experiment]:
        """The released runs this chapter shows, at this chapter's scale."""
        return PLAN_FOR[self.spec.plan](self.scale)

    def retrain_experiments(self) -> list[Experiment]:
        if self.seed is None:
            return []
        # the gain chapter retrains its whole sweep for the seed: both modes, every gain
        if self.spec.gains:
            exps = plans.gain_confound(self.scale, self.seed)
        else:
            # Anchor configurations (the 124M stand-in's NoResidual) are retrained at seed 1337 only: the tables read
            # them there alone, as Table 5 has one seed-1337 NoResidual.
            exps = [get_preset(self.scale, self.spec.impl, c, self.seed) for c in self.spec.configs
                    if c not in self.spec.anchor_configs or self.seed == plans.PAPER_SEED]
        return self._as_retrained(exps)

    def _as_retrained(self, exps: list[Experiment]) -> list[Experiment]:
        """The chapter's retraining options applied: its steps and its evaluation batches (each a field of the
        run's configuration, so a shortened run never takes a released run's place)."""
        # another budget is another directory (run_path adds _steps<N>): a short run never replaces a released one
        exps = plans.with_steps(exps, self.steps)
        if self.eval_batches is None:
            return exps
        # both evaluation estimates take the one number; each experiment once, as the plans list them
        return plans.unique([replace(e, eval_batches=self.eval_batches, train_eval_batches=self.eval_batches)
                             for e in exps])

    def retrain(self, progress: bool = True) -> list[dict]:
        """Train (or resume) the requested seed for every configuration the chapter's tables need, with a
        progress bar and one printed line per evaluation; deterministic where the paper's runs were."""
        from ..engine.experiment import run
        out = []
        for e in self.retrain_experiments():
            print(f"training {variant_label(e)} {e.config_name} seed {e.seed} at {e.scale} into {self.runs_dir}",
                  flush=True)
            # keep_weights: the chapters that read a checkpoint (the fixed-batch noise) can read a retrained seed's too
            out.append(run(e, runs_dir=self.runs_dir, device=self.device, progress=progress, keep_weights=True,
                           compile=self.compile, deterministic=self.spec.deterministic,
                           callbacks=[EvalPrinter(f"{e.config_name} seed {e.seed}")]))
        # A smoke run is listed here and drawn, labelled, in the curves; every table and verdict leaves it out.
        if self.steps is not None and any(off_preset_steps(e) for e in self.retrain_experiments()):
            # imported only when there is a smoke run to display
            from IPython.display import display
            print(f"These {self.steps}-step runs are not the preset's budget: they are shown here and labelled in "
                  f"the curve plots, and left out of every table and verdict below.")
            cols = ["config", "seed", "steps", "best_val_loss", "escape_step", "status", "path"]
            # their own numbers and paths, since no table below shows them
            display(self.smoke_summaries()[cols])
        return out

    def floors(self) -> dict:
        """The chapter's floors: the unigram floor of the whole validation split, the same on the fixed
        validation batches its runs are evaluated on, and (on BPE data) the empirical floor, the released
        NoResidual seed-1337 run's best loss (the paper's own definition of the floor), None without it."""
        # the plain preset: a floor depends only on the data and the evaluation batches, not on the configuration
        e = get_preset(self.scale, self.spec.impl)
        corpus = load_corpus(e.dataset)
        empirical = None
        # BPE (50,257 tokens) rather than characters (65): there smoothing moves the analytic floor by about 0.2 nats
        # (lib.engine.floors.unigram_floor), so the floor is the one a NoResidual run reached
        if corpus.vocab_size > 256:
            nores = get_preset(self.scale, "residualgpt", "NoResidual", plans.PAPER_SEED)
            # complete and consistent only: a diverged or mismatched NoResidual is no floor, and None says it is absent
            for _, rd, _ in usable([(nores, RunDir(run_path(nores, self.released_dir)), "released")],
                                   ("complete",)):
                empirical = rd.summary["best_val_loss"]  # §4's reference: "indistinguishable from No Residual"
        # the preset's own fixed batches (its val_seed and eval_batches): the very tokens its runs are evaluated on
        return {**unigram_floors(e), "empirical": empirical, "val_mode": e.train.val_mode}

    def floor(self) -> float:
        """The floor the chapter's tables and verdicts use, like for like: on the fixed validation batches
        (ResidualGPT), the whole split (nanoGPT's fresh random batches average over it); on BPE data the
        empirical NoResidual floor where it is released, since there the smoothing moves the analytic floor
        by more than the 0.1 margin of the verdicts."""
        f = self.floors()
        return judged_floor(f["val_mode"], f["split"], f["batches"], f["empirical"])

    def floor_lines(self) -> dict[str, float]:
        """The floor lines the chapter's figures draw (``plots.floor_lines``): the floor its verdicts use first,
        named for what it is; where that is the empirical NoResidual run, the unigram floor beside it."""
        f, used = self.floors(), self.floor()
        # the unigram floor like for like, as in floor()
        unigram = judged_floor(f["val_mode"], f["split"], f["batches"])
        # the empirical floor is drawn first and named: on BPE data it must not be mistaken for the unigram floor
        if used == f["empirical"]:
            return {f"NoResidual seed {PAPER_SEED} (the floor used)": used, _unigram_name(unigram, f): unigram}
        return {_unigram_name(used, f): used}

    def floor_note(self) -> str:
        f, used = self.floors(), self.floor()
        text = (f"unigram floor of the {self.scale} data (lib.engine.data): {f['split']:.4f} nats/token on the whole "
                f"validation split, {f['batches']:.4f} on the fixed validation batches")
        if f["empirical"] is not None:
            text += f", {f['empirical']:.4f} reached by the NoResidual seed-{PAPER_SEED} run (the empirical floor)"
        # the note names which floor the verdicts use, so a reader can check the tables against the figure's line
        which = ("the empirical floor" if used == f["empirical"] else
                 "the fixed batches' floor" if used == f["batches"] else "the whole split's floor (random batches)")
        return text + f". Tables and verdicts below use {which}: {used:.4f}."

    # -- loading ------------------------------------------------------------------
    def _located(self):
        # Released first, then retrained: _table_runs lets a retrained run take the place of its released twin.
        for exp in self.experiments():
            yield exp, RunDir(run_path(exp, self.released_dir)), "released"
        for exp in self.retrain_experiments():
            yield exp, RunDir(run_path(exp, self.runs_dir)), "retrained"

    def _table_runs(self):
        """The runs the chapter's tables and verdicts read: its plan's released runs, and a retrained seed of
        the same experiment (the preset's budget) in place of the released run it repeats, or beside them if
        it is a new seed. A retrained run of another budget (a smoke run) is never among them."""
        # a retrained run at the preset's budget, finished and checked against its own files
        retrained = [(e, rd, src) for e, rd, src in usable(self._located(), FINISHED)
                     if src == "retrained" and off_preset_steps(e) is None]
        again = {e.to_json() for e, _, _ in retrained}  # the same experiment: every field, the seed included
        # a released run that was retrained is shown once, as retrained; a new seed simply joins the released ones
        return [(e, rd, src) for e, rd, src in self._located()
                if src == "released" and e.to_json() not in again] + retrained

    def summaries(self) -> pd.DataFrame:
        """One row per run the chapter's tables and verdicts use (``_table_runs``): complete, checked against
        its own files, with a finite best loss (``pooled``); ``report_missing`` names every run left out."""
        return pooled(summaries_of(self._table_runs(), floor=self.floor()))

    def histories(self) -> pd.DataFrame:
        """Every evaluation of the runs the chapter shows (long format): the table runs, and a smoke retrain
        too, labelled by its ``source`` and ``budget``, for the figures that draw curves."""
        return histories_of([*self._table_runs(), *self._smoke_runs()])

    def _smoke_runs(self):
        # retrained at another budget (a steps parameter): shown apart, never pooled
        return [(e, rd, src) for e, rd, src in self._located()
                if src == "retrained" and off_preset_steps(e) is not None]

    def smoke_summaries(self) -> pd.DataFrame:
        """The finished retrained runs shorter (or longer) than the preset's budget: shown apart, never pooled."""
        return summaries_of(self._smoke_runs(), floor=self.floor())

    def probe(self) -> Probe:
        """The chapter's stand-in probe (``ChapterSpec.probe``), released runs only, printing the command
        for each run not yet finished; empty (``applies`` False) at the paper's scale or without a probe."""
        # No probe, or the paper's scale: there the budget is the paper's own, and a longer one has nothing to ask.
        if self.spec.probe is None or not self.stand_in:
            if self.spec.probe is not None:
                print(f"At {self.scale} the budget is the paper's own; the longer-budget probe belongs to the "
                      f"{self.spec.stand_in} stand-in.")
            # empty frames with their columns: the cells that read a probe draw nothing instead of failing
            return Probe(summaries_of([]), histories_of([]), [], plans.PAPER_SEED, applies=False)
        # released runs only: a chapter never retrains its probe, which ``sweep --plan`` trains
        located = [(e, RunDir(run_path(e, self.released_dir)), "released")
                   for e in plans.PLANS[self.spec.probe](self.scale)]
        missing = unfinished(located)
        for cmd in missing:
            print(f"not run yet: {cmd}")
        for line in left_out(located):
            print(line)
        # pooled and judged on the chapter's floor, as the chapter's own runs
        return Probe(pooled(summaries_of(located, floor=self.floor())), histories_of(located), missing,
                     plans.PAPER_SEED, applies=True)

    def missing(self) -> list[str]:
        """Commands that produce the released runs this chapter shows but that are not finished."""
        # released only: a retrained seed is the reader's to train, not a gap in the release
        return unfinished((e, rd, src) for e, rd, src in self._located() if src == "released")

    def gain_curves(self) -> pd.DataFrame:
        """``claims.gain_confound.gain_curves`` of the released seed-1337 sweep, and of a retrained seed."""
        from ..claims.gain_confound import gain_curves
        # the retrained seed with this chapter's retraining options, so its directory is the one retrain() wrote
        retrained = (None if self.seed is None else
                     self._as_retrained([get_preset(self.scale, "residualgpt", "AttnOnly", self.seed)])[0])
        return gain_curves(get_preset(self.scale, "residualgpt", "AttnOnly", PAPER_SEED), retrained, self.runs_dir,
                           released_dir=self.released_dir)

    def gain_seeds(self) -> dict:
        """``claims.gain_confound.other_seeds``: the released runtime gains at seeds 42 and 123, on this chapter's
        floor."""
        from ..claims.gain_confound import other_seeds
        return other_seeds(get_preset(self.scale, "residualgpt", "AttnOnly", PAPER_SEED), self.floor(),
                           self.released_dir)

    def val_noise(self, n_random: int | None = None) -> pd.DataFrame:
        """``claims.fixed_val_batches.val_noise`` of every checkpoint this chapter shows (its plan's released
        runs and a retrained seed); ``n_random`` None: its ``NOISE_BATCHES``."""
        # every located run, a smoke retrain too: val_noise labels it and the chapter shows it apart
        from ..claims.fixed_val_batches import val_noise
        return val_noise(self._located(), NOISE_BATCHES if n_random is None else n_random)

    def paper_scale_summaries(self) -> pd.DataFrame | None:
        """Released runs at the paper scale of this chapter (trained on a GPU); None (and a line
        saying so) when there are none."""
        # released runs at the paper's scale: until GPU runs are released there are none, and the cell says so
        df = released(PLAN_FOR[self.spec.plan](self.spec.paper_scale), self.released_dir)
        if df.empty:
            print(f"No complete {self.spec.paper_scale} run of this chapter's plan is released yet in "
                  f"runs/{self.spec.paper_scale}/.")
            return None
        return df

    def report_missing(self) -> None:
        """Which of the chapter's runs are missing (with the commands that train them), and which finished
        runs are left out of its tables and verdicts, and why (a file that does not match, a diverged run)."""
        # missing and left out are reported apart: a run not trained is not the same as a run that cannot be used
        cmds, out = self.missing(), left_out([*self._table_runs(), *self._smoke_runs()])
        if not cmds:
            print(f"All {len(self.experiments())} runs this chapter shows are present in runs/.")
        else:
            print(f"{len(cmds)} of {len(self.experiments())} runs this chapter shows are missing; "
                  f"they are left out of every table and plot below. To produce them:")
            for c in cmds:
                print("  " + c)
        if out:
            print(f"{len(out)} finished run(s) left out of the tables and verdicts below:")
            for line in out:
                print("  " + line)


def released(exps, released_dir=None) -> pd.DataFrame:
    # no floor given: escape steps as each run recorded them, against its own split's unigram floor
    return summaries_of((e, RunDir(run_path(e, released_dir or RUNS_DIR)), "released") for e in exps)


def _unigram_name(value: float, floors: dict) -> str:
    """A unigram floor's name with the tokens it is the floor of, as ``Chapter.floor_note`` names them: one name and
    one value for each floor on a page (issue 56)."""
    return ("unigram floor, fixed validation batches" if value == floors["batches"] else
            "unigram floor, whole validation split" if value == floors["split"] else "unigram floor")
