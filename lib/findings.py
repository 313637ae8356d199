"""What this book finds that the paper does not say: claims of the book's own, judged by the same rule
(``verdicts.verdict``, through each chapter's Claim) and printed as the scorecard's rows are, but kept apart from
the paper's claims. What holds lists them; the front page names the early-training readings in one sentence,
outside the card's count."""
from __future__ import annotations

import pandas as pd

from . import plans
from .chapters import mechanism as routing
from .chapters import paper_shape
from .paper import mixer_rule, paper_value
from .rows import IMPL_NAMES, Row, paper_text, prefix_evidence, prefix_rows


def mechanism(runs_dir=None) -> Row:
    """The book's own reading of routing (not the paper's claim), at the `cpu` stand-in (book/mechanism.ipynb):
    listed under what this book finds that the paper does not say."""
    from .chapters.mechanism import floors, like_for_like, mixer_runs, mixer_summary
    claim = ("Cross-position routing (§7.1), as this book reads it: the sublayer that replaces the stream "
             "decides; tested with the position-blind local mixer (§7.2)")
    paper_mixer = paper_value(ref="§7.2", metric="mixer_best_val_loss")
    paper = f"not tested cleanly (AttnOnly + mixer {paper_mixer:.3f} in the anomalous Phase 2)"
    runs = mixer_runs(runs_dir)
    # the book's reading, with the author's rule given beside it for context
    c = routing.claim_mixer(runs.table, like_for_like(floors()), paper_mixer, author_rule=mixer_rule())
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
    summ = mixer_summary(runs.table)
    mixed = summ[summ.mixer == "local"]
    ours = "; ".join(f"{r.config} + mixer {r.mean:.3f}" + (f" ({r.seeds} seeds)" if r.seeds > 1 else "")
                     for r in mixed.itertuples())
    seeds = sorted(set(runs.table[runs.table.mixer == "local"].seed))
    steps = plans.mixer_test()[0].train.max_steps
    return Row(claim=claim, where="§7.1-7.2", paper=paper, ours=ours, scale="stand-in",
               evidence=f"`cpu` stand-in, {steps:,} steps, seeds {', '.join(map(str, seeds))}",
               verdict=c.verdict, why=c.why)


def schedule_paper_shape(runs_dir=None) -> Row:
    """Does a constant learning rate delay or prevent AttnOnly's escape at the paper's own 10M shape, beyond what
    the seed does? Judged by ``chapters.schedule_10m.claim_schedule_10m`` on five seeds a schedule (the rank rule),
    never on one: the paper calls the Phase 2 → Phase 3 discrepancy cross-environment, its cause unknown (§8.1),
    and the Phase-2 notebook trains another schedule than Table 1's (book/reproducibility.md)."""
    from .chapters import schedule_10m
    effects = schedule_10m.schedule_10m_effects(schedule_10m.schedule_10m_runs(runs_dir))
    c = schedule_10m.claim_schedule_10m(effects)
    paper = "not claimed: §8.1 calls the Phase 2 → Phase 3 discrepancy cross-environment, its cause unknown"
    if c.verdict == "NOT TESTED":
        return Row(claim=c.name, where="§8.1", paper=paper, ours=c.facts["trained"], scale="none", evidence="-",
                   verdict=c.verdict, why=c.why)
    return Row(claim=c.name, where="§8.1", paper=paper, ours=" ".join(c.lines), scale="paper shape",
               evidence="10M paper shape, ResidualGPT AttnOnly, 5 seeds a schedule, evaluated every 50 steps",
               verdict=c.verdict, why=c.why)


