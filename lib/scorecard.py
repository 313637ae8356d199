"""The claims scorecard: every claim of the paper, the paper's number beside ours, the evidence it rests on,
and a verdict by the one rule of ``verdicts.verdict``. Computed from ``runs/`` and ``data/paper_results.csv``
each time the book is built; the front page and the closing chapter show it, rendered by ``lib.front_page``.
It has no rule of its own: each row renders a ``lib.chapters`` Claim. The book's own findings, printed as these
rows are, live in ``lib.findings``. Longer than the house's ~350 lines: one row function per claim of the paper
(eleven rows, two of them decided at the paper's shape with the stand-in beside them) and the front page's figure
rows, each short.
"""
from __future__ import annotations

import dataclasses

import pandas as pd

from . import gain, plans, results
from .book import Chapter
from .chapters import asymmetry, fixed_val_batches, gain_confound, paper_shape
from .chapters import joint_collapse as collapse  # the names joint_collapse and mechanism are rows here
from .chapters import mechanism as routing
from .config import PAPER_SEED, get_preset
from .experiment import ESCAPE_MARGIN
from .paper import mixer_rule, paper_value, paper_values
from .rows import Row, paper_text, prefix_evidence, prefix_rows


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


def _chapter(name: str, runs_dir=None) -> Chapter:
    # no parameters: the runs at the stand-in scale the book shows, read from runs_dir, and no banner
    return Chapter.open(name, {}, announce=False, released_dir=runs_dir)


def _range(s: pd.DataFrame) -> str:
    # A range, not a mean: the claims are about every seed, and a mean hides the one left on the floor.
    if s.empty:  # "nan-nan (n=0)" would read as a result
        return "no runs"
    lo, hi = s.best_val_loss.min(), s.best_val_loss.max()
    if f"{lo:.3f}" == f"{hi:.3f}" and len(s) > 1:  # "3.339-3.339" says the seeds agree to the digits shown
        return f"{lo:.3f} (n={len(s)}, all seeds)"
    return f"{lo:.3f}" if len(s) == 1 else f"{lo:.3f}-{hi:.3f} (n={len(s)})"


def _scale(ch: Chapter) -> str:
    """``rows.SCALES``' word for a chapter's runs: a stand-in's, or the paper's own preset (a retrain on a GPU)."""
    return "stand-in" if ch.stand_in else "paper shape"


def _evidence(ch: Chapter, s: pd.DataFrame) -> str:
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


def joint_collapse(jc: Chapter, summ: pd.DataFrame, floor: float, edge: str | None = None,
                   robust: str | None = None) -> Row:
    """Table 2 at the stand-in, judged by ``chapters.joint_collapse.claim_joint_collapse`` (``edge``: its
    knife-edge, ``released_rounding_edge``; ``robust``: the escapes that survive rounding)."""
    c = collapse.claim_joint_collapse(summ, floor, edge, robust=robust)
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


def joint_collapse_paper_shape(prefix) -> Row:
    """nanoGPT AttnOnly at the paper's exact 10M shape, judged by
    ``chapters.paper_shape.claim_paper_shape_collapse``."""
    c = paper_shape.claim_paper_shape_collapse(prefix.table)
    claim = "Joint collapse at the paper's own 10M shape"
    # the paper's full run: Table 2's value over the 10M preset's whole schedule
    full = get_preset("10M", "nanogpt", "AttnOnly").train.max_steps
    paper = f"nanoGPT AttnOnly best {paper_text('Table 2', 'AttnOnly', 4)} over {full:,} steps"
    # no "trained" fact: no AttnOnly prefix is released, and the claim's reason gives the command and its cost
    if "trained" not in c.facts:
        return Row(claim=claim, where="§4, Table 2", paper=paper, ours="no run", scale="none", evidence="-",
                   verdict=c.verdict, why=c.why, **_PAPER_SHAPE_COLLAPSE)
    f = c.facts
    ours = f"AttnOnly best {f['best']:.3f}, " + (f"left the floor at step {f['left_at']}" if f["left_at"] is not None
                                                 else f"on the floor for the {f['trained']}")
    # A prefix names how far it trained ("first 300 of 3,000 steps"): never read as where the run ends.
    if f["prefix"] and c.verdict != "NOT TESTED":
        claim += f" ({f['trained']})"
    # "10M paper shape", not "stand-in": what front_page.abstract counts as judged at the paper's own shape
    return Row(claim=claim, where="§4, Table 2", paper=paper, ours=ours, scale="paper shape",
               evidence=f"10M paper shape, {f['trained']}, seed {f['seed']}", verdict=c.verdict,
               why=c.why, **_PAPER_SHAPE_COLLAPSE)


