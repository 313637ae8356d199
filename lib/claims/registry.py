"""Every claim the book judges, on its front page or in one chapter only, as one list (``CLAIMS``): each entry names
the claim, the paper's reference, the ``lib.claims`` function that decides it, what that function reads
(``Entry.reads``, from the runs through one ``Evidence``) and how the card prints it (``Entry.row``). The front
page's card (``scorecard.scorecard``), the book's own findings (``findings.own_findings``), the chapters' verdict
cells (``claims_at``) and the pinned-verdicts test all iterate this list, so a claim is added by adding its entry
(and its row, written beside it). Longer than the house's ~350 lines: one short row function per claim, each beside
its entry, so that reading a claim means reading one place.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from ..engine import gain, plans, results
from ..engine.config import PAPER_SEED, get_preset
from ..engine.thresholds import ABSORB_STEP, ESCAPE_MARGIN, NOISE_BATCHES
from . import (
    asymmetry,
    bundle,
    fixed_val_batches,
    gain_confound,
    growth_10m,
    paper_shape,
    schedule_10m,
    schedule_seeds,
)
from . import joint_collapse as collapse  # joint_collapse is a row here
from . import mechanism as routing  # and mechanism one of the book's own findings
from .paper import mixer_rule, paper_value, paper_values
from .rows import IMPL_NAMES, Row, paper_text, prefix_evidence, prefix_partial, prefix_rows, prefix_whole
from .runset import CHAPTERS, RunSet
from .verdicts import Claim

# Which list a claim is printed in: the paper's claims (the front page's card), the book's own findings (What holds),
# or only its chapter's verdict cell.
CARDS = ("paper", "own", "chapter")


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One claim: ``name`` (what its card row's claim opens with), ``ref`` (the paper's section or table),
    ``decide`` (the ``lib.claims`` function), ``reads`` (its arguments, read from an ``Evidence``), ``row`` (the
    card's row, from the decided Claim and the same Evidence; None for a claim only its chapter prints),
    ``section`` (the page and section whose verdict cell prints it, which the card links), ``card`` (one of
    ``CARDS``) and ``beside`` (a stand-in claim shown beside the paper-shape claim of that name, which decides the
    row, ``scorecard.paper_shape_first``, with ``more``: the stand-in's further evidence on it)."""
    name: str
    ref: str
    decide: Callable[..., Claim]
    reads: Callable[["Evidence"], dict]
    row: Callable[[Claim, "Evidence"], Row | None] | None
    section: str
    card: str
    beside: str = ""
    more: Callable[["Evidence"], str] | None = None  # a ``beside`` claim's further stand-in evidence, shown whole

    def __post_init__(self):
        if self.card not in CARDS:
            raise ValueError(f"card {self.card!r} is not one of {', '.join(CARDS)}")


class Evidence:
    """What the claims read, each read once: the chapters' run sets (a notebook's own ``Chapter``, which is one, where
    it passes it, so that its verdict cell reads what its page shows; otherwise ``RunSet.of`` the released runs on
    ``runs_dir``), their summaries,
    histories and floors, the paper-shape prefixes, and each claim as decided (``claim``). ``given``: values that
    replace what would be read (``"joint_collapse.summaries"``, ``"prefix"``), for tests on constructed runs."""

    def __init__(self, runs_dir=None, chapters: tuple[RunSet, ...] = (), given: dict | None = None):
        self.runs_dir = runs_dir
        self._memo = dict(given or {})
        self._chapters = {ch.name: ch for ch in chapters}

    def _get(self, key: str, make: Callable):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def chapter(self, name: str) -> RunSet:
        if name not in self._chapters:  # no parameters: the released runs the book shows, and no banner
            self._chapters[name] = RunSet.of(name, self.runs_dir)
        return self._chapters[name]

    def summaries(self, name: str) -> pd.DataFrame:
        return self._get(f"{name}.summaries", lambda: self.chapter(name).summaries())

    def histories(self, name: str) -> pd.DataFrame:
        return self._get(f"{name}.histories", lambda: self.chapter(name).histories())

    def floor(self, name: str) -> float:
        return self._get(f"{name}.floor", lambda: self.chapter(name).floor())

    @property
    def prefix(self):
        """The paper-shape prefixes (``claims.paper_shape.paper_shape_prefix``), read once for all their rows."""
        return self._get("prefix", lambda: paper_shape.paper_shape_prefix(self.runs_dir))

    def sweep_124m(self) -> pd.DataFrame:
        """The 124M chapter's summaries at its preset's own budget."""
        def make():
            s = self.summaries("124m_sweep")
            return s[s.budget == self.chapter("124m_sweep").experiments()[0].train.max_steps]
        return self._get("124m_sweep.at_budget", make)

    def claim(self, name: str) -> Claim:
        """The claim ``name`` of ``CLAIMS`` as its function decides it on this evidence."""
        e = entry(name)
        return self._get(f"claim:{name}", lambda: e.decide(**e.reads(self)))


def entry(name: str) -> Entry:
    """The entry of ``CLAIMS`` called ``name``, or the one entry whose name starts with it."""
    found = [e for e in CLAIMS if e.name == name] or [e for e in CLAIMS if e.name.startswith(name)]
    if len(found) != 1:
        raise KeyError(f"{len(found)} claims named {name!r}; claims: {', '.join(e.name for e in CLAIMS)}")
    return found[0]


def card_row(e: Entry, ev: Evidence) -> Row:
    """``e``'s row on the card, its claim decided on ``ev``, linked to the section that prints it."""
    row = e.row(ev.claim(e.name), ev)
    # the card's claim text opens with the entry's name: the pinned test and the chapters find it by that name
    if not row.claim.startswith(e.name):
        raise ValueError(f"the row of {e.name!r} names its claim {row.claim!r}")
    return row


def claims_at(section: str, *chapters: RunSet, runs_dir=None) -> list[Claim]:
    """The claims a chapter's verdict cell prints: every entry of ``CLAIMS`` decided in ``section`` (``page#id``), in
    the list's order, read from the chapter the notebook opened (``chapters``) where it is one of theirs."""
    ev = Evidence(runs_dir, chapters)
    found = [_marked(ev.claim(e.name), e, ev) for e in CLAIMS if e.section == section]
    if not found:
        raise KeyError(f"no claim is decided in {section!r}")
    return found


def _marked(c: Claim, e: Entry, ev: Evidence) -> Claim:
    """``c`` marked as decided at a stand-in where it contradicts the paper there (``Claim.stand_in``): by its card
    row's scale, or, for a claim only its chapter prints, by its chapter's runs."""
    if c.verdict != "CONTRADICTED":
        return c
    page = e.section.partition("#")[0]
    if e.row is not None:
        at = card_row(e, ev).scale == "stand-in"
    else:  # a chapter-only claim: its chapter's runs, or a stand-in plan (the bundle, the recipes) where it has none
        at = ev.chapter(page).stand_in if page in CHAPTERS else True
    return dataclasses.replace(c, stand_in=at)


# Helpers the rows share


def _fig2a_paper() -> str:
    """§4.1's Fig. 2a as the paper says it: the collapsed configurations' gradient (with the paper's own words on
    when), then Full Residual's."""
    g = paper_values(ref="§4.1 Fig. 2a", metric="layer0_grad_norm").set_index("config")
    return f"{g.note['AttnOnly']}; Full Residual ≈{g.value['FullResidual']:.3f}"


