"""A reader of run sets: a chapter's plan's runs at one scale, the way every
claim and every page reads them.

``RunSet.of(name)`` is the released runs of the chapter ``name`` at its stand-in (``CHAPTERS``):
their summaries and histories, the floor they are judged on, the runs left out and why, the commands
for the runs not trained yet, and its stand-in probe. A run set with a retrained ``seed`` (the
notebook ``Chapter``, which is one) also reads that seed's runs from ``runs_dir``, in place of the
released runs they repeat. It reads only; training is the engine's (``lib.engine.experiment``) and a
notebook's parameters are the book's (``lib.book.chapter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..engine import plans
from ..engine.config import CONFIGS, PAPER_SEED, Experiment, get_preset, off_preset_steps, replace
from ..engine.data import load_corpus
from ..engine.probe_reads import ProbeRun, probe_run_of, released_run
from ..engine.results import (
    FINISHED,
    as_released,
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
from . import fixed_val_batches, gain_confound


@dataclass(frozen=True)
class ChapterSpec:
    impl: str
    configs: tuple[str, ...]
    paper_scale: str  # what "auto" means on a GPU
    stand_in: str  # what "auto" means on a CPU
    plan: str  # lib.engine.plans function listing the released runs
    # stand-ins shown before the one ``stand_in`` names (they can be opened too)
    earlier: tuple[str, ...] = ()
    gains: bool = False  # the gain-confound chapter retrains gain variants
    # lib.engine.plans function of a stand-in-only probe the chapter shows
    probe: str | None = None
    # configurations the tables need at seed 1337 only (retrained only then)
    anchor_configs: tuple[str, ...] = ()
    # the paper ran this chapter's runs under forced determinism (Fig. 4)
    deterministic: bool = False


CHAPTERS = {
    # Table 2: the nanoGPT implementation, all four configurations.
    "joint_collapse": ChapterSpec("nanogpt", tuple(CONFIGS), "10M", "cpu", "joint_collapse"),
    # §5.1: the gains act on AttnOnly's FFN, the sublayer whose skip it removes
    "gain_confound": ChapterSpec(
        "residualgpt", ("AttnOnly",), "10M", "cpu", "gain_confound", gains=True
    ),
    # §5.2: the two checkpoints whose gap the evaluation noise is weighed against
    "fixed_val_batches": ChapterSpec(
        "residualgpt", plans.NOISE_PAIR, "10M", "cpu", "fixed_val_batches"
    ),
    # Phase 3 (Fig. 4) ran under forced determinism on an A100 (Fig. 4's caption, §8.3); Table 3,
    # which the chapter's first table is read against, is the original record.
    "10m_asymmetry": ChapterSpec(
        "residualgpt", tuple(CONFIGS), "10M", "cpu", "10m_asymmetry", deterministic=True
    ),
    # Table 5: NoResidual is one seed-1337 anchor. The stand-in is the one the chapter's search
    # chose (lib.claims.search_124m, a test pins it); `cpu-bpe`, the first, is shown before it
    # with its longer-budget probe.
    "124m_sweep": ChapterSpec(
        "residualgpt",
        tuple(CONFIGS),
        "124M",
        plans.STAND_IN_124M,
        "124m_sweep",
        earlier=("cpu-bpe",),
        probe="124m_longer_budget",
        anchor_configs=("NoResidual",),
    ),
}


# Not plans.PLANS itself: there a plan's defaults train seed 1337 only, and the joint collapse
# chapter shows seed 42 too (the release trains it last).
PLAN_FOR = {  # scale -> the released experiments of each chapter
    "joint_collapse": lambda scale: plans.joint_collapse(scale, seeds=(PAPER_SEED, 42)),
    "gain_confound": lambda scale: plans.gain_confound(scale),
    "fixed_val_batches": lambda scale: plans.fixed_val_batches(scale),
    "10m_asymmetry": lambda scale: plans.asymmetry_10m(scale),
    "124m_sweep": lambda scale: plans.sweep_124m(scale),
}


@dataclass
class Probe:
    """A chapter's stand-in probe (``ChapterSpec.probe``): its finished runs, the commands for those
    not finished, the seed it trains, and whether it applies at the chapter's scale."""

    summaries: pd.DataFrame
    histories: pd.DataFrame
    missing: list[str]
    seed: int
    applies: bool
    scale: str = ""  # the stand-in whose budget it extends (the first one at 124M)