# Where the joint collapse at the paper's shape is decided, and the whole runs that will decide it
_PAPER_SHAPE_COLLAPSE = dict(short="the joint collapse",
                             section="joint_collapse#at-the-paper-s-own-shape-the-first-steps-of-the-exact-recipe",
                             plan="10m_whole")


def stand_in_collapse_seeds(runs_dir=None) -> str:
    """The `cpu` stand-in's nanoGPT AttnOnly beyond the joint-collapse chapter's two seeds, for the row decided at the
    paper's shape: its own recipe over the schedule plan's five seeds, and with the author's dropout 0.2
    (``plans.author_values``), each seed's escape step."""
    from .chapters.asymmetry import author_value_runs
    from .chapters.escape_map import escape_label
    from .chapters.schedule_seeds import baseline_escapes
    seeds = baseline_escapes("nanogpt", runs_dir)
    t = author_value_runs(runs_dir).table
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


def paper_shape_first(stand_in: Row, paper_shape: Row, more: str = "") -> Row:
    """One claim judged at the `cpu` stand-in and at the paper's own 10M shape, as one row. Where the paper's shape
    has runs for it, they decide the row (its verdict, numbers and evidence: what the tally and the abstract count);
    the stand-in's verdict is printed beside it as the stand-in's (``Row.stand_in``) and counted nowhere. Where
    the two come out opposite, the row says that the stand-in departs from the paper's model on this claim: a finding
    about the stand-in, not a contradiction of the paper. Without paper-shape runs the stand-in decides. ``more``:
    the stand-in's further evidence on the claim, shown whole beside its verdict."""
    if paper_shape.scale != "paper shape":
        return stand_in
    note = f"{stand_in.verdict} ({stand_in.evidence}): {stand_in.ours}" + (f"; {more}" if more else "")
    if {stand_in.verdict, paper_shape.verdict} == {"HOLDS", "CONTRADICTED"}:
        note += "; on this claim the stand-in departs from the paper's model"
    return dataclasses.replace(paper_shape, stand_in=note)


def starvation(jc: Chapter, summ: pd.DataFrame, hist: pd.DataFrame, floor: float) -> Row:
    """Fig. 2a, judged by ``chapters.joint_collapse.claim_starvation``."""
    # Fig. 2a's quantity at seed PAPER_SEED, the released run (the paper's Fig. 2 is the seed-1337 run)
    grads = collapse.layer0_grad(hist)
    c = collapse.claim_starvation(grads, summ, floor)
    g = grads.set_index("config")
    # the step it stays starved from, only where the claim counts it starved
    ours = "; ".join(f"{k} {g.final[k]:.2g}" + (f" (from step {int(g.starved_from_step[k])})"
                                               if c.facts["starved"][k] else "") for k in g.index) or "no runs"
    return Row(claim="Layer-0 gradient starved in every collapsed partial configuration, not in Full Residual",
               where="§4.1, Fig. 2a", paper=_fig2a_paper(), ours=ours,
               scale="stand-in", evidence=f"{jc.scale} stand-in, nanogpt, seed {PAPER_SEED}", verdict=c.verdict,
               why=c.why, short="layer-0 gradient starvation", section=_SIGNATURE, plan="joint_collapse")


# the joint-collapse chapter's closing verdicts: Table 2 and Fig. 2 at the stand-in
_SIGNATURE = "joint_collapse#what-agrees-with-the-paper-and-what-does-not"