def _historical_124m() -> str:
    """§6.2's three historical AttnOnly seeds at 124M: 1337 is Table 4's original run, 42 and 123 §6.2's."""
    first = paper_value(ref="Table 4", config="AttnOnly", metric="best_val_loss")
    # the per-seed rows (the mean's row has no seed), in the paper's order: 42, then 123
    rest = paper_values(ref="§6.2", config="AttnOnly", metric="best_val_loss").dropna(subset=["seed"])
    return ", ".join(f"{v:.3f}" for v in [first, *rest.value])


def _range(s: pd.DataFrame) -> str:
    # A range, not a mean: the claims are about every seed, and a mean hides the one left on the floor.
    if s.empty:  # "nan-nan (n=0)" would read as a result
        return "no runs"
    lo, hi = s.best_val_loss.min(), s.best_val_loss.max()
    if f"{lo:.3f}" == f"{hi:.3f}" and len(s) > 1:  # "3.339-3.339" says the seeds agree to the digits shown
        return f"{lo:.3f} (n={len(s)}, all seeds)"
    return f"{lo:.3f}" if len(s) == 1 else f"{lo:.3f}-{hi:.3f} (n={len(s)})"


def _scale(ch: RunSet) -> str:
    """``rows.SCALES``' word for a chapter's runs: a stand-in's, or the paper's own preset (a retrain on a GPU)."""
    return "stand-in" if ch.stand_in else "paper shape"


def _evidence(ch: RunSet, s: pd.DataFrame) -> str:
    steps = sorted({int(b) for b in s.budget}) if len(s) else []
    # Seeds as counts, not lists: the most any configuration has, then the configurations with fewer ("8 seeds;
    # FullResidual and NoResidual 3"). One seed in all is named: it is the paper's run, or the one a row rests on.
    if s.empty:
        seeds = "no runs"
    elif s.seed.nunique() == 1:
        seeds = f"seed {s.seed.iloc[0]}"
    else:
        counts = s.groupby("config", sort=False).seed.nunique()  # in the order the runs were read (the plan's)
        fewer: dict[int, list[str]] = {}
        for config, k in counts[counts < counts.max()].items():
            fewer.setdefault(int(k), []).append(config)
        seeds = "; ".join([f"{counts.max()} seeds",
                           *(f"{' and '.join(c)} {k}" for k, c in sorted(fewer.items(), reverse=True))])
    return (f"{ch.scale} {'stand-in' if ch.stand_in else 'paper scale'}, "
            f"{'/'.join(f'{b:,}' for b in steps) or '-'} steps, {seeds}")


# §4, Table 2 and §4.1, Fig. 2: the joint collapse and its signature, at the paper's own 10M shape and at the stand-in

# the joint-collapse chapter's two verdict cells: the paper's own shape, and Table 2 and Fig. 2 at the stand-in
_PAPER_SHAPE = "joint_collapse#at-the-paper-s-own-shape-the-first-steps-of-the-exact-recipe"
_SIGNATURE = "joint_collapse#what-agrees-with-the-paper-and-what-does-not"


def joint_collapse_paper_shape(c: Claim, ev: Evidence) -> Row:
    """nanoGPT AttnOnly at the paper's exact 10M shape (``claims.paper_shape.claim_paper_shape_collapse``)."""
    claim = "Joint collapse at the paper's own 10M shape"
    # the paper's full run: Table 2's value over the 10M preset's whole schedule
    full = get_preset("10M", "nanogpt", "AttnOnly").train.max_steps
    paper = f"nanoGPT AttnOnly best {paper_text('Table 2', 'AttnOnly', 4)} over {full:,} steps"
    # no "trained" fact: no AttnOnly prefix is released, and the claim's reason gives the command and its cost
    if "trained" not in c.facts:
        return Row(claim=claim, where="§4, Table 2", paper=paper, ours="no run", scale="none", evidence="-",
                   verdict=c.verdict, why=c.why, **_PAPER_SHAPE_COLLAPSE)
    f = c.facts
    # a whole run's last value beside its best: Table 2 reports one number, which §4 says is both
    last = "" if f["prefix"] or "last" not in f else f" (last {f['last']:.3f})"
    ours = f"AttnOnly best {f['best']:.3f}{last}, " + (
        f"left the floor at step {f['left_at']}" if f["left_at"] is not None
        else f"on the floor for {'the ' * f['prefix']}{f['trained']}")
    # A prefix names how far it trained ("first 300 of 3,000 steps"): never read as where the run ends.
    if f["prefix"] and c.verdict != "NOT TESTED":
        claim += f" ({f['trained']})"
    # "10M paper shape", not "stand-in": what front_page.abstract counts as judged at the paper's own shape
    return Row(claim=claim, where="§4, Table 2", paper=paper, ours=ours, scale="paper shape",
               evidence=f"10M paper shape, {f['trained']}, seed {f['seed']}", verdict=c.verdict,
               why=c.why, partial=prefix_partial(nano := prefix_rows(ev.prefix.table, [("nanogpt", "AttnOnly")])),
               whole=prefix_whole(nano),
               **_PAPER_SHAPE_COLLAPSE)


# Where the joint collapse at the paper's shape is decided, and the whole runs that will decide it
# (Table 2 speaks of three partial configurations; at this shape only AttnOnly's run decides it, and its name says so)
_PAPER_SHAPE_COLLAPSE = dict(short="nanoGPT AttnOnly's joint collapse", section=_PAPER_SHAPE, plan="10m_whole")


def starvation_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Fig. 2a at the paper's exact 10M shape (``claims.paper_shape.claim_prefix_starvation``): the paper's claim
    ("exactly 0.000 from step 300 onward"), read at every evaluation from step 300 to the last each nanoGPT run
    trained (Full Residual, the control, at its own shorter prefix): each run's last gradient, and the step from
    which it stays starved."""
    found = prefix_rows(ev.prefix.table, [("nanogpt", k) for k in ("AttnOnly", "FFNOnly", "FullResidual")])
    # a prefix with no evaluation after step 0 (or trained without diagnostics) has no gradient to show yet
    ours = "; ".join(f"{r.config} " + ("no gradient recorded" if pd.isna(r.layer0_grad) else
                                       f"{r.layer0_grad:.2g} at step {int(r.steps):,}"
                                       + ("" if pd.isna(r.starved_from) else
                                          f" (starved from step {int(r.starved_from):,})"))
                     for r in found) or "no run"
    return Row(claim=f"Layer-0 gradient starved at the paper's own 10M shape (from step {plans.PREFIX_STEPS} on, "
                     f"Fig. 2a's first starved step)",
               where="§4.1, Fig. 2a", paper=_fig2a_paper(), ours=ours, scale="paper shape" if found else "none",
               evidence=prefix_evidence(found), verdict=c.verdict, why=c.why, short="layer-0 gradient starvation",
               section=_PAPER_SHAPE, plan="10m_prefix", partial=prefix_partial(found), whole=prefix_whole(found))


def growth_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Fig. 2b at the paper's exact 10M shape (``claims.growth_10m.claim_prefix_growth``): the order of the three
    nanoGPT configurations' hidden-state growth, read at the step the prefixes reach (the paper's is at the end)."""
    found = prefix_rows(ev.prefix.table, [("nanogpt", k) for k in ("AttnOnly", "FFNOnly", "FullResidual")])
    step, gr, tr = c.facts.get("step"), c.facts.get("growth", {}), c.facts.get("over_training", {})
    configs = ("AttnOnly", "FFNOnly", "FullResidual")
    # both measures the claim reads: over depth (the stand-in row's) and over training (the author's residualscope)
    ours = "; ".join(f"{what}: " + ", ".join(f"{k} {values[k]:.1f}×" for k in configs if k in values)
                     for what, values in (("over depth", gr), ("over training", tr)) if values) or "no run"
    return Row(claim=f"Hidden-state growth orders AttnOnly > FFNOnly > Full Residual at the paper's own 10M shape "
                     f"(read at step {step:,} of {get_preset('10M', 'nanogpt').train.max_steps:,}, as far as all three "
                     f"runs trained)",
               where="§4.1, Fig. 2b", paper=_fig2b_paper(), ours=ours + (f" at step {step:,}" if gr else ""),
               scale="paper shape" if found else "none", evidence=prefix_evidence(found), verdict=c.verdict,
               why=c.why, short="the order of hidden-state growth", section=_PAPER_SHAPE, plan="10m_prefix",
               partial=prefix_partial(found), whole=prefix_whole(found))


