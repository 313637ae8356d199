"""book/124m_sweep.ipynb: the search for a stand-in that shows the 124M
phenomenon, and the rule that decides it.

The rule (``choose``) was committed before the first probe was trained (issue 60). A probe qualifies
when, at its stop, Full Residual ends at least ``FULL_BELOW`` below the floor (the stand-in learns
beyond a unigram model), FFNOnly stays on the floor, and AttnOnly leaves it at one seed or more
(``plans.SEARCH_SEEDS``): the 124M's phenomenon, AttnOnly escaping where FFNOnly does not. Among the
qualifying probes the one with the fewest departures from the 124M preset wins (counted field by
field as the limitations page counts them, plus one where the probe stops before its schedule's
end), then the cheapest (tokens trained per run), then the first listed. The search is decided when
every listed probe is, or as soon as a qualifying probe comes before every undecided one in that
order (none of those could then be chosen). A probe whose AttnOnly stays on the floor at both seeds
is decided without its controls; one whose AttnOnly leaves at one seed needs both controls. If none
qualifies, no stand-in is chosen and the 124M verdicts stay NOT TESTABLE HERE.

The floor is each run's own unigram floor (its whole validation split,
``summary["unigram_floor"]``), and "leaves the floor" is the book's one test
(``thresholds.left_floor``, the escape margin), as the run recorded it.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from ..engine import plans
from ..engine.config import PAPER_SEED, departures, get_preset
from ..engine.results import as_released, left_out, usable
from ..engine.runs import RUNS_DIR
from ..engine.thresholds import ESCAPE_MARGIN, left_floor
from .paper import author_124m_escape

# Full Residual must end this far below the floor: a stand-in whose Full Residual learns context
FULL_BELOW = 0.5
# a probe stops short of its schedule's end: a partial run counts
TRAINED = ("complete", "partial", "diverged")


def probe_departures(probe: plans.Probe) -> dict:
    """What a probe's runs change from the 124M preset, field by field
    (``config.departures``), and the steps trained where the probe stops before its
    schedule's end: name -> (124M's value, the probe's)."""
    exp, paper = plans.probe_runs(probe)[("AttnOnly", PAPER_SEED)], get_preset("124M")
    out = departures(exp, paper)
    if probe.stop < exp.train.max_steps:
        out["steps trained"] = (paper.train.max_steps, probe.stop)
    return out


def probe_tokens(probe: plans.Probe) -> int:
    """Tokens one run of the probe trains on: its cost, machine-independent."""
    exp = plans.probe_runs(probe)[("AttnOnly", PAPER_SEED)]
    return probe.stop * exp.train.tokens_per_step * exp.model.block_size


def _trained(probe: plans.Probe, runs_dir) -> dict:
    """(configuration, seed) -> summary of each of the probe's runs trained exactly to its stop
    (or diverged before it) and consistent, with the run's threads (env.json). A run
    continued past the stop is not the probe's: it is named and left out, never read at a
    later step than the table says."""
    located = as_released(list(plans.probe_runs(probe).values()), runs_dir)
    for line in left_out(located, TRAINED):
        print(line)
    out = {}
    for e, rd, _ in usable(located, TRAINED):
        s = rd.summary
        if s.get("status") != "diverged" and s.get("steps", 0) > probe.stop:
            print(
                f"left out: {rd.path} trained to step {s['steps']:,}, past the probe's stop at "
                f"{probe.stop:,}"
            )
        elif s.get("status") == "diverged" or s.get("steps", 0) == probe.stop:
            env = rd.read_json("env.json")
            out[(e.config_name, e.seed)] = {
                **s,
                "threads": env.get("threads") if isinstance(env, dict) else None,
            }
    return out


def _left(summary: dict | None) -> bool | None:
    """Did the run leave the floor (None: not trained)? A diverged run did not."""
    if summary is None:
        return None
    return summary.get("status") != "diverged" and summary.get("escape_step") is not None