def growth(jc: Chapter, summ: pd.DataFrame, hist: pd.DataFrame, floor: float) -> Row:
    """Fig. 2b, judged by ``chapters.joint_collapse.claim_growth_order``."""
    # the last recorded growth h_L / h_0 of each configuration, at the same seed
    c = collapse.claim_growth_order(collapse.final_values(hist, "hidden_growth"), summ, floor)
    gr = c.facts["growth"]
    ours = ", ".join(f"{k} {gr[k]:.2f}×" for k in ("AttnOnly", "FFNOnly", "FullResidual") if k in gr) or "no runs"
    return Row(claim="Hidden-state growth orders AttnOnly > FFNOnly > Full Residual", where="§4.1, Fig. 2b",
               paper=", ".join(f"{paper_text('§4.1 Fig. 2b', k, 2, metric='hidden_growth')}×"
                         for k in ("AttnOnly", "FFNOnly", "FullResidual")),
               ours=ours, scale="stand-in", evidence=f"{jc.scale} stand-in, nanogpt, seed {PAPER_SEED}",
               verdict=c.verdict, why=c.why, short="the order of hidden-state growth", section=_SIGNATURE,
               plan="joint_collapse")


def runtime_gain(gc: Chapter) -> list[Row]:
    """§5.1 in two parts: (a) does a runtime gain decide whether AttnOnly leaves the floor, (b) do the runtime
    curves that leave it coincide."""
    curves = gc.gain_curves()
    # released runs only: a reader's retrain never changes the front page
    curves = curves[curves.source == "released"] if "source" in curves else curves
    summ = gc.summaries()
    table = gain.gain_table(summ[summ.source == "released"]) if len(summ) else gain.gain_table(summ)
    bound = paper_value(ref="§5.1", metric="runtime_gain_spread")  # §5.1: "total spread < 0.002 at any step"
    fate = gain_confound.claim_gain_fate(table)
    # the spreads computed once, so the row prints the very numbers the claim judges
    sp = gain_confound.gain_spreads(curves, gc.floor())
    absorbed = gain_confound.claim_gain_absorbed(curves, gc.floor(), bound, spreads=sp,
                                                 twins=gain_confound.twin_curves(gc.released_dir))
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
    ev = _evidence(gc, summ)
    paper_gains = ", ".join(f"{g:g}" for g in gain.GAINS_PAPER)
    # Two rows for §5.1's one sentence: where each run ends (a), and whether the curves coincide (b).
    return [Row(claim=f"(a) Runtime gains g ∈ {{{paper_gains}}} are equivalent: none decides whether AttnOnly leaves "
                "the floor",
                where="§5.1", paper="all gain values functionally equivalent",
                ours=f"left the floor at g = {', '.join(left) or 'none'}; stayed at g = {', '.join(stayed) or 'none'}"
                + weight if len(esc) else "no runs", scale=_scale(gc), evidence=ev,
                verdict=fate.verdict, why=fate.why, short="that runtime gains are equivalent",
                section="gain_confound#reading-the-result", plan="gain_confound"),
            Row(claim="(b) Loss curves across all runtime gains overlap completely", where="§5.1",
                paper=f"spread < {bound} at any step",
                # from gain.ABSORB_STEP: §5.1 says AdamW absorbs the gain "within ≈200 steps"
                ours=f"spread from step {gain.ABSORB_STEP} across the four runtime gains {f['spread']:.4f}" + (
                    f"; among those that left the floor {f['spread_left']:.4f}" if f["spread_left"] is not None else "")
                + (f"; rounding-only twin {f['null']:.4f}" if f["null"] is not None else "; rounding null not measured")
                if (f := absorbed.facts) else "-", scale=_scale(gc), evidence=ev,
                verdict=absorbed.verdict, why=absorbed.why, short="that the runtime-gain curves overlap",
                section="gain_confound#reading-the-result", plan="gain_twins")]