def joint_collapse(c: Claim, ev: Evidence) -> Row:
    """Table 2 at the stand-in (``claims.joint_collapse.claim_joint_collapse``, with its knife-edge, the rounding
    twins' ``released_rounding_edge``, and the escapes that survive rounding)."""
    jc, summ = ev.chapter("joint_collapse"), ev.summaries("joint_collapse")
    # Table 2's claim is about the three partial configurations; Full Residual is its control, named in the reason.
    partial = results.pooled(summ)
    partial = partial[partial.config != "FullResidual"]
    ours = "; ".join(f"{k} {_range(g)}" for k, g in partial.groupby("config", sort=False)) or "no runs"
    return Row(claim="Joint collapse: every partial nanoGPT configuration ends on the floor", where="§4, Table 2",
               # the paper's three partial configurations, at Table 2's four digits
               paper=", ".join(f"{k} {paper_text('Table 2', k, 4)}" for k in ("AttnOnly", "FFNOnly", "NoResidual")),
               ours=ours,
               scale=_scale(jc), evidence=_evidence(jc, summ), verdict=c.verdict, why=c.why,
               short="the joint collapse", section=_SIGNATURE, plan="joint_collapse")


def stand_in_collapse_seeds(ev: Evidence) -> str:
    """The `cpu` stand-in's nanoGPT AttnOnly beyond the joint-collapse chapter's two seeds, for the row decided at the
    paper's shape: its own recipe over the schedule plan's five seeds, and with the author's dropout 0.2
    (``plans.author_values``), each seed's escape step."""
    from .escape_map import escape_label
    seeds = schedule_seeds.baseline_escapes("nanogpt", ev.runs_dir)
    t = asymmetry.author_value_runs(ev.runs_dir).table
    t = t[(t.impl == "nanogpt") & (t.config == "AttnOnly") & (t["values"] == "author's")] if len(t) else t
    parts = []
    if seeds:
        parts.append(f"nanoGPT AttnOnly over {len(seeds)} seeds ({plans.schedule_seeds()[0].train.eval_interval}-step "
                     f"evaluations) leaves the floor: " + ", ".join(
                         f"seed {s} {'never' if escape_label(v) == 'never' else 'at ' + escape_label(v)}"
                         for s, v in seeds.items()))
    if len(t):
        parts.append(f"with the author's dropout 0.2, {int(t.escape_step.notna().sum())} of {len(t)} seeds leave it")
    return "; ".join(parts)


def starvation(c: Claim, ev: Evidence) -> Row:
    """Fig. 2a at the stand-in (``claims.joint_collapse.claim_starvation``)."""
    # Fig. 2a's quantity at seed PAPER_SEED, the released run (the paper's Fig. 2 is the seed-1337 run)
    g = collapse.layer0_grad(ev.histories("joint_collapse")).set_index("config")
    # the step it stays starved from, only where the claim counts it starved
    ours = "; ".join(f"{k} {g.final[k]:.2g}" + (f" (from step {int(g.starved_from_step[k])})"
                                               if c.facts["starved"][k] else "") for k in g.index) or "no runs"
    return Row(claim="Layer-0 gradient starved in every collapsed partial configuration, not in Full Residual",
               where="§4.1, Fig. 2a", paper=_fig2a_paper(), ours=ours,
               scale="stand-in", evidence=f"{ev.chapter('joint_collapse').scale} stand-in, nanogpt, seed {PAPER_SEED}",
               verdict=c.verdict, why=c.why, short="layer-0 gradient starvation", section=_SIGNATURE,
               plan="joint_collapse")


def _fig2b_paper() -> str:
    """Fig. 2b's three growths, as the paper gives them (at the end of its run)."""
    return ", ".join(f"{paper_text('§4.1 Fig. 2b', k, 2, metric='hidden_growth')}×"
                     for k in ("AttnOnly", "FFNOnly", "FullResidual"))


def growth(c: Claim, ev: Evidence) -> Row:
    """Fig. 2b (``claims.joint_collapse.claim_growth_order``)."""
    gr = c.facts["growth"]
    ours = ", ".join(f"{k} {gr[k]:.2f}×" for k in ("AttnOnly", "FFNOnly", "FullResidual") if k in gr) or "no runs"
    return Row(claim="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual", where="§4.1, Fig. 2b",
               paper=_fig2b_paper(),
               ours=ours, scale="stand-in",
               evidence=f"{ev.chapter('joint_collapse').scale} stand-in, nanogpt, seed {PAPER_SEED}",
               verdict=c.verdict, why=c.why, short="the order of hidden-state growth", section=_SIGNATURE,
               plan="joint_collapse")


def _joint_collapse_reads(ev: Evidence) -> dict:
    # the joint-collapse chapter's runs and floor; the stand-in's knife-edge from the bundle chapter's rounding twins
    return dict(summaries=ev.summaries("joint_collapse"), floor=ev.floor("joint_collapse"),
                edge=ev._get("edge", lambda: collapse.released_rounding_edge(ev.runs_dir)),
                robust=ev._get("robust", lambda: collapse.released_robust_escapes(ev.runs_dir)))


# §5.1: the runtime gain, in two parts: (a) does a runtime gain decide whether AttnOnly leaves the floor, (b) do the
# runtime curves that leave it coincide


def _gain_table(ev: Evidence) -> pd.DataFrame:
    # released runs only: a reader's retrain never changes the front page (the chapter reads a retrain on its own)
    def make():
        summ = ev.summaries("gain_confound")
        return gain.gain_table(summ[summ.source == "released"]) if len(summ) else gain.gain_table(summ)
    return ev._get("gain_confound.table", make)


def _gain_curves(ev: Evidence) -> pd.DataFrame:
    def make():
        curves = ev.chapter("gain_confound").gain_curves()
        return curves[curves.source == "released"] if "source" in curves else curves
    return ev._get("gain_confound.curves", make)


def _gain_seeds(ev: Evidence) -> dict:
    # the runtime gains at the other seeds (plans.gain_seeds), released runs only, on the chapter's floor
    return ev._get("gain_confound.seeds", lambda: ev.chapter("gain_confound").gain_seeds())


def _gain_absorbed_reads(ev: Evidence) -> dict:
    curves, floor = _gain_curves(ev), ev.floor("gain_confound")
    # the spreads computed once, so the row prints the very numbers the claim judges
    return dict(curves=curves, floor=floor, bound=paper_value(ref="§5.1", metric="runtime_gain_spread"),
                spreads=gain_confound.gain_spreads(curves, floor),
                twins=gain_confound.twin_curves(ev.chapter("gain_confound").released_dir), others=_gain_seeds(ev))


def _other_seeds(c: Claim) -> str:
    """(a)'s outcome at the seeds beyond 1337, as the row prints it."""
    return "".join(f"; seed {k}: left at g = {', '.join(f'{g:g}' for g in v['left']) or 'none'}, stayed at g = "
                   f"{', '.join(f'{g:g}' for g in v['stayed']) or 'none'}"
                   for k, v in c.facts.get("by_seed", {}).items() if k != PAPER_SEED)