@dataclass
class RunSet:
    name: str
    spec: ChapterSpec
    scale: str
    # a retrained seed read beside the released runs; None: the released runs only
    seed: int | None = None
    steps: int | None = None  # the retrained seed's budget; None: the preset's
    runs_dir: Path | None = None  # where the retrained seed was trained
    eval_batches: int | None = None  # the retrained seed's evaluation batches; None: the preset's
    # where the released runs are read: runs/ for the book; another folder laid out like it (a GPU
    # sweep's --runs-dir) for a reader computing the front page from runs of their own
    released_dir: Path = RUNS_DIR

    @classmethod
    def of(cls, name: str, released_dir=None, scale: str | None = None) -> RunSet:
        """The released runs of the chapter ``name`` at its stand-in (or at ``scale``, one of its
        earlier stand-ins), as a chapter opened with no parameters."""
        spec = CHAPTERS[name]
        if scale is not None and scale not in (spec.stand_in, *spec.earlier):
            raise ValueError(
                f"chapter {name!r} has no stand-in {scale!r}; valid: "
                f"{', '.join((spec.stand_in, *spec.earlier))}"
            )
        return cls(name, spec, scale or spec.stand_in, released_dir=Path(released_dir or RUNS_DIR))

    @property
    def stand_in(self) -> bool:
        return self.scale not in ("10M", "124M")  # cpu, cpu-bpe and cpu-bpe-ramp

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
            # Anchor configurations (the 124M stand-in's NoResidual) are retrained at seed 1337
            # only: the tables read them there alone, as Table 5 has one seed-1337 NoResidual.
            exps = [
                get_preset(self.scale, self.spec.impl, c, self.seed)
                for c in self.spec.configs
                if c not in self.spec.anchor_configs or self.seed == plans.PAPER_SEED
            ]
        return self._as_retrained(exps)

    def _as_retrained(self, exps: list[Experiment]) -> list[Experiment]:
        """The chapter's retraining options applied: its steps and its evaluation batches (each a
        field of the run's configuration, so a shortened run never takes a released run's place)."""
        # another budget is another directory (run_path adds _steps<N>): a short run
        # never replaces a released one
        exps = plans.with_steps(exps, self.steps)
        if self.eval_batches is None:
            return exps
        # both evaluation estimates take the one number; each experiment
        # once, as the plans list them
        return plans.unique(
            [
                replace(e, eval_batches=self.eval_batches, train_eval_batches=self.eval_batches)
                for e in exps
            ]
        )

    def floors(self) -> dict:
        """The chapter's floors: the unigram floor of the whole validation split, the same on the
        fixed validation batches its runs are evaluated on, and (on BPE data) the empirical
        floor, the released NoResidual seed-1337 run's best loss (the paper's own definition of
        the floor), None without it."""
        # the plain preset: a floor depends only on the data and the evaluation
        # batches, not on the configuration
        e = get_preset(self.scale, self.spec.impl)
        corpus = load_corpus(e.dataset)
        empirical = None
        # BPE (50,257 tokens) rather than characters (65): there smoothing moves the
        # analytic floor by about 0.2 nats (lib.engine.floors.unigram_floor), so the floor
        # is the one a NoResidual run reached
        if corpus.vocab_size > 256:
            nores = get_preset(self.scale, "residualgpt", "NoResidual", plans.PAPER_SEED)
            # complete and consistent only: a diverged or mismatched NoResidual is no floor,
            # and None says it is absent
            for _, rd, _ in usable(
                [(nores, RunDir(run_path(nores, self.released_dir)), "released")], ("complete",)
            ):
                # §4's reference: "indistinguishable from No Residual"
                empirical = rd.summary["best_val_loss"]
        # the preset's own fixed batches (its val_seed and eval_batches): the very
        # tokens its runs are evaluated on
        return {**unigram_floors(e), "empirical": empirical, "val_mode": e.train.val_mode}

    def floor(self) -> float:
        """The floor the chapter's tables and verdicts use, like for like: on the fixed validation
        batches (ResidualGPT), the whole split (nanoGPT's fresh random batches average over it); on
        BPE data the empirical NoResidual floor where it is released, since there the smoothing
        moves the analytic floor by more than the 0.1 margin of the verdicts."""
        f = self.floors()
        return judged_floor(f["val_mode"], f["split"], f["batches"], f["empirical"])

    # -- loading ------------------------------------------------------------------
    def _located(self):
        # Released first, then retrained: _table_runs lets a retrained run take the
        # place of its released twin.
        for exp in self.experiments():
            # its own directory, or the search probe's run of the experiment (engine.probe_reads)
            yield exp, released_run(exp, self.released_dir), "released"
        for exp in self.retrain_experiments():
            yield exp, RunDir(run_path(exp, self.runs_dir)), "retrained"

    def _table_runs(self):
        """The runs the chapter's tables and verdicts read: its plan's released runs, and a
        retrained seed of the same experiment (the preset's budget) in place of the released run
        it repeats, or beside them if it is a new seed. A retrained run of another budget (a
        smoke run) is never among them."""
        # a retrained run at the preset's budget, finished and checked against its own files
        retrained = [
            (e, rd, src)
            for e, rd, src in usable(self._located(), FINISHED)
            if src == "retrained" and off_preset_steps(e) is None
        ]
        # the same experiment: every field, the seed included
        again = {e.to_json() for e, _, _ in retrained}
        # a released run that was retrained is shown once, as retrained; a new seed
        # simply joins the released ones
        return [
            (e, rd, src)
            for e, rd, src in self._located()
            if src == "released" and e.to_json() not in again
        ] + retrained

    def summaries(self) -> pd.DataFrame:
        """One row per run the chapter's tables and verdicts use (``_table_runs``): complete,
        checked against its own files, with a finite best loss (``pooled``);
        ``left_out_lines`` names every run left out."""
        return pooled(summaries_of(self._table_runs(), floor=self.floor()))

    def histories(self) -> pd.DataFrame:
        """Every evaluation of the runs the chapter shows (long format): the table runs, and a smoke
        retrain too, labelled by its ``source`` and ``budget``, for the figures that draw curves."""
        return histories_of([*self._table_runs(), *self._smoke_runs()])

    def _smoke_runs(self):
        # retrained at another budget (a steps parameter): shown apart, never pooled
        return [
            (e, rd, src)
            for e, rd, src in self._located()
            if src == "retrained" and off_preset_steps(e) is not None
        ]

    def smoke_summaries(self) -> pd.DataFrame:
        """The finished retrained runs shorter (or longer) than the preset's
        budget: shown apart, never pooled."""
        return summaries_of(self._smoke_runs(), floor=self.floor())

    def missing(self) -> list[str]:
        """Commands that produce the released runs this chapter shows but that are not finished."""
        # released only: a retrained seed is the reader's to train, not a gap in the release
        return unfinished((e, rd, src) for e, rd, src in self._located() if src == "released")

    def probe_run_lines(self) -> list[str]:
        """The released runs read from another directory, the search probe's run of the same
        experiment (``lib.engine.probe_reads``), each as ``its own path: read from the probe's``."""
        return [
            rd.read_line(relative=True)
            for e, rd, src in self._located()
            if src == "released" and isinstance(rd, ProbeRun)
        ]

    def both_ways_lines(self) -> list[str]:
        """The released runs trained both ways, in their own directory and as a search probe's
        run: the own is read, and the two bests are set side by side (another host's arithmetic,
        the same experiment)."""
        out = []
        for e, rd, src in self._located():
            probe = probe_run_of(e) if src == "released" and not isinstance(rd, ProbeRun) else None
            if probe is None or rd.status != "complete":
                continue
            other = ProbeRun(self.released_dir, probe, e)
            if other.status == "complete" and not other.problems(e):
                out.append(
                    f"{e.config_name} seed {e.seed}: best {rd.summary['best_val_loss']:.3f} "
                    f"(read), {other.summary['best_val_loss']:.3f} as the probe's run"
                )
        return out

    def left_out_lines(self) -> list[str]:
        """The finished runs left out of the tables and verdicts, each with why (a file that
        does not match, a diverged run)."""
        return left_out([*self._table_runs(), *self._smoke_runs()])

    def probe(self) -> Probe:
        """The chapter's stand-in probe (``ChapterSpec.probe``), released runs only, printing
        the command for each run not yet finished; empty (``applies`` False) at the
        paper's scale or without a probe."""
        # No probe, or a scale the probe's plan does not have: at the paper's scale the budget is
        # the paper's own, and the 124M chapter's probe extends its first stand-in (`cpu-bpe`),
        # not the one its search chose.
        scales = plans.PLANS[self.spec.probe].scales if self.spec.probe is not None else ()
        if self.scale not in scales:
            if self.spec.probe is not None:
                own = "the budget is the paper's own; " if not self.stand_in else ""
                print(
                    f"At {self.scale} {own}the longer-budget probe belongs to the "
                    f"{', '.join(scales)} stand-in."
                )
            # empty frames with their columns: the cells that read a probe draw
            # nothing instead of failing
            return Probe(summaries_of([]), histories_of([]), [], plans.PAPER_SEED, applies=False)
        # released runs only: a chapter never retrains its probe, which ``sweep --plan`` trains
        located = [
            (e, RunDir(run_path(e, self.released_dir)), "released")
            for e in plans.PLANS[self.spec.probe](self.scale)
        ]
        missing = unfinished(located)
        for cmd in missing:
            print(f"not run yet: {cmd}")
        for line in left_out(located):
            print(line)
        # pooled and judged on the chapter's floor, as the chapter's own runs
        return Probe(
            pooled(summaries_of(located, floor=self.floor())),
            histories_of(located),
            missing,
            plans.PAPER_SEED,
            applies=True,
            scale=self.scale,
        )

    def gain_curves(self) -> pd.DataFrame:
        """``claims.gain_confound.gain_curves`` of the released seed-1337
        sweep, and of a retrained seed."""
        # the retrained seed with this chapter's retraining options, so its
        # directory is the one retrain() wrote
        retrained = (
            None
            if self.seed is None
            else self._as_retrained([get_preset(self.scale, "residualgpt", "AttnOnly", self.seed)])[
                0
            ]
        )
        base = get_preset(self.scale, "residualgpt", "AttnOnly", PAPER_SEED)
        return gain_confound.gain_curves(
            base, retrained, self.runs_dir, released_dir=self.released_dir
        )

    def gain_seeds(self) -> dict:
        """``claims.gain_confound.other_seeds``: the released runtime gains at seeds 42 and
        123, on this chapter's floor."""
        return gain_confound.other_seeds(
            get_preset(self.scale, "residualgpt", "AttnOnly", PAPER_SEED),
            self.floor(),
            self.released_dir,
        )

    def val_noise(self, n_random: int | None = None) -> pd.DataFrame:
        """``claims.fixed_val_batches.val_noise`` of every checkpoint this chapter shows (its plan's
        released runs and a retrained seed); ``n_random`` None: its ``NOISE_BATCHES``."""
        # every located run, a smoke retrain too: val_noise labels it and the chapter shows it apart
        return fixed_val_batches.val_noise(
            self._located(), NOISE_BATCHES if n_random is None else n_random
        )

    def paper_scale_summaries(self) -> pd.DataFrame | None:
        """Released runs at the paper scale of this chapter (trained on a GPU); None (and a line
        saying so) when there are none."""
        # released runs at the paper's scale: until GPU runs are released there
        # are none, and the cell says so
        df = released(PLAN_FOR[self.spec.plan](self.spec.paper_scale), self.released_dir)
        if df.empty:
            # a CPU's runs at the same shape belong to other plans: "no run" names the sweep, so
            # that it is not read as no run at that shape at all
            print(
                f"The paper's own {self.spec.paper_scale} sweep for this chapter, on a GPU: no run "
                "released yet. Runs trained at this shape on a CPU belong to other plans."
            )
            return None
        return df


def released(exps, released_dir=None) -> pd.DataFrame:
    # no floor given: escape steps as each run recorded them, against its own split's unigram floor
    return summaries_of(as_released(exps, released_dir))