def early_training_paper_shape(prefix) -> list[Row]:
    """The paper-shape prefixes read early in training (``chapters.paper_shape``'s contrast and asymmetry claims):
    where each run stands by the end of its prefix. The paper gives where its runs end, not where they stand then,
    so these are the book's findings, not the paper's claims; the card's rows on the paper's claims at this shape
    are ``joint_collapse_paper_shape`` (where the run ends) and ``starvation_paper_shape`` (Fig. 2a)."""
    t = prefix.table
    # each claim with the paper's values it is set beside and the runs it reads
    claims = [(paper_shape.claim_prefix_contrast(t), "§4, §6.1", "Table 2: nanoGPT AttnOnly best "
               f"{paper_text('Table 2', 'AttnOnly', 4)} over 3,000 steps; Fig. 4: ResidualGPT AttnOnly "
               f"{paper_text('Fig. 4', 'AttnOnly')}; no step given for either",
               [("nanogpt", "AttnOnly"), ("residualgpt", "AttnOnly")]),
              (paper_shape.claim_prefix_asymmetry(t), "§6.1, Fig. 4", f"AttnOnly {paper_text('Fig. 4', 'AttnOnly')}, "
               f"FFNOnly {paper_text('Fig. 4', 'FFNOnly')} over 3,000 steps; no step given",
               [("residualgpt", "AttnOnly"), ("residualgpt", "FFNOnly")])]
    rows = []
    for c, where, paper, runs in claims:
        found = prefix_rows(t, runs)
        # each run in a few words: where it stands against the floor, and its best
        ours = "; ".join(f"{IMPL_NAMES[r.impl]} {r.config} {paper_shape.where_it_is(r)}, best {r.best_val:.3f}"
                         for r in found) or "no run"
        rows.append(Row(claim=f"{c.name}, early in training", where=where, paper=paper, ours=ours,
                        scale="paper shape" if found else "none", evidence=prefix_evidence(found), verdict=c.verdict,
                        why=c.why))
    return rows


def early_training(runs_dir=None) -> pd.DataFrame:
    """``early_training_paper_shape`` on the released prefixes (or those of ``runs_dir``), as the front page states
    them."""
    return pd.DataFrame([vars(r) for r in early_training_paper_shape(paper_shape.paper_shape_prefix(runs_dir))])


def schedule_over_seeds(runs_dir=None) -> Row:
    """Which single factors move AttnOnly's escape beyond what the seed does, at the `cpu` stand-in
    (book/escape_and_bundle.ipynb, "with seeds"): ``chapters.schedule_seeds.claim_schedule_factors`` over
    ``plans.schedule_seeds``."""
    from .chapters import schedule_seeds
    runs = schedule_seeds.schedule_runs(runs_dir)
    c = schedule_seeds.claim_schedule_factors(schedule_seeds.schedule_effects(runs.table))
    paper = "not isolated: §5.2 and §8.3 (limitation 2) leave the nanoGPT → ResidualGPT bundle's factors bundled"
    done = len(runs.table)
    evidence = (f"`cpu` stand-in, AttnOnly, {done} of {runs.planned} runs, evaluated every "
                f"{plans.schedule_seeds()[0].train.eval_interval} steps, up to {len(plans.SCHEDULE_SEEDS)} seeds "
                f"a factor")
    return Row(claim=c.name, where="§5.2, §8.1", paper=paper,
               ours=" ".join(c.lines) or f"{done} of {runs.planned} runs trained",
               scale="stand-in", evidence=evidence, verdict=c.verdict, why=c.why + ("" if not runs.missing else
                                             " (`python -m lib sweep --plan schedule_seeds` trains the rest)"))


def own_findings(runs_dir=None) -> pd.DataFrame:
    """What this book finds that the paper does not say: claims of the book's own, judged by the same rule, kept
    apart from the paper's claims (the scorecard)."""
    prefix = paper_shape.paper_shape_prefix(runs_dir)
    # Rows of the book's own, kept off the paper's card: the paper does not make these claims.
    rows = [mechanism(runs_dir), *early_training_paper_shape(prefix), schedule_over_seeds(runs_dir),
            schedule_paper_shape(runs_dir)]
    return pd.DataFrame([vars(r) for r in rows])