def _gain_evidence(c: Claim, ev: Evidence) -> str:
    # the chapter's runs (seed 1337), and the seeds whose runtime gains the claim read too
    gc = ev.chapter("gain_confound")
    more = [k for k in c.facts.get("by_seed", {}) if k != PAPER_SEED]
    return _evidence(gc, ev.summaries(gc.name)) + (
        f"; the runtime gains also at seed{'s' if len(more) > 1 else ''} {', '.join(map(str, more))}" if more else "")


def runtime_gain_fate(c: Claim, ev: Evidence) -> Row:
    """§5.1 (a): where each runtime gain's run ends (``claims.gain_confound.claim_gain_fate``)."""
    table = _gain_table(ev)

    def split(mode):  # the paper's four gains (g = 1 is the plain run, listed under both modes): left, stayed
        e = table[f"escape step ({mode})"].dropna() if f"escape step ({mode})" in table else pd.Series(dtype=str)
        e = e[e.index.isin(gain.GAINS_PAPER)]
        return e, [f"{g:g}" for g, v in e.items() if v != "none"], [f"{g:g}" for g, v in e.items() if v == "none"]
    esc, left, stayed = split("runtime")
    # the weight-level gains beside them: whether the runtime-versus-weight-level distinction §5.1 draws changes
    # which gains leave the floor
    w_esc, w_left, w_stayed = split("weight")
    weight = (f"; weight-level: left at g = {', '.join(w_left) or 'none'}, stayed at g = "
              f"{', '.join(w_stayed) or 'none'}" + (" (the same split)" if (w_left, w_stayed) == (left, stayed) else "")
              if len(w_esc) else "")
    gc = ev.chapter("gain_confound")
    return Row(claim=f"{_GAIN_FATE} ∈ {{{_PAPER_GAINS}}} are equivalent: none decides whether AttnOnly leaves "
               "the floor",
               where="§5.1", paper="all gain values functionally equivalent",
               ours=(f"seed {PAPER_SEED}: " if _other_seeds(c) else "")
               + f"left the floor at g = {', '.join(left) or 'none'}; stayed at g = {', '.join(stayed) or 'none'}"
               + weight + _other_seeds(c) if len(esc) else "no runs", scale=_scale(gc), evidence=_gain_evidence(c, ev),
               verdict=c.verdict, why=c.why, short="that runtime gains are equivalent",
               section=_GAIN, plan="gain_confound")


def runtime_gain_absorbed(c: Claim, ev: Evidence) -> Row:
    """§5.1 (b): whether the curves across the runtime gains coincide (``claims.gain_confound.claim_gain_absorbed``,
    against the rounding-only twins' null)."""
    gc = ev.chapter("gain_confound")
    bound = paper_value(ref="§5.1", metric="runtime_gain_spread")  # §5.1: "total spread < 0.002 at any step"
    return Row(claim="(b) Loss curves across all runtime gains overlap completely", where="§5.1",
               paper=f"spread < {bound} at any step",
               # from ABSORB_STEP: §5.1 says AdamW absorbs the gain "within ≈200 steps"
               ours=f"spread from step {ABSORB_STEP} across the four runtime gains {f['spread']:.4f}" + (
                   f"; among those that left the floor {f['spread_left']:.4f}" if f["spread_left"] is not None else "")
               + (f"; rounding-only twin {f['null']:.4f}" if f["null"] is not None else "; rounding null not measured")
               + "".join(f"; seed {k} {sp:.4f}" for k, sp in f["by_seed"].items() if k != PAPER_SEED)
               if (f := c.facts) else "-", scale=_scale(gc), evidence=_gain_evidence(c, ev),
               verdict=c.verdict, why=c.why, short="that the runtime-gain curves overlap",
               section=_GAIN, plan="gain_twins")


_GAIN = "gain_confound#reading-the-result"
_PAPER_GAINS = ", ".join(f"{g:g}" for g in gain.GAINS_PAPER)
_GAIN_FATE = "(a) Runtime gains g"


# §5.2: random validation batches


def _noise(ev: Evidence) -> pd.DataFrame:
    # The heaviest read of the front page: every checkpoint's NOISE_BATCHES random batches, cached and shared
    # (results.cached_losses); the released checkpoints only.
    def make():
        noise = ev.chapter("fixed_val_batches").val_noise()
        return noise[noise.source == "released"]
    return ev._get("fixed_val_batches.noise", make)


def fixed_val(c: Claim, ev: Evidence) -> Row:
    """§5.2 (``claims.fixed_val_batches.claim_eval_noise``)."""
    # a 50-batch evaluation: the stand-in's eval_batches, the size nanoGPT's random evaluation averages over. The std
    # is the gap's (the two checkpoints' evaluation noise in quadrature, ``gap_vs_noise``), not one evaluation's.
    ours = (f"noise std of the gap between two 50-batch random evaluations {c.facts['noise_std']:.4f}, against the "
            f"escape margin {ESCAPE_MARGIN} and an AttnOnly-FFNOnly gap of {c.facts['gap']:.3f} "
            f"({c.facts['gap_over_noise']:,.0f} std)"
            if c.facts else "no checkpoints")
    # §5.2's shift: AttnOnly under nanoGPT (Table 2) and under ResidualGPT (Phase 3, Fig. 4), at §5.2's two digits
    phase3 = paper_text('Fig. 4', 'AttnOnly', 2, seeds=False).split(' ±')[0]
    shift = f"{paper_text('Table 2', 'AttnOnly', 2)} → {phase3}"
    return Row(claim=f"{_FIXED_VAL} (one relevant difference in AttnOnly's {shift} shift)", where="§5.2",
               paper="not quantified; not isolated causally", ours=ours, scale="stand-in",
               evidence=f"cpu stand-in, seed {PAPER_SEED} checkpoints, noise from "
                        f"{NOISE_BATCHES} random batches each",
               verdict=c.verdict, why=c.why, short="that random validation batches hide slow progress",
               section="fixed_val_batches#reading-the-result", plan="fixed_val_batches")


_FIXED_VAL = "Random validation batches add noise that can hide slow progress"


# §6.1 and Table 5's text: the asymmetry at 10M, and FFNOnly on the No Residual floor


def asymmetry_10m(c: Claim, ev: Evidence) -> Row:
    """§6.1 and Fig. 4, Phase 3 (``claims.asymmetry.claim_asymmetry``)."""
    ch, summ = ev.chapter("10m_asymmetry"), ev.summaries("10m_asymmetry")
    # k=k fixes each configuration at its own step: the usual guard against a late-bound loop variable
    a, f = (results.pooled(summ)[lambda s, k=k: s.config == k] for k in ("AttnOnly", "FFNOnly"))
    return Row(claim="10M asymmetry: AttnOnly leaves the floor in every seed, FFNOnly in none",
               where="§6.1, Fig. 4, Phase 3",
               # Fig. 4 (Phase 3, the primary 10M estimate of §8.1), not Table 3's original record
               paper=f"AttnOnly {paper_text('Fig. 4', 'AttnOnly')}, FFNOnly {paper_text('Fig. 4', 'FFNOnly')}",
               ours=f"AttnOnly {_range(a)}; FFNOnly {_range(f)}", scale=_scale(ch), evidence=_evidence(ch, summ),
               # what the row does not judge: the level, which only the paper's shape can (plans.paper_10m_whole)
               verdict=c.verdict, why=c.why + (
                   f"; which configurations leave the floor is judged, not the level: Phase 3's AttnOnly "
                   f"{paper_text('Fig. 4', 'AttnOnly', seeds=False)} and every seed at least "
                   f"{paper_value(ref='abstract Fig. 4a', metric='min_gap_to_floor'):.2f} below the FFNOnly floor "
                   f"are for the paper's shape to judge ({_shape_level(ev)})"
                   + _shape_ffn(ev) if ch.stand_in else ""), short="the 10M asymmetry",
               section=_ASYMMETRY, plan="10m_asymmetry")