def probe_row(probe: plans.Probe, runs: dict) -> dict:
    """One row of the search table from ``runs`` ((configuration, seed) ->
    summary, the runs trained so far)."""
    row = {
        "probe": probe.name,
        "departures": len(probe_departures(probe)),
        "tokens per run": probe_tokens(probe),
        "stop": probe.stop,
    }
    for seed in plans.SEARCH_SEEDS:
        s = runs.get(("AttnOnly", seed))
        row[f"AttnOnly {seed} escape"] = None if s is None else s.get("escape_step")
        row[f"AttnOnly {seed} best"] = None if s is None else s.get("best_val_loss")
    full, ffn = runs.get(("FullResidual", PAPER_SEED)), runs.get(("FFNOnly", PAPER_SEED))
    row["Full Residual final"] = (
        None if full is None or full.get("status") == "diverged" else full["final_val_loss"]
    )
    row["FFNOnly best"] = None if ffn is None else ffn.get("best_val_loss")
    floors = [s["unigram_floor"] for s in runs.values() if s.get("unigram_floor") is not None]
    row["floor"] = floors[0] if floors else None
    attn = [_left(runs.get(("AttnOnly", s))) for s in plans.SEARCH_SEEDS]
    # "at one seed or more": known to be yes as soon as one seed has left, whatever the other does
    row["AttnOnly left"] = True if any(attn) else None if None in attn else False
    row["Full Residual learns"] = (
        None
        if full is None
        else full.get("status") != "diverged"
        and full["final_val_loss"] <= full["unigram_floor"] - FULL_BELOW
    )
    # a diverged FFNOnly shows nothing about the floor: it does not "stay on it"
    row["FFNOnly stays"] = (
        None if ffn is None else ffn.get("status") != "diverged" and not _left(ffn)
    )
    row["qualifies"] = qualifies(row)
    # what the trained runs cost here
    row["minutes"] = sum(s.get("wall_s") or 0 for s in runs.values()) / 60
    row["threads"] = sorted({s["threads"] for s in runs.values() if s.get("threads")})
    return row


def qualifies(row: dict) -> bool | None:
    """The rule's test of one probe: None while undecided (AttnOnly not trained at every search
    seed, or it left and a control is not trained yet)."""
    if row["AttnOnly left"] is None:
        return None
    if not row["AttnOnly left"]:
        return False
    if row["Full Residual learns"] is None or row["FFNOnly stays"] is None:
        return None
    return bool(row["Full Residual learns"] and row["FFNOnly stays"])


def _order(table: pd.DataFrame) -> pd.DataFrame:
    # the rule's order: fewest departures, then fewest tokens, then the list's order
    return table.assign(order=range(len(table))).sort_values(
        ["departures", "tokens per run", "order"]
    )


def choose(table: pd.DataFrame) -> str | None:
    """The chosen probe's name, or None (the search undecided, or no probe qualifies: ``decided``
    tells which). ``table``: one row per listed probe, in the list's order, with ``departures``,
    ``tokens per run`` and ``qualifies``."""
    if not decided(table):
        return None
    ok = _order(table)
    ok = ok[ok["qualifies"] == True]  # noqa: E712 (an object column: True, False or None)
    return None if ok.empty else ok.iloc[0]["probe"]


def decided(table: pd.DataFrame) -> bool:
    """Every listed probe decided (``qualifies`` True or False), or a qualifying probe
    comes before every undecided one in the rule's order: whatever their runs show, none
    of those could be chosen, so the choice is the one the whole list would give, and
    their runs need not be trained."""
    if not len(table):
        return False
    for _, row in _order(table).iterrows():
        # None or NaN: undecided
        if row["qualifies"] is None or row["qualifies"] != row["qualifies"]:
            return False
        if row["qualifies"]:
            return True
    return True