def fixed_val(fv: Chapter) -> Row:
    """§5.2, judged by ``chapters.fixed_val_batches.claim_eval_noise``."""
    # The heaviest cell of the front page: every checkpoint's 200 random batches, cached (results.cached_losses).
    noise = fv.val_noise()  # fixed_val_batches.NOISE_BATCHES random batches a checkpoint, cached and shared
    noise = noise[noise.source == "released"]
    c = fixed_val_batches.claim_eval_noise(fixed_val_batches.gap_vs_noise(noise), noise)
    # a 50-batch evaluation: the stand-in's eval_batches, the size nanoGPT's random evaluation averages over. The std
    # is the gap's (the two checkpoints' evaluation noise in quadrature, ``gap_vs_noise``), not one evaluation's.
    ours = (f"noise std of the gap between two 50-batch random evaluations {c.facts['noise_std']:.4f}, against the "
            f"escape margin {ESCAPE_MARGIN} and an AttnOnly-FFNOnly gap of {c.facts['gap']:.3f} "
            f"({c.facts['gap_over_noise']:,.0f} std)"
            if c.facts else "no checkpoints")
    # §5.2's shift: AttnOnly under nanoGPT (Table 2) and under ResidualGPT (Phase 3, Fig. 4), at §5.2's two digits
    phase3 = paper_text('Fig. 4', 'AttnOnly', 2, seeds=False).split(' ±')[0]
    shift = f"{paper_text('Table 2', 'AttnOnly', 2)} → {phase3}"
    return Row(claim="Random validation batches add noise that can hide slow progress (one relevant difference in "
               f"AttnOnly's {shift} shift)", where="§5.2", paper="not quantified; not isolated causally", ours=ours,
               scale="stand-in",
               evidence=f"cpu stand-in, seed {PAPER_SEED} checkpoints, noise from "
                        f"{fixed_val_batches.NOISE_BATCHES} random batches each",
               verdict=c.verdict, why=c.why, short="that random validation batches hide slow progress",
               section="fixed_val_batches#reading-the-result", plan="fixed_val_batches")


def asymmetry_10m(ch: Chapter, summ: pd.DataFrame, floor: float) -> Row:
    """Table 3, judged by ``chapters.asymmetry.claim_asymmetry``."""
    c = asymmetry.claim_asymmetry(summ, floor)
    # k=k fixes each configuration at its own step: the usual guard against a late-bound loop variable
    a, f = (results.pooled(summ)[lambda s, k=k: s.config == k] for k in ("AttnOnly", "FFNOnly"))
    return Row(claim="10M asymmetry: AttnOnly leaves the floor in every seed, FFNOnly in none",
               where="§6.1, Table 3, Phase 3",
               # Fig. 4 (Phase 3, the primary 10M estimate of §8.1), not Table 3's original record
               paper=f"AttnOnly {paper_text('Fig. 4', 'AttnOnly')}, FFNOnly {paper_text('Fig. 4', 'FFNOnly')}",
               ours=f"AttnOnly {_range(a)}; FFNOnly {_range(f)}", scale=_scale(ch), evidence=_evidence(ch, summ),
               # what the row does not judge: the level, which only the paper's shape can (plans.paper_10m_whole)
               verdict=c.verdict, why=c.why + (
                   f"; which configurations leave the floor is judged, not the level: Phase 3's AttnOnly "
                   f"{paper_text('Fig. 4', 'AttnOnly', seeds=False)} and every seed at least "
                   f"{paper_value(ref='abstract Fig. 4a', metric='min_gap_to_floor'):.2f} below the FFNOnly floor "
                   f"are for the paper's shape to judge (its whole ResidualGPT AttnOnly run, `--plan 10m_whole`)"
                   if ch.stand_in else ""), short="the 10M asymmetry",
               section="10m_asymmetry#reading-the-result",
               plan="10m_asymmetry")


def ffn_equals_noresidual(chapters: list[tuple[Chapter, pd.DataFrame]]) -> Row:
    """Judged by ``chapters.asymmetry.claim_ffn_equals_noresidual``."""
    # every scale with both configurations: the 10M stand-in and the 124M stand-in
    c = asymmetry.claim_ffn_equals_noresidual([(ch.scale, summ) for ch, summ in chapters])
    # the paper's numbers from Table 5's text
    ffn, nores = (paper_value(ref="Table 5", config=k, metric="best_val_loss") for k in ("FFNOnly", "NoResidual"))
    gap = paper_value(ref="Table 5 text", metric="gap_to_noresidual")
    return Row(claim="FFNOnly collapses to the No Residual floor", where="abstract; Table 5 text",
               paper=f"124M: {ffn:.3f} vs {nores:.3f} ({gap:.3f})",
               ours="; ".join(c.lines) or "no runs", scale="stand-in",
               evidence=" and ".join(f"{ch.scale} stand-in" for ch, _ in chapters),
               verdict=c.verdict, why=c.why, short="FFNOnly's collapse to the No Residual floor",
               section="10m_asymmetry#reading-the-result", plan="10m_asymmetry")