_ASYMMETRY = "10m_asymmetry#reading-the-result"


def _shape_level(ev: Evidence) -> str:
    """Where the paper's shape judges the level: the level's own row once ResidualGPT AttnOnly is trained whole."""
    attn = prefix_rows(ev.prefix.table, [("residualgpt", "AttnOnly")])
    return ("the level's own row, on its whole ResidualGPT AttnOnly run" if attn and attn[0].steps >= attn[0].max_steps
            else "its whole ResidualGPT AttnOnly run, `--plan 10m_whole`")


def _shape_ffn(ev: Evidence) -> str:
    """Why the paper's shape does not decide the asymmetry's row: its FFNOnly run is a prefix, which may still leave
    the floor (where the runs stand so far is one of the book's own findings)."""
    ffn = prefix_rows(ev.prefix.table, [("residualgpt", "FFNOnly")])
    return "" if not ffn or ffn[0].steps >= ffn[0].max_steps else (
        f"; at the paper's shape ResidualGPT FFNOnly has trained its {ffn[0].trained}, too few to say it never leaves "
        f"the floor, so the stand-in decides this row and the paper-shape runs are read among the book's own "
        f"findings, as far as both trained")


def _ffn_parts(ev: Evidence) -> list[tuple[RunSet, pd.DataFrame]]:
    # every scale with both configurations: the 10M stand-in and the 124M stand-in
    return [(ev.chapter("10m_asymmetry"), ev.summaries("10m_asymmetry")), (ev.chapter("124m_sweep"), ev.sweep_124m())]


def ffn_equals_noresidual(c: Claim, ev: Evidence) -> Row:
    """Table 5's text (``claims.asymmetry.claim_ffn_equals_noresidual``)."""
    # the paper's numbers from Table 5's text
    ffn, nores = (paper_value(ref="Table 5", config=k, metric="best_val_loss") for k in ("FFNOnly", "NoResidual"))
    gap = paper_value(ref="Table 5 text", metric="gap_to_noresidual")
    return Row(claim="FFNOnly collapses to the No Residual floor", where="abstract; Table 5 text",
               paper=f"124M: {ffn:.3f} vs {nores:.3f} ({gap:.3f})",
               ours="; ".join(c.lines) or "no runs", scale="stand-in",
               evidence=" and ".join(f"{ch.scale} stand-in" for ch, _ in _ffn_parts(ev)),
               verdict=c.verdict, why=c.why, short="FFNOnly's collapse to the No Residual floor",
               section=_ASYMMETRY, plan="10m_asymmetry")


# §6.2: the 124M sweep (Table 5)

# 16 runs: five seeds of three configurations and the NoResidual anchor; 131,072 tokens x 20,000 steps each. Named
# only where AttnOnly never left the floor: then only the paper-scale sweep could answer.
_COST_124M = "; the 124M sweep itself is 16 runs of 2.6B tokens, roughly 70-110 A100-hours"


def _cost_124m(ev: Evidence) -> str:
    return "" if ev.claim(_ORDER_124M).facts.get("attn_left") else _COST_124M


def _sweep_124m_reads(ev: Evidence) -> dict:
    return dict(summaries=ev.sweep_124m(), floor=ev.floor("124m_sweep"))


def order_124m(c: Claim, ev: Evidence) -> Row:
    """Table 5's ordering (``claims.asymmetry.claim_separation``)."""
    ch, s = ev.chapter("124m_sweep"), results.pooled(ev.sweep_124m())
    a, f, full = (s[s.config == k] for k in ("AttnOnly", "FFNOnly", "FullResidual"))
    gap = c.facts.get("min_gap")
    return Row(claim=f"{_ORDER_124M}: Full < every AttnOnly seed < every FFNOnly seed",
               where="§6.2.1, Table 5",
               paper=" < ".join(paper_text("Table 5", k, seeds=False) for k in ("FullResidual", "AttnOnly", "FFNOnly"))
               + f"; minimum gap {paper_value(ref='Table 5 text', metric='min_gap_to_ffnonly'):.3f}",
               ours=f"Full {_range(full)}; AttnOnly {_range(a)}; FFNOnly {_range(f)}"
               + (f"; minimum gap {gap:.3f}" if gap is not None else ""),
               scale=_scale(ch), evidence=_evidence(ch, ev.sweep_124m()), verdict=c.verdict,
               why=c.why + _cost_124m(ev), short="the 124M ordering",
               section=_SWEEP, plan="124m_sweep")


def seed_sensitivity_124m(c: Claim, ev: Evidence) -> Row:
    """Table 5's AttnOnly spread (``claims.asymmetry.claim_seed_sensitivity``)."""
    ch, s = ev.chapter("124m_sweep"), results.pooled(ev.sweep_124m())
    t5 = paper_values(ref='Table 5', config='AttnOnly', metric='best_val_loss')
    return Row(claim="AttnOnly is seed-sensitive at 124M",
               where=f"§6.2 (historical seeds {_historical_124m()}); Table 5",
               # Table 5's std and n, read from the paper file; the range from its best_val_min and best_val_max rows
               paper=f"std {t5['std'].iloc[0]:.3f} over {int(t5.n.iloc[0])} seeds "
               f"(range {paper_text('Table 5', 'AttnOnly', seeds=False, metric='best_val_min')}-"
               f"{paper_text('Table 5', 'AttnOnly', seeds=False, metric='best_val_max')})",
               ours=f"AttnOnly {_range(s[s.config == 'AttnOnly'])}",
               scale=_scale(ch), evidence=_evidence(ch, ev.sweep_124m()), verdict=c.verdict,
               why=c.why + _cost_124m(ev), short="AttnOnly's seed sensitivity at 124M", section=_SWEEP,
               plan="124m_sweep")


_ORDER_124M = "124M ordering and separation"
_SWEEP = "124m_sweep#reading-the-result"


# §7: cross-position routing, as the paper poses it and as this book reads it


def _mixer(ev: Evidence):
    return ev._get("mixer", lambda: routing.mixer_runs(ev.runs_dir))


def routing_paper(c: Claim, ev: Evidence) -> Row:
    """§7.2's local-mixer test as the paper poses it, judged by the author's rule (``claims.mechanism.
    claim_routing_by_author_rule``), at the `cpu` stand-in (book/mechanism.ipynb)."""
    claim = f"{_ROUTING_PAPER} by a position-blind mixer, AttnOnly collapses"
    paper_mixer = paper_value(ref="§7.2", metric="mixer_best_val_loss")
    paper = f"not tested cleanly (AttnOnly + mixer {paper_mixer:.3f} in the anomalous Phase 2)"
    runs = _mixer(ev)
    if c.facts["reading"] is None:  # no AttnOnly run with the mixer yet
        return Row(claim=claim, where="§7.1-7.2", paper=paper, ours="no runs", scale="none", evidence="-",
                   verdict=c.verdict, why=c.why, **_ROUTING)
    am = c.facts["attn_mixer"]
    steps = plans.mixer_test()[0].train.max_steps  # the plan's own budget (1,500 steps at `cpu`)
    seeds = sorted(set(runs.table[(runs.table.mixer == "local") & (runs.table.config == "AttnOnly")].seed))
    return Row(claim=claim, where="§7.1-7.2", paper=paper,
               ours=f"AttnOnly + mixer {min(am):.3f}-{max(am):.3f} (n={len(am)}): "
               f"\"{c.facts['reading']}\" by the author's rule", scale="stand-in",
               evidence=f"`cpu` stand-in, {steps:,} steps, seeds "
               f"{', '.join(map(str, seeds))}", verdict=c.verdict, why=c.why, **_ROUTING)