def search_table(runs_dir=RUNS_DIR) -> pd.DataFrame:
    """The search as a table: one row per probe of ``plans.SEARCH_PROBES``,
    from the runs in ``runs_dir``."""
    return pd.DataFrame([probe_row(p, _trained(p, runs_dir)) for p in plans.SEARCH_PROBES])


def rule_text() -> str:
    """The search's probes and rule in words for the 124M page, read from
    ``plans`` and this module's constants."""
    seeds = " or ".join(map(str, plans.SEARCH_SEEDS))
    corpora = sorted({p.scale for p in plans.SEARCH_PROBES})
    return (
        f"Each of the {len(plans.SEARCH_PROBES)} probes is ResidualGPT at the first stand-in's "
        "model (12 layers, width 128, GPT-2 tokens) with the 124M's peak rate, final rate and "
        "dropout, and one or two levers: more tokens a step, the 124M's own slow warm-up (cut "
        f"short, so its rate never reaches the peak), or another corpus ({len(corpora) - 1} other: "
        "the State of the Union addresses). A probe qualifies when Full Residual ends at least "
        f"{FULL_BELOW} below its floor, FFNOnly stays on it, and AttnOnly leaves it at seed "
        f"{seeds}. Among those, the fewest fields that differ from the 124M preset wins, then the "
        "fewest tokens. Several probes tie on both, so the list's order can decide: it was set "
        "before any probe had run, with the 124M's own schedule first."
    )


def author_escape_shown() -> pd.DataFrame:
    """What the author's 124M notebooks printed of AttnOnly early in training
    (``paper.author_124m_escape``), as the 124M page shows it: the notebook and cell, the seed, the
    step, the validation loss and the rate then."""
    a = author_124m_escape()
    return pd.DataFrame(
        {
            "notebook": a.source,
            "cell": a.cell,
            "seed": a.seed,
            "step": a.step,
            "val loss": a.val_loss,
            "learning rate then": a.lr.map("{:g}".format),
            "printed": a.printed,
        }
    )


def _yes(v) -> str:
    return "pending" if v is None or v != v else ("yes" if v else "no")


def _loss(v) -> str:
    return "not trained" if v is None or v != v else f"{v:.3f}"


def _escape(best, step) -> str:
    if best is None or best != best:
        return "not trained"
    return f"{best:.3f}; never" if step is None or step != step else f"{best:.3f}; step {int(step)}"