def sweep_124m(ch: Chapter, summ: pd.DataFrame, floor: float) -> list[Row]:
    """Table 5, judged by ``chapters.asymmetry.claim_separation`` and ``claim_seed_sensitivity``."""
    s = results.pooled(summ)
    a, f, full = (s[s.config == k] for k in ("AttnOnly", "FFNOnly", "FullResidual"))
    # probe(): the longer-budget runs, which the reason names where AttnOnly never left the floor
    sep = asymmetry.claim_separation(summ, floor, "124M", ch.probe())
    sens = asymmetry.claim_seed_sensitivity(summ, floor)
    # 16 runs: five seeds of three configurations and the NoResidual anchor; 131,072 tokens x 20,000 steps each
    cost = "; the 124M sweep itself is 16 runs of 2.6B tokens, roughly 70-110 A100-hours"
    gap = sep.facts.get("min_gap")
    return [Row(claim="124M ordering and separation: Full < every AttnOnly seed < every FFNOnly seed",
                where="§6.2.1, Table 5",
                paper=" < ".join(paper_text("Table 5", k, seeds=False) for k in ("FullResidual", "AttnOnly", "FFNOnly"))
                + f"; minimum gap {paper_value(ref='Table 5 text', metric='min_gap_to_ffnonly'):.3f}",
                ours=f"Full {_range(full)}; AttnOnly {_range(a)}; FFNOnly {_range(f)}"
                + (f"; minimum gap {gap:.3f}" if gap is not None else ""),
                # the cost only where AttnOnly never left the floor: then only the paper-scale sweep could answer
                scale=_scale(ch), evidence=_evidence(ch, summ), verdict=sep.verdict,
                why=sep.why + (cost if not sep.facts.get("attn_left") else ""), short="the 124M ordering",
                section="124m_sweep#reading-the-result", plan="124m_sweep"),
            Row(claim="AttnOnly is seed-sensitive at 124M",
                where=f"§6.2 (historical seeds {_historical_124m()}); Table 5",
                # Table 5's std and n, read from the paper file; the range from its best_val_min and best_val_max rows
                paper=f"std {paper_values(ref='Table 5', config='AttnOnly', metric='best_val_loss')['std'].iloc[0]:.3f}"
                f" "
                f"over {int(paper_values(ref='Table 5', config='AttnOnly', metric='best_val_loss').n.iloc[0])} seeds "
                f"(range {paper_text('Table 5', 'AttnOnly', seeds=False, metric='best_val_min')}-"
                f"{paper_text('Table 5', 'AttnOnly', seeds=False, metric='best_val_max')})",
                ours=f"AttnOnly {_range(a)}",
                scale=_scale(ch), evidence=_evidence(ch, summ), verdict=sens.verdict,
                why=sens.why + (cost if not sep.facts.get("attn_left") else ""),
                short="AttnOnly's seed sensitivity at 124M", section="124m_sweep#reading-the-result",
                plan="124m_sweep")]


def routing_paper(runs_dir=None) -> Row:
    """§7.2's local-mixer test as the paper poses it, judged by the author's rule (``chapters.mechanism.
    claim_routing_by_author_rule``), at the `cpu` stand-in (book/mechanism.ipynb)."""
    from .chapters.mechanism import floors, like_for_like, mixer_runs
    claim = "Cross-position routing (§7.1): with attention replaced by a position-blind mixer, AttnOnly collapses"
    paper_mixer = paper_value(ref="§7.2", metric="mixer_best_val_loss")
    paper = f"not tested cleanly (AttnOnly + mixer {paper_mixer:.3f} in the anomalous Phase 2)"
    runs = mixer_runs(runs_dir)
    # the bigram floor on the fixed batches: no position-blind model can go below it on this data
    # §7.2's mixer value is 10M on the same characters, so it is placed against the same bigram floor
    c = routing.claim_routing_by_author_rule(runs.table, mixer_rule(), like_for_like(floors(orders=(1, 2)))[2],
                                             paper_mixer)
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