_MECHANISM = "mechanism#the-paper-s-local-mixer-test-under-clean-conditions"
_ROUTING = dict(short="cross-position routing", section=_MECHANISM, plan="mixer_test")
_ROUTING_PAPER = "Cross-position routing (§7.1): with attention replaced"


def _routing_paper_reads(ev: Evidence) -> dict:
    # the bigram floor on the fixed batches: no position-blind model can go below it on this data; §7.2's mixer
    # value is 10M on the same characters, so it is placed against the same bigram floor
    return dict(table=_mixer(ev).table, rule=mixer_rule(),
                bigram_floor=routing.like_for_like(routing.floors(orders=(1, 2)))[2],
                paper_mixer=paper_value(ref="§7.2", metric="mixer_best_val_loss"))


def mechanism(c: Claim, ev: Evidence) -> Row:
    """The book's own reading of routing (not the paper's claim), at the `cpu` stand-in (book/mechanism.ipynb):
    listed under what this book finds that the paper does not say."""
    claim = _ROUTING_OWN
    paper_mixer = paper_value(ref="§7.2", metric="mixer_best_val_loss")
    paper = f"not tested cleanly (AttnOnly + mixer {paper_mixer:.3f} in the anomalous Phase 2)"
    runs = _mixer(ev)
    # NOT TESTED although some mixer runs exist: the AttnOnly one is missing, and the claim's first line says so
    if c.verdict == "NOT TESTED" and not runs.table[runs.table.mixer == "local"].empty:
        return Row(claim=claim, where="§7.1-7.2", paper=paper,
                   ours=c.lines[0] if c.lines else "no AttnOnly run with the mixer",
                   scale="stand-in", evidence="`cpu` stand-in", verdict=c.verdict,
                   why=c.why + " (`python -m lib sweep --plan mixer_test`)")
    if c.verdict == "NOT TESTED":
        return Row(claim=claim, where="§7.1-7.2", paper=paper, ours="no runs", scale="none", evidence="-",
                   verdict=c.verdict,
                   why=f"`python -m lib sweep --plan mixer_test`: {runs.planned} `cpu` stand-in runs (AttnOnly, Full "
                   f"Residual and FFNOnly with the mixer, 3 seeds), about 15 minutes each on 2 cores")
    # mean per configuration and mixer, with its seed count
    summ = routing.mixer_summary(runs.table)
    mixed = summ[summ.mixer == "local"]
    ours = "; ".join(f"{r.config} + mixer {r.mean:.3f}" + (f" ({r.seeds} seeds)" if r.seeds > 1 else "")
                     for r in mixed.itertuples())
    seeds = sorted(set(runs.table[runs.table.mixer == "local"].seed))
    steps = plans.mixer_test()[0].train.max_steps
    return Row(claim=claim, where="§7.1-7.2", paper=paper, ours=ours, scale="stand-in",
               evidence=f"`cpu` stand-in, {steps:,} steps, seeds {', '.join(map(str, seeds))}",
               verdict=c.verdict, why=c.why)


_ROUTING_OWN = ("Cross-position routing (§7.1), as this book reads it: the sublayer that replaces the stream "
                "decides; tested with the position-blind local mixer (§7.2)")


def _mixer_reads(ev: Evidence) -> dict:
    # the book's reading, with the author's rule given beside it for context
    return dict(table=_mixer(ev).table, floors=routing.like_for_like(routing.floors()),
                paper_mixer=paper_value(ref="§7.2", metric="mixer_best_val_loss"), author_rule=mixer_rule())


# The book's own findings at the paper's shape: the prefixes read early in training. The paper gives where its runs
# end, not where they stand then, so these are the book's findings, not the paper's claims; the card's rows on the
# paper's claims at this shape are the joint collapse (where the run ends) and Fig. 2a's starvation.


def level_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Fig. 4's level at the paper's exact 10M shape (``claims.paper_shape.claim_paper_shape_level``): ResidualGPT
    AttnOnly's best over its whole run on the Phase-3 preset, beside the paper's mean and the author's record of
    seed 1337."""
    found = prefix_rows(ev.prefix.table, [("residualgpt", "AttnOnly")])
    f = c.facts
    ours = ("no run" if "best" not in f else
            f"AttnOnly best {f['best']:.4f}, {f['diff']:+.4f} from the paper's (allowed ±{f['band']:.4f})"
            if f["complete"] else f"AttnOnly best {f['best']:.3f} over its {f['trained']}")
    return Row(claim="AttnOnly's level at the paper's own 10M shape (Fig. 4, Phase 3)", where="§6.1, Fig. 4",
               # the author's record of seed 1337 is Table 3's (the original record), not Phase 3's, of which no
               # per-seed record is released
               paper=f"{paper_text('Fig. 4', 'AttnOnly')}, Phase 3; Table 3's original record of seed {PAPER_SEED}: "
                     f"{f['author']:.6f} (no per-seed Phase-3 record is released)",
               ours=ours, scale="paper shape" if found else "none", evidence=prefix_evidence(found),
               verdict=c.verdict, why=c.why, short="AttnOnly's 10M level", section=_ASYMMETRY, plan="10m_whole",
               partial=prefix_partial(found), whole=prefix_whole(found))


def _early(runs, where: str, paper: str):
    def row(c: Claim, ev: Evidence) -> Row:
        found = prefix_rows(ev.prefix.table, runs)
        # each run in a few words: where it stands against the floor, and its best
        ours = "; ".join(f"{IMPL_NAMES[r.impl]} {r.config} {paper_shape.where_it_is(r)}, best {r.best_val:.3f}"
                         for r in found) or "no run"
        return Row(claim=c.name, where=where, paper=paper, ours=ours,
                   scale="paper shape" if found else "none", evidence=prefix_evidence(found), verdict=c.verdict,
                   why=c.why, partial=prefix_partial(found), whole=prefix_whole(found))
    return row


def _contrast_paper() -> str:
    return ("Table 2: nanoGPT AttnOnly best " f"{paper_text('Table 2', 'AttnOnly', 4)} over 3,000 steps; Fig. 4: "
            f"ResidualGPT AttnOnly {paper_text('Fig. 4', 'AttnOnly')}; no step given for either")


def _asymmetry_paper() -> str:
    return (f"AttnOnly {paper_text('Fig. 4', 'AttnOnly')}, FFNOnly {paper_text('Fig. 4', 'FFNOnly')} over 3,000 "
            "steps; no step given")


def early_contrast(c: Claim, ev: Evidence) -> Row:
    return _early([("nanogpt", "AttnOnly"), ("residualgpt", "AttnOnly")], "§4, §6.1", _contrast_paper())(c, ev)


def early_asymmetry(c: Claim, ev: Evidence) -> Row:
    return _early([("residualgpt", "AttnOnly"), ("residualgpt", "FFNOnly")], "§6.1, Fig. 4", _asymmetry_paper())(c, ev)


def _prefix_reads(ev: Evidence) -> dict:
    return dict(table=ev.prefix.table)


# The schedule, clipping and biases: over seeds at the stand-in, and the schedule at the paper's shape


def _schedule_runs(ev: Evidence):
    return ev._get("schedule_seeds", lambda: schedule_seeds.schedule_runs(ev.runs_dir))


def schedule_over_seeds(c: Claim, ev: Evidence) -> Row:
    """Which single factors move AttnOnly's escape beyond what the seed does, at the `cpu` stand-in
    (book/escape_and_bundle.ipynb, "with seeds"): ``claims.schedule_seeds.claim_schedule_factors`` over
    ``plans.schedule_seeds``."""
    runs = _schedule_runs(ev)
    paper = "not isolated: §5.2 and §8.3 (limitation 2) leave the nanoGPT → ResidualGPT bundle's factors bundled"
    done = len(runs.table)
    evidence = (f"`cpu` stand-in, AttnOnly, {done} of {runs.planned} runs, evaluated every "
                f"{plans.schedule_seeds()[0].train.eval_interval} steps, up to {len(plans.SCHEDULE_SEEDS)} seeds "
                f"a factor")
    return Row(claim=c.name, where="§5.2, §8.1", paper=paper,
               ours=" ".join(c.lines) or f"{done} of {runs.planned} runs trained",
               scale="stand-in", evidence=evidence, verdict=c.verdict, why=c.why + ("" if not runs.missing else
                                             " (`python -m lib sweep --plan schedule_seeds` trains the rest)"))


def schedule_paper_shape(c: Claim, ev: Evidence) -> Row:
    """Does a constant learning rate delay or prevent AttnOnly's escape at the paper's own 10M shape, beyond what
    the seed does? Judged by ``claims.schedule_10m.claim_schedule_10m`` on five seeds a schedule (the rank rule),
    never on one: the paper calls the Phase 2 → Phase 3 discrepancy cross-environment, its cause unknown (§8.1),
    and the Phase-2 notebook trains another schedule than Table 1's (book/reproducibility.md)."""
    paper = "not claimed: §8.1 calls the Phase 2 → Phase 3 discrepancy cross-environment, its cause unknown"
    if c.verdict == "NOT TESTED":
        return Row(claim=c.name, where="§8.1", paper=paper, ours=c.facts["trained"], scale="none", evidence="-",
                   verdict=c.verdict, why=c.why)
    return Row(claim=c.name, where="§8.1", paper=paper, ours=" ".join(c.lines), scale="paper shape",
               evidence="10M paper shape, ResidualGPT AttnOnly, 5 seeds a schedule, evaluated every 50 steps",
               verdict=c.verdict, why=c.why)