def search_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The search table as the 124M page shows it: each probe's levers and departures from
    the 124M preset, AttnOnly's best and escape step at each seed, the controls, whether
    it qualifies, and what it cost."""
    rows = []
    for r, p in zip(table.to_dict("records"), plans.SEARCH_PROBES):
        row = {
            "probe": r["probe"],
            "departures from 124M": r["departures"],
            "tokens per run": f"{r['tokens per run']:,}",
            "stop": f"{r['stop']:,}",
        }
        for seed in plans.SEARCH_SEEDS:
            # the best loss, then where it left the floor (a reader took the step for the best's)
            row[f"AttnOnly {seed}: best; left the floor at"] = _escape(
                r[f"AttnOnly {seed} best"], r[f"AttnOnly {seed} escape"]
            )
        row["floor"] = _loss(r["floor"]).replace("not trained", "-")
        row["Full Residual, end"] = _loss(r["Full Residual final"])
        row["FFNOnly, best"] = _loss(r["FFNOnly best"])
        row["qualifies"] = _yes(r["qualifies"])
        if row["qualifies"] == "pending" and decided(table):
            row["qualifies"] = "not needed"  # it could not be chosen, whatever its runs show
        threads = r.get("threads") or []
        row["CPU minutes"] = f"{r['minutes']:.0f}" + (
            f" ({' or '.join(map(str, threads))} thread{'s' if threads != [1] else ''})"
            if threads
            else ""
        )
        rows.append(row)
    return pd.DataFrame(rows)


def _sweep_status(chosen: str, runs_dir) -> str:
    """Where Table 5's sweep stands at the chosen probe's stand-in (``plans.SEARCH_STAND_INS``)."""
    scale = plans.SEARCH_STAND_INS.get(chosen)
    if scale is None:
        return " No preset is defined for it yet, so Table 5's sweep at it is not planned."
    exps = plans.sweep_124m(scale)
    located = as_released(exps, runs_dir)
    done = sum(1 for _ in usable(located, ("complete",)))
    return (
        f" Its stand-in, `{scale}`, trains Table 5's {len(exps)} runs: {done} of {len(exps)} "
        "trained"
    ) + (
        "." if done == len(exps) else f" (`python -m lib sweep --plan 124m_sweep --scale {scale}`)."
    )


def search_reading(table: pd.DataFrame, runs_dir=RUNS_DIR) -> str:
    """What the search says so far, in a sentence or two."""
    n = len(table)
    done = int(table["qualifies"].notna().sum())
    left = table[table["AttnOnly left"] == True]  # noqa: E712
    head = f"{done} of {n} probes decided."
    if left.empty:
        body = (
            (
                " In none of the probes trained so far does AttnOnly leave its corpus's unigram "
                "floor at seed "
            )
            + " or ".join(map(str, plans.SEARCH_SEEDS))
            + "."
        )
    else:  # each probe's own floor: the SOTU probes have theirs
        body = (
            " AttnOnly leaves its corpus's unigram floor in: "
            + ", ".join(f"{r.probe} (floor {r.floor:.3f})" for r in left.itertuples())
            + "."
        )
    chosen = choose(table)
    if chosen is not None:
        # the probes left untrained were not forgotten: the rule's order put the chosen one first
        rest = n - done
        skipped = (
            f" The other {rest} were not trained: the chosen probe qualified and comes first in "
            "the rule's order, so none of them could be chosen over it, whatever their runs show."
            if rest
            else ""
        )
        return (
            head
            + body
            + f" The rule chooses **{chosen}**."
            + skipped
            + _sweep_status(chosen, runs_dir)
        )
    if decided(table):
        return (
            head
            + body
            + (
                " No probe qualifies: no stand-in is chosen, and the 124M verdicts stay NOT "
                "TESTABLE HERE."
            )
        )
    return (
        head + body + (" The rule chooses once every probe that could still be chosen is decided.")
    )


def left(rows: pd.DataFrame, floor: float) -> pd.DataFrame:
    """The runs among ``rows`` whose best loss left ``floor`` (the book's one
    test, ``thresholds.left_floor``)."""
    return rows[left_floor(rows.best_val_loss, floor)]


def fell_back(rows: pd.DataFrame, floor: float) -> pd.DataFrame:
    """The runs among ``rows`` that left ``floor`` and ended back on it (their last loss within the
    escape margin of it): the seed sensitivity the paper reports, seen in one run. Table 5 ranks
    best losses, and so do the verdicts, so such a run counts by its best."""
    back = left(rows, floor)
    return back[back.final_val_loss > floor - ESCAPE_MARGIN]


def floor_counts(summaries: pd.DataFrame, floor: float) -> str:
    """ "Full Residual in 5 of 5; AttnOnly in 0 of 5; FFNOnly in 0 of 5": the
    seeds of each that left ``floor``."""
    return "; ".join(
        (
            f"{name} in {len(left(summaries[summaries.config == c], floor))} of "
            f"{int((summaries.config == c).sum())}"
        )
        for c, name in (
            ("FullResidual", "Full Residual"),
            ("AttnOnly", "AttnOnly"),
            ("FFNOnly", "FFNOnly"),
        )
    )


def first_stand_in_reading(summaries: pd.DataFrame, floor: float, scale: str) -> str:
    """What the first 124M stand-in's sweep shows: the seeds that left its floor and, where AttnOnly
    never did, why Table 5's two claims could not be tested there."""
    text = (
        f"At `{scale}`, the seeds that left the floor ({floor:.3f}): "
        f"{floor_counts(summaries, floor)}."
    )
    attn = summaries[summaries.config == "AttnOnly"]
    if len(attn) and left(attn, floor).empty:
        text += (
            " AttnOnly never left it, so where it lands and how its seeds spread cannot be read: "
            "Table 5's two claims were untestable at this stand-in, not contradicted."
        )
    return text