_ROUTING = dict(short="cross-position routing", section="mechanism#the-paper-s-local-mixer-test-under-clean-conditions",
                plan="mixer_test")


def scorecard(runs_dir=None) -> pd.DataFrame:
    """Every claim, computed from the released runs (``runs_dir`` None), or from a folder laid out like ``runs/``
    (a GPU sweep's ``--runs-dir``). None is passed down as it is: each reader looks up runs/ when called."""
    # each chapter opened once: every row below reads the same runs the chapter pages show
    jc, gc, fv, a10, s124 = (_chapter(n, runs_dir) for n in ("joint_collapse", "gain_confound", "fixed_val_batches",
                                                              "10m_asymmetry", "124m_sweep"))
    jc_s, jc_h, jc_f = jc.summaries(), jc.histories(), jc.floor()
    a10_s, s124_s = a10.summaries(), s124.summaries()
    s124_s = s124_s[s124_s.budget == s124.experiments()[0].train.max_steps]
    # the rounding-only flip of the bundle chapter: the joint-collapse verdict's knife-edge
    edge, robust = collapse.released_rounding_edge(runs_dir), collapse.released_robust_escapes(runs_dir)
    prefix = paper_shape.paper_shape_prefix(runs_dir)  # the paper-shape prefixes, read once for their two rows
    # In the paper's order: §4, §4.1, §5.1, §5.2, §6.1, §6.2, §7; a claim judged at the paper's own shape and at the
    # stand-in is one row, decided at the paper's shape where it has runs (paper_shape_first).
    rows = [paper_shape_first(joint_collapse(jc, jc_s, jc_f, edge, robust), joint_collapse_paper_shape(prefix),
                              stand_in_collapse_seeds(runs_dir)),
            paper_shape_first(starvation(jc, jc_s, jc_h, jc_f), starvation_paper_shape(prefix)),
            growth(jc, jc_s, jc_h, jc_f),
            *runtime_gain(gc),
            fixed_val(fv),
            asymmetry_10m(a10, a10_s, a10.floor()), ffn_equals_noresidual([(a10, a10_s), (s124, s124_s)]),
            *sweep_124m(s124, s124_s, s124.floor()), routing_paper(runs_dir)]
    return pd.DataFrame([vars(r) for r in rows])  # a dataclass per row, a column per field


def starvation_paper_shape(prefix) -> Row:
    """Fig. 2a at the paper's exact 10M shape, judged by ``chapters.paper_shape.claim_prefix_starvation``: the
    paper's claim ("exactly 0.000 from step 300 onward"), read at step 300, which the nanoGPT prefixes reach (Full
    Residual, the control, at its own shorter prefix)."""
    c = paper_shape.claim_prefix_starvation(prefix.table)
    found = prefix_rows(prefix.table, [("nanogpt", k) for k in ("AttnOnly", "FFNOnly", "FullResidual")])
    # a prefix with no evaluation after step 0 (or trained without diagnostics) has no gradient to show yet
    ours = "; ".join(f"{r.config} " + ("no gradient recorded" if pd.isna(r.layer0_grad) else
                                       f"{r.layer0_grad:.2g} at step {int(r.steps):,}") for r in found) or "no run"
    return Row(claim="Layer-0 gradient starved at the paper's own 10M shape (at step 300, Fig. 2a's first starved "
                     "step)",
               where="§4.1, Fig. 2a", paper=_fig2a_paper(), ours=ours, scale="paper shape" if found else "none",
               evidence=prefix_evidence(found), verdict=c.verdict, why=c.why, short="layer-0 gradient starvation",
               section=_PAPER_SHAPE_COLLAPSE["section"], plan="10m_prefix")