_ESCAPE = "escape_and_bundle#the-schedule-clipping-and-biases-with-seeds"


# The book's own finding, on the front page beside the paper's claims: the first steps' learning rate decides whether
# AttnOnly leaves the floor. A ladder: the `cpu` stand-in in both implementations over five seeds (beside the row,
# counted nowhere, with its separation of the peak rate from the warm-up), then the paper's 10M shape, ResidualGPT and
# nanoGPT over five seeds a schedule each, which decide it.
FIRST_STEPS_SECTION = "joint_collapse#the-learning-rate-s-first-steps-over-five-seeds"


def _first_steps_reads(ev: Evidence) -> dict:
    return dict(residualgpt=ev._get("10m_schedule.effects", lambda: schedule_10m.schedule_10m_effects(
                    schedule_10m.schedule_10m_runs(ev.runs_dir))),
                nanogpt=ev._get("10m_nanogpt_schedule.effects", lambda: schedule_10m.nanogpt_schedule_effects(
                    schedule_10m.nanogpt_schedule_runs(ev.runs_dir))))


def first_steps_stand_in(ev: Evidence):
    """The finding's claim at the `cpu` stand-in (``plans.schedule_seeds``, both implementations, five seeds)."""
    effects = schedule_seeds.schedule_effects(_schedule_runs(ev).table)
    return schedule_10m.claim_first_steps(effects, effects)


def first_steps(c: Claim, ev: Evidence) -> Row:
    """The book's own finding (``claims.schedule_10m.claim_first_steps``), its paper-shape rungs deciding it and the
    stand-in's verdict beside it, with ``schedule_seeds.rate_reading``: the peak rate told apart from the warm-up."""
    runs = {"ResidualGPT": (schedule_10m.schedule_10m_runs(ev.runs_dir), plans.paper_10m_schedule_seeds()),
            "nanoGPT": (schedule_10m.nanogpt_schedule_runs(ev.runs_dir), plans.paper_10m_nanogpt_schedule_seeds())}
    trained = sum(len(t) for t, _ in runs.values())
    evidence = ("10M paper shape, AttnOnly, " + "; ".join(f"{k} {len(t)} of {len(e)} runs trained to their stop"
                                                            for k, (t, e) in runs.items())
                + f", {len(plans.SCHEDULE_SEEDS)} seeds a schedule, evaluated every "
                  f"{schedule_10m.effects_interval()} steps")
    sc = first_steps_stand_in(ev)
    stand_in = (f"{sc.verdict} (`cpu` stand-in, both implementations, {len(plans.SCHEDULE_SEEDS)} seeds): {sc.why}. "
                + schedule_seeds.rate_reading(_schedule_runs(ev).table))
    return Row(claim=c.name, where="§4, §8.1", short="the first steps' learning rate",
               paper="not claimed: the joint collapse and the Phase-2 discrepancy are left unexplained (§8.1: "
                     "cross-environment, its cause unknown)",
               ours="; ".join(c.lines), scale="paper shape" if trained else "none", evidence=evidence,
               verdict=c.verdict, why=c.why, stand_in=stand_in, section=FIRST_STEPS_SECTION,
               plan="10m_nanogpt_schedule_seeds")


# The claims only their chapters print (card "chapter"): each stand-in test of a claim beside the one the card rows
# judge, read from the same Evidence, so that its chapter's verdict cell renders it from this list too.


def _author_values(ev: Evidence):
    return ev._get("author_values", lambda: asymmetry.author_value_runs(ev.runs_dir))


def _probe_124m(ev: Evidence):
    return ev._get("124m_sweep.probe", lambda: ev.chapter("124m_sweep").probe())


def _bundle_reads(ev: Evidence) -> dict:
    # nanoGPT's own evaluation interval: one interval is the resolution of an escape step
    interval = plans.bundle_factors()["none"].train.eval_interval
    return dict(table=bundle.bundle_runs(ev.runs_dir).table, interval=interval,
                control=plans.ROUNDING_CONTROL, seeds=bundle.baseline_seeds(ev.runs_dir),
                paired=(plans.FIXED_VALIDATION,))