def _seeds(rows: pd.DataFrame) -> str:
    seeds = [str(int(s)) for s in rows.seed]
    return seeds[0] if len(seeds) == 1 else ", ".join(seeds[:-1]) + " and " + seeds[-1]


def sweep_answer(
    summaries: pd.DataFrame,
    floor: float,
    scale: str,
    order,
    sensitivity,
    first: pd.DataFrame,
    first_scale: str,
    first_floor: float,
    kind: str = "chosen",
) -> str:
    """The 124M chapter's answer, first on its page, for the runs it shows (``summaries`` on
    ``floor`` at ``scale``; ``kind``: "chosen", the stand-in the search chose; "first", the first
    stand-in; "paper", the paper's own 124M retrained on a GPU): how many seeds of each
    configuration left the floor, Table 5's two verdicts (``order``, ``sensitivity``: the claims as
    decided) and, beside another scale, what the first stand-in's runs (``first`` on
    ``first_floor``) could not show."""
    where = {
        "chosen": f"At the stand-in the search chose (`{scale}`)",
        "first": f"At the first stand-in (`{scale}`)",
        "paper": f"At the paper's {scale}",
    }
    if kind not in where:
        raise ValueError(f"kind {kind!r}; valid: {', '.join(where)}")
    by = {c: summaries[summaries.config == c] for c in ("FullResidual", "AttnOnly", "FFNOnly")}
    # the headline counts seeds, so that two seeds of five never read as all of them
    (a, na), (f, nf), (full, nfull) = (
        (len(left(by[c], floor)), len(by[c])) for c in ("AttnOnly", "FFNOnly", "FullResidual")
    )
    text = (
        f"**{where[kind]}, AttnOnly leaves the floor in {a} of {na} seeds trained and "
        f"FFNOnly in {f} of {nf}.** Full Residual leaves it in {full} of {nfull} (the floor: "
        f"{floor:.3f})."
    )
    back = fell_back(by["AttnOnly"], floor)
    if len(back):
        # Table 5 ranks best losses, and so do the verdicts: such a seed counts by its best
        text += (
            f" AttnOnly seed {_seeds(back)} left the floor and fell back onto it before the end; "
            f"like Table 5, the verdicts rank each run's best loss ("
            + ", ".join(
                f"seed {int(r.seed)}: {r.best_val_loss:.3f} at step {int(r.best_step):,}, "
                f"{r.final_val_loss:.3f} at the end"
                for r in back.itertuples()
            )
            + ")."
        )
    # off the GPU the runs are a stand-in's, and a verdict there says so
    order, sensitivity = (
        c if kind == "paper" else dataclasses.replace(c, stand_in=True)
        for c in (order, sensitivity)
    )
    text += (
        f" Table 5's ordering: {order.word}, {order.why}. AttnOnly's seed sensitivity: "
        f"{sensitivity.word}, {sensitivity.why}."
    )
    stuck = first[(first.config == "AttnOnly")]
    if kind != "first" and len(stuck) and not len(left(stuck, first_floor)):
        text += (
            f" At the first stand-in (`{first_scale}`) AttnOnly stayed on the floor in all "
            f"{len(stuck)} seeds, so neither claim could be tested there."
        )
    return text


def answer_kind(scale: str, spec) -> str:
    """``sweep_answer``'s ``kind`` for the 124M chapter opened at ``scale``
    (``spec``: its ``runset.ChapterSpec``)."""
    return "paper" if scale == spec.paper_scale else "chosen" if scale == spec.stand_in else "first"