# The front page's figure: each claim with a number, by its ``Row.short``: the paper's reference and phase, the chapter
# whose stand-in runs judge it, and the implementation whose paper-shape runs do (None: no paper-shape run).
LEAD_GROUPS = (("the joint collapse", "Table 2", None, "joint_collapse", "nanogpt"),
               ("the 10M asymmetry", "Fig. 4", "phase3", "10m_asymmetry", "residualgpt"),
               ("the 124M ordering", "Table 5", "controlled", "124m_sweep", None))


def lead_rows(card: pd.DataFrame, runs_dir=None) -> pd.DataFrame:
    """``plots.lead_figure``'s rows, per claim of ``LEAD_GROUPS``: each best loss as its distance above the No
    Residual loss of its own sweep (``below``: 0 is collapsed onto No Residual), AttnOnly and FFNOnly, with Full
    Residual's as the scale's other end (``full``). The paper's means (and Table 5's seed range, ``lo``-``hi``), the
    paper-shape runs (against the unigram floor, the loss No Residual reaches on these characters: no No Residual run
    at the paper's shape is trained), and the stand-in's runs, one row per released seed. ``verdict``: the claim's
    verdict as the card shows it (with the stand-in's beside it), ``why`` its reason."""
    rows = []
    for short, ref, phase, chapter, impl in LEAD_GROUPS:
        claim = card[card.short == short].iloc[0]
        shown = claim.verdict + (f" (the stand-in: {claim.stand_in.split(' (')[0]})" if claim.stand_in else "")
        group = dict(group=f"{short[0].upper()}{short[1:]} ({claim['where']})", verdict=shown,
                     why=claim.why, scale=claim.scale)
        where = dict(ref=ref, metric="best_val_loss") | ({"phase": phase} if phase else {})
        p = paper_values(**where).set_index("config")
        nores = p.value["NoResidual"]
        # the seeds each of the paper's means is over, on one line for the claim: "8 seeds; FFNOnly 3"
        n = {k: int(p.n[k]) if pd.notna(p.n[k]) else 1 for k in ("AttnOnly", "FFNOnly")}
        seed = f", seed {int(p.seed['AttnOnly'])}" if pd.notna(p.seed["AttnOnly"]) else ""  # Table 2's one run
        seeds = (f", {n['AttnOnly']} seeds" + (f" (FFNOnly {n['FFNOnly']})" if n["FFNOnly"] != n["AttnOnly"] else "")
                 if max(n.values()) > 1 else seed)
        for config in ("AttnOnly", "FFNOnly"):
            lo = hi = None
            if len(paper_values(ref=ref, config=config, metric="best_val_max")):  # only Table 5 gives a range
                lo = paper_value(ref=ref, config=config, metric="best_val_min") - nores
                hi = paper_value(ref=ref, config=config, metric="best_val_max") - nores
            rows.append(group | dict(label=f"paper: {ref}{seeds}", source="paper",
                                     config=config, seed=None, above=p.value[config] - nores, lo=lo, hi=hi,
                                     full=p.value["FullResidual"] - nores))
        if impl is not None:
            t = paper_shape.paper_shape_prefix(runs_dir).table
            for config in ("AttnOnly", "FFNOnly"):
                r = paper_shape.run_row(t, impl, config) if len(t) else None
                if r is not None:
                    rows.append(group | dict(label=f"ours: the paper's 10M shape, {r.trained}",
                                             source="paper shape", config=config, seed=int(r.seed),
                                             above=r.best_val - r.floor, lo=None, hi=None, full=None))
        ch = _chapter(chapter, runs_dir)
        summ = results.pooled(ch.summaries())
        summ = summ[summ.budget == ch.experiments()[0].train.max_steps]  # the preset's budget only
        means = summ.groupby("config").best_val_loss.mean()
        if "NoResidual" not in means:
            continue
        label = f"ours: {ch.scale} stand-in, {summ.seed.nunique()} seeds"
        full = means.get("FullResidual", float("nan")) - means.NoResidual
        rows += [group | dict(label=label, source="stand-in", config=r.config, seed=int(r.seed),
                              above=r.best_val_loss - means.NoResidual, lo=None, hi=None, full=full)
                 for r in summ[summ.config.isin(["AttnOnly", "FFNOnly"])].itertuples()]
    return pd.DataFrame(rows)