# Every claim, in the order the card, What holds and each chapter's verdict cell print them: the card keeps the
# paper's order (§4, §4.1, §5.1, §5.2, §6.1, §6.2, §7), and each of the book's own findings sits where its chapter
# prints it among them. A stand-in claim with ``beside`` is printed on the card beside the paper-shape claim it names,
# which decides the row; a "chapter" claim is printed only by its chapter.
CLAIMS = (
    Entry(name="Joint collapse at the paper's own 10M shape", ref="§4, Table 2",
          decide=paper_shape.claim_paper_shape_collapse, reads=_prefix_reads, row=joint_collapse_paper_shape,
          section=_PAPER_SHAPE, card="paper"),
    Entry(name=_ROUTING_OWN, ref="§7.1-7.2", decide=routing.claim_mixer, reads=_mixer_reads, row=mechanism,
          section=_MECHANISM, card="own"),
    Entry(name="Central contrast at the paper's shape, as far as both runs trained", ref="§4, §6.1",
          decide=paper_shape.claim_prefix_contrast, reads=_prefix_reads, row=early_contrast, section=_PAPER_SHAPE,
          card="own"),
    Entry(name="Layer-0 gradient starved at the paper's own 10M shape", ref="§4.1, Fig. 2a",
          decide=paper_shape.claim_prefix_starvation, reads=_prefix_reads, row=starvation_paper_shape,
          section=_PAPER_SHAPE, card="paper"),
    Entry(name="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual at the paper's own 10M shape",
          ref="§4.1, Fig. 2b",
          decide=growth_10m.claim_prefix_growth,
          reads=lambda ev: dict(table=ev.prefix.table, hist=ev.prefix.histories), row=growth_paper_shape,
          section=_PAPER_SHAPE, card="paper"),
    Entry(name="The joint collapse with the author's dropout", ref="§4, Table 2; NanoGPT_10M.ipynb",
          decide=asymmetry.claim_author_values_collapse,
          reads=lambda ev: dict(table=_author_values(ev).table, floor=ev.floor("joint_collapse")), row=None,
          section="joint_collapse#nanogpt-at-the-stand-in-with-the-author-s-dropout", card="chapter"),
    Entry(name="Joint collapse: every partial nanoGPT configuration ends on the floor", ref="§4, Table 2",
          decide=collapse.claim_joint_collapse, reads=_joint_collapse_reads, row=joint_collapse, section=_SIGNATURE,
          card="paper", beside="Joint collapse at the paper's own 10M shape", more=stand_in_collapse_seeds),
    Entry(name="Layer-0 gradient starved in every collapsed partial configuration, not in Full Residual",
          ref="§4.1, Fig. 2a", decide=collapse.claim_starvation,
          reads=lambda ev: dict(grads=collapse.layer0_grad(ev.histories("joint_collapse")),
                                summaries=ev.summaries("joint_collapse"), floor=ev.floor("joint_collapse")),
          row=starvation, section=_SIGNATURE, card="paper",
          beside="Layer-0 gradient starved at the paper's own 10M shape"),
    Entry(name="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual", ref="§4.1, Fig. 2b",
          decide=collapse.claim_growth_order,
          # the last recorded growth h_L / h_0 of each configuration, at the same seed
          reads=lambda ev: dict(growth=collapse.final_values(ev.histories("joint_collapse"), "hidden_growth"),
                                summaries=ev.summaries("joint_collapse"), floor=ev.floor("joint_collapse")),
          row=growth, section=_SIGNATURE, card="paper",
          beside="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual at the paper's own 10M shape"),
    Entry(name=_GAIN_FATE, ref="§5.1", decide=gain_confound.claim_gain_fate,
          reads=lambda ev: dict(table=_gain_table(ev), others=_gain_seeds(ev)), row=runtime_gain_fate, section=_GAIN,
          card="paper"),
    Entry(name="(b) Loss curves across all runtime gains overlap completely", ref="§5.1",
          decide=gain_confound.claim_gain_absorbed, reads=_gain_absorbed_reads, row=runtime_gain_absorbed,
          section=_GAIN, card="paper"),
    Entry(name=_FIXED_VAL, ref="§5.2", decide=fixed_val_batches.claim_eval_noise,
          reads=lambda ev: dict(gap=fixed_val_batches.gap_vs_noise(_noise(ev)), noise=_noise(ev)), row=fixed_val,
          section="fixed_val_batches#reading-the-result", card="paper"),
    Entry(name="The 10M asymmetry with the author's values", ref="§6.1; AttnOnly_seed_stability.ipynb",
          decide=asymmetry.claim_author_values_asymmetry,
          reads=lambda ev: dict(table=_author_values(ev).table, floor=ev.floor("10m_asymmetry")), row=None,
          section="10m_asymmetry#the-stand-in-with-the-author-s-values", card="chapter"),
    Entry(name="10M asymmetry: AttnOnly leaves the floor in every seed, FFNOnly in none", ref="§6.1, Fig. 4, Phase 3",
          decide=asymmetry.claim_asymmetry,
          reads=lambda ev: dict(summaries=ev.summaries("10m_asymmetry"), floor=ev.floor("10m_asymmetry")),
          row=asymmetry_10m, section=_ASYMMETRY, card="paper"),
    Entry(name="AttnOnly's level at the paper's own 10M shape (Fig. 4, Phase 3)", ref="§6.1, Fig. 4",
          decide=paper_shape.claim_paper_shape_level, reads=_prefix_reads, row=level_paper_shape,
          section=_ASYMMETRY, card="paper"),
    Entry(name="FFNOnly collapses to the No Residual floor", ref="abstract; Table 5 text",
          decide=asymmetry.claim_ffn_equals_noresidual,
          reads=lambda ev: dict(parts=[(ch.scale, s) for ch, s in _ffn_parts(ev)]), row=ffn_equals_noresidual,
          section=_ASYMMETRY, card="paper"),
    # the ordering at 10M, which the paper does not claim: printed by the 10M chapter only, beside its asymmetry
    Entry(name="Ordering and separation at 10M", ref="§6.2.1", decide=asymmetry.claim_separation,
          reads=lambda ev: dict(summaries=ev.summaries("10m_asymmetry"), floor=ev.floor("10m_asymmetry"),
                                paper_scale=ev.chapter("10m_asymmetry").spec.paper_scale),
          row=None, section=_ASYMMETRY, card="chapter"),
    Entry(name="10M asymmetry at the paper's shape, as far as both runs trained", ref="§6.1, Fig. 4",
          decide=paper_shape.claim_prefix_asymmetry, reads=_prefix_reads, row=early_asymmetry, section=_ASYMMETRY,
          card="own"),
    Entry(name="One factor of the bundle decides AttnOnly's escape", ref="§5.2, §8.3", decide=bundle.claim_bundle,
          reads=_bundle_reads, row=None, section="escape_and_bundle#a-rounding-difference-decides-the-escape",
          card="chapter"),
    Entry(name="Switched alone, the schedule, clipping or biases move AttnOnly's escape beyond seed noise",
          ref="§5.2, §8.1", decide=schedule_seeds.claim_schedule_factors,
          reads=lambda ev: dict(effects=schedule_seeds.schedule_effects(_schedule_runs(ev).table)),
          row=schedule_over_seeds, section=_ESCAPE, card="own"),
    Entry(name="A constant learning rate delays or prevents AttnOnly's escape beyond seed noise, at the paper's shape",
          ref="§8.1", decide=schedule_10m.claim_schedule_10m,
          reads=lambda ev: dict(effects=schedule_10m.schedule_10m_effects(schedule_10m.schedule_10m_runs(ev.runs_dir))),
          row=schedule_paper_shape, section=_ASYMMETRY, card="own"),
    Entry(name="The learning rate's first steps decide whether AttnOnly leaves the floor", ref="§4, §8.1",
          decide=schedule_10m.claim_first_steps, reads=_first_steps_reads, row=first_steps,
          section=FIRST_STEPS_SECTION, card="own"),
    Entry(name=_ORDER_124M, ref="§6.2.1, Table 5", decide=asymmetry.claim_separation,
          # the longer-budget runs, which the reason names where AttnOnly never left the floor
          reads=lambda ev: _sweep_124m_reads(ev) | dict(paper_scale="124M", probe=_probe_124m(ev)),
          row=order_124m, section=_SWEEP, card="paper"),
    Entry(name="AttnOnly is seed-sensitive at 124M", ref="§6.2; Table 5", decide=asymmetry.claim_seed_sensitivity,
          reads=_sweep_124m_reads, row=seed_sensitivity_124m, section=_SWEEP, card="paper"),
    Entry(name="Asymmetry at the longer budget", ref="§6.2.1, Table 5", decide=asymmetry.claim_longer_budget,
          reads=lambda ev: dict(probe=_probe_124m(ev)) | _sweep_124m_reads(ev), row=None, section=_SWEEP,
          card="chapter"),
    Entry(name=_ROUTING_PAPER, ref="§7.1-7.2", decide=routing.claim_routing_by_author_rule,
          reads=_routing_paper_reads, row=routing_paper, section=_MECHANISM, card="paper"),
)
