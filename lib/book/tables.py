"""The tables the chapters show: the presets beside Table 1, a configuration's seeds,
ours beside the paper's, and the release report and the run data the
reproducibility chapter offers for download."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..engine import plans
from ..engine.config import (
    CONFIG_NAMES,
    CONFIGS,
    IMPL_NAMES,
    PAPER_SEED,
    Experiment,
    get_preset,
    off_preset_fields,
    off_preset_precision,
    off_preset_steps,
)
from ..engine.host import ROOT
from ..engine.probe_reads import ProbeRun, released_run
from ..engine.results import FINISHED, as_released, pooled, summaries_of
from ..engine.runs import RUNS_DIR, RunDir
from .headers import header


def frame_html(df: pd.DataFrame) -> str:
    """A table as the book shows it: its columns named in words (``headers.HEADERS``), floats at the
    decimals their column needs, 4 at most (``_column_format``), a missing value as "-", every cell
    in full (verdicts and the paper's notes are read whole), and no 0, 1, 2, ... column where the
    index only counts rows. An index that names something (a preset's fields, a scale) is shown."""
    # an unnamed integer index is row numbers (a RangeIndex, or what is left of one after a filter)
    counts_rows = (
        df.index.name is None
        and not isinstance(df.index, pd.MultiIndex)
        and pd.api.types.is_integer_dtype(df.index)
    )
    # Only float columns get a format: integers and strings already print as they should.
    formatters = {
        c: _column_format(df[c]) for c in df.columns if pd.api.types.is_float_dtype(df[c])
    }
    # A nullable integer (the paper's seed column, empty on a row pooled over seeds) prints
    # its missing value as "<NA>", which neither na_rep nor a formatter reaches: written
    # out as text, with the same "-".
    nullable = [
        c
        for c in df.columns
        if isinstance(df[c].dtype, pd.api.extensions.ExtensionDtype)
        and pd.api.types.is_integer_dtype(df[c])
    ]
    # Python's None in a column of objects (an escape step that never came) prints as "None", which
    # na_rep does not reach either: the same "-" as every other missing value
    nones = [c for c in df.columns if df[c].dtype == object and any(v is None for v in df[c])]
    df = df.copy()  # the caller's frame keeps its numbers and its names
    for c in nullable:
        df[c] = ["-" if pd.isna(v) else str(v) for v in df[c]]
    for c in nones:
        df[c] = ["-" if v is None else v for v in df[c]]
    # the names in words last: the formatters above are keyed by the frame's own names
    df.index = df.index.set_names([header(n) for n in df.index.names])
    df.columns = df.columns.set_names([header(n) for n in df.columns.names])
    df = df.rename(columns=header)
    formatters = {header(c): f for c, f in formatters.items()}
    # pandas cuts a cell at 50 characters by default; a verdict's reason or a
    # paper note cut short misleads.
    with pd.option_context("display.max_colwidth", None):
        # na_rep: a missing value reads as "-" (not measured, never left, not trained:
        # the column says which), never as an empty cell nor as NaN; border=0 leaves
        # the lines to the book's theme
        return df.to_html(
            index=not counts_rows, na_rep="-", border=0, formatters=formatters or None
        )


def _column_format(col: pd.Series):
    """How a float column's cells read: as whole numbers where every finite value is one (steps,
    counts that a NaN made floats), else at the fewest decimals (1 to 4) that show every
    value the column holds (a column a chapter rounded to minutes keeps its one decimal), or
    in 3 significant digits where a value is too small for 4 decimals (a starved gradient
    norm). Missing values read "-"."""
    finite = col[np.isfinite(col)]  # NaN and inf say nothing about the column's kind
    # whole: steps and counts that a NaN ("never left the floor") turned into
    # floats read as 1,500, not 1500.0000
    whole = len(finite) > 0 and bool((finite == finite.round()).all())
    # the decimals the values need: a loss has many (4 are shown), a cost
    # rounded to 0.1 minute has one
    decimals = next(
        (d for d in (1, 2, 3) if len(finite) and bool((finite == finite.round(d)).all())), 4
    )

    def cell(x: float) -> str:
        if pd.isna(x):
            return "-"
        if not math.isfinite(x):
            return str(x)  # inf or -inf, as they are
        if whole:
            return f"{x:,.0f}"
        # Four decimals would print a starved gradient norm (2.85e-06) as 0.0000: the
        # very value Fig. 2a is about.
        return f"{x:,.{decimals}f}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"

    return cell


def show_tables_as_the_book_does() -> None:
    """Make ``frame_html`` how the running notebook kernel shows every DataFrame (a
    chapter's last expression, ``display``). Only the kernel's display changes: pandas'
    own options are left as they are."""
    from IPython import get_ipython

    # outside a kernel (the CLI, a test) there is no display to change
    if (shell := get_ipython()) is not None:
        # DataFrames only: a Styler (``.style``), which a chapter uses to hide
        # its index, keeps its own HTML
        shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)


def presets_table() -> pd.DataFrame:
    """Table 1's hyperparameters as our presets resolve them
    (``residualgpt``), one column per scale."""
    from ..engine.model import GPT

    rows = {}
    # the paper's scales first, then the stand-ins that play them
    for scale in ("10M", "124M", "cpu", "cpu-bpe", plans.STAND_IN_124M):
        # FullResidual, though any configuration would do: removing a skip
        # removes an addition, no weight.
        e = get_preset(scale)
        m, t = e.model, e.train
        rows[scale] = {
            "n_layer": m.n_layer,
            "n_embd": m.n_embd,
            "n_head": m.n_head,
            "block_size": m.block_size,
            "batch size x accum": f"{t.batch_size} x {t.grad_accum}",
            "train steps": t.max_steps,
            # a non-breaking hyphen: the narrow row header broke the word after "warm-"
            "lr (peak -> floor, warm\u2011up)": f"{t.lr:g} -> {t.min_lr:g}, {t.warmup_steps}",
            "dropout": m.dropout,
            "eval interval": t.eval_interval,
            "val batches": t.eval_batches,
            # counted on a built model: the numbers config.py's comments give
            # and tests/test_config.py pins
            "dataset": e.dataset,
            "parameters": f"{GPT(m).num_params():,}",
            "paper scale?": "yes (Table 1)" if not e.is_stand_in else "no: CPU stand-in",
        }
    return pd.DataFrame(rows)


def seed_table(summaries: pd.DataFrame, by=("config",)) -> pd.DataFrame:
    """Mean, sample std, n, range and escape steps of best val loss, per configuration,
    over the ``pooled`` rows; a column ``left out`` (only when there are any) names
    the seeds that are not, and why."""
    # the rows pooled drops (diverged, no finite best loss), kept aside to be named in ``left out``
    rest = summaries.drop(pooled(summaries).index) if len(summaries) else summaries
    summaries = pooled(summaries)
    if summaries.empty and rest.empty:
        # an empty chapter still gets the columns, so a cell that selects them does not fail
        return pd.DataFrame(
            columns=[*by, "mean", "std", "n", "min", "max", "seeds", "escape_steps"]
        )
    g = summaries.groupby(list(by), sort=False)
    # pandas' std is the sample one (ddof = 1): §3.5's "sample standard deviations"
    out = g.best_val_loss.agg(["mean", "std", "count", "min", "max"]).rename(columns={"count": "n"})
    # in the order the runs were read (the plan's), so seeds and
    # escape_steps match position by position
    out["seeds"] = g.seed.agg(lambda s: ", ".join(map(str, s)))
    out["escape_steps"] = g.escape_step.agg(
        # "none": never reached the floor less the margin within its budget (the step
        # against the chapter's own floor)
        lambda s: ", ".join("none" if pd.isna(v) else str(int(v)) for v in s)
    )
    # by configuration: the order of §3.4 (Full, AttnOnly, FFNOnly, NoResidual),
    # whatever order the runs came in
    order = [c for c in CONFIGS if c in out.index] if list(by) == ["config"] else list(out.index)
    if len(rest):
        # a complete run here has no finite best loss; any other status (diverged) is its own reason
        why = rest.groupby(list(by), sort=False).apply(
            lambda r: ", ".join(
                f"seed {x.seed} ({x.status if x.status != 'complete' else 'no finite loss'})"
                for x in r.itertuples()
            ),
            include_groups=False,
        )  # pandas 3's only choice
        # every seed of it left out: a row with n = 0 says so
        for key in why.index.difference(out.index):
            out.loc[key, "n"] = 0
            order.append(key)
        out["left out"] = [why.get(i, "") for i in out.index]
    # the keys become columns again, and frame_html hides the row numbers that are left
    return out.loc[order].reset_index()


def quantities(values: dict, digits: int = 4) -> pd.DataFrame:
    """A chapter's named quantities (``asymmetry.asymmetry``'s means, gaps and ratio) as a
    one-row table, in their order, rounded; a quantity that cannot be computed (None)
    is left out, never shown as 0."""
    # rounded one by one: a one-row table of mixed magnitudes (a loss, a gap
    # %, a ratio) reads at a glance
    return pd.DataFrame([{k: round(v, digits) for k, v in values.items() if v is not None}])


OURS = "ours (± sample std)"  # the column beside_paper shows our numbers in


def beside_paper(
    ours: pd.DataFrame, paper: pd.DataFrame, ref: str, stand_in: bool = False
) -> pd.DataFrame:
    """Paper value (with the paper's own digits) beside ours, per configuration, and the difference.

    ``ours`` is a ``seed_table``; ``paper`` the matching rows of the paper file. Our ± is the sample
    standard deviation (ddof = 1, as §3.5 says); where the paper's ± is a population one (ddof = 0,
    as the author's notebooks compute it: ``population_std`` in the paper file), our cell gives ours
    in that convention too, so that the two can be read side by side. With ``stand_in`` there is no
    difference column: a stand-in loss minus a paper-scale loss (other data, other model) is not a
    measurement of anything; the chapters compare orderings and floors instead.
    """
    rows = []
    # One row per paper row, in the paper file's order; a configuration we
    # have no run of reads "missing".
    for _, p in paper.iterrows():
        o = ours[ours.config == p.config]
        mean = float(o["mean"].iloc[0]) if len(o) else float("nan")
        # n = 0: no run, no std
        std, n = (o["std"].iloc[0], o["n"].iloc[0]) if len(o) else (None, 0)
        cell = _pm(mean, std, n)
        # The population std is the sample one times sqrt((n-1)/n); one seed has
        # no std in either convention.
        if p.get("population_std", False) and std is not None and not pd.isna(std) and n > 1:
            cell += f"; population std {std * ((n - 1) / n) ** 0.5:.4f}, as the paper"
        # ``reported`` keeps the paper's own digits ("1.580 ± 0.003"):
        # never re-rounded, never padded
        paper_cell = p.reported + ("" if pd.isna(p.n) else f" (n={int(p.n)})")
        if p.get("population_std", False):
            paper_cell += ", ± population std"
        row = {"config": p.config, f"paper ({ref})": paper_cell, OURS: cell}
        if not stand_in:
            # a difference only at the paper's scale, where the data and the model are the paper's
            row["ours - paper"] = round(mean - p.value, 4) if len(o) else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def _pm(mean, std, n) -> str:
    if pd.isna(mean):
        return "missing"
    s = f"{mean:.4f}"
    if std is not None and not pd.isna(std):
        s += f" ± {std:.4f}"
    return s + (f" (n={int(n)})" if n is not None and not pd.isna(n) else "")


# The paper-shape prefix table's columns as the two chapters that show it name them
# (``paper_shape.prefix_table``).
PREFIX_COLUMNS = {
    "run": "run",
    "schedule": "schedule",
    "execution": "executed as",
    "trained": "trained",
    "eval_every": "evaluated every (steps)",
    "last_val": "last val",
    "best_val": "best val",
    "left_floor_at": "left the floor at step",  # "-": not by the last step trained
    "layer0_grad": "layer-0 FFN gradient (last)",
    "max_val_se": "largest val s.e.",
    # two references: Table 2's seed-1337 value for nanoGPT, Phase 3's mean (Fig. 4) for
    # ResidualGPT; none for a run on the other implementation's schedule
    "paper_best": (
        "paper's best over 3,000 steps (nanoGPT: Table 2; ResidualGPT: Fig. 4; "
        "-: the paper trained no run on this schedule)"
    ),
}


def prefix_view(table: pd.DataFrame) -> pd.DataFrame:
    """``paper_shape.prefix_table`` as the joint-collapse and 10M chapters show it: the columns a
    reader compares, named in words; "-" in "left the floor at step" is a run still on the floor at
    its last step. Implementation and configuration share one column ("nanoGPT AttnOnly"): as two,
    the twelve columns did not fit the page at 1,400 px without breaking a word."""
    run = [f"{IMPL_NAMES.get(i, i)} {c}" for i, c in zip(table.impl, table.config)]
    # "-" where the paper has no value: a run on the other implementation's schedule
    return table.assign(run=run, paper_best=table.paper_best.fillna("-"))[
        list(PREFIX_COLUMNS)
    ].rename(columns=PREFIX_COLUMNS)


def values_view(table: pd.DataFrame, impl: str | None = None) -> pd.DataFrame:
    """``asymmetry.author_value_runs().table`` for one implementation as the 10M and joint-collapse
    chapters show it: a row per set of values and configuration, a column per seed, each cell the
    run's best validation loss and where it left the floor ("-": not trained). ``impl`` picks one
    implementation's rows; without it the table must hold one already (``author_value_runs(impl=
    ...)``, as a chapter reads it), so a chapter names its implementation once."""
    if impl is not None and impl not in IMPL_NAMES:
        raise ValueError(f"impl {impl!r} is not one of {', '.join(IMPL_NAMES)}")
    if impl is None:
        impls = sorted(set(table.impl.dropna()))
        if len(impls) > 1:
            raise ValueError(f"the table holds {', '.join(impls)}: name one with impl=")
        impl = impls[0] if impls else None
    t = table[table.impl == impl] if impl is not None else table.iloc[0:0]
    if t.empty:
        return pd.DataFrame(columns=["values", "configuration"])

    def cell(r) -> str:  # the best, and where the run left the floor; a diverged run has neither
        if pd.isna(r.best_val_loss) or getattr(r, "status", "complete") == "diverged":
            return "diverged"
        left = (
            "never left the floor"
            if pd.isna(r.escape_step)
            else f"left at step {int(r.escape_step):,}"
        )
        return f"{r.best_val_loss:.3f} ({left})"

    shown = t.assign(cell=[cell(r) for r in t.itertuples()])
    # the stand-in's own values first, then the author's; configurations in CONFIGS' order
    order = {v: k for k, v in enumerate(("stand-in", "author's"))}
    configs = [c for c in CONFIGS if c in set(t.config)]
    wide = shown.pivot_table(
        index=["values", "config"], columns="seed", values="cell", aggfunc="first"
    )
    wide = wide.reindex(sorted(wide.index, key=lambda k: (order.get(k[0], 2), configs.index(k[1]))))
    # the seeds in the plan's order
    wide = wide.reindex(columns=list(dict.fromkeys(t.seed))).fillna("-")
    wide.columns = [f"seed {s}" for s in wide.columns]
    return wide.reset_index().rename(columns={"config": "configuration"})


def variant_label(exp: Experiment) -> str:
    """How a run differs from its preset, with the same facts as its directory name (``run_path``):
    a gain, another budget or precision, the mixer, every other off-preset field; or "plain"."""
    parts = [f"{exp.gain_mode} gain {exp.gain:g}"] if exp.gain_mode else []
    if off_preset_steps(exp):
        parts.append(f"{exp.train.max_steps:,} steps")
    if off_preset_precision(exp):
        parts.append(exp.train.precision)
    if exp.model.mixer != "attention":
        parts.append(f"{exp.model.mixer} mixer")
    parts += [
        f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
        for k, v in sorted(off_preset_fields(exp).items())
    ]
    return ", ".join(parts) or "plain"


def release_report(exps, runs_dir=RUNS_DIR) -> tuple[pd.DataFrame, dict]:
    """Best validation loss per (scale, impl, variant, config) over the finished runs of ``exps``:
    mean ± sample std, seeds, escape steps; and the totals (floors, wall time, diverged, unfinished
    and invalid runs). A run whose files are unreadable or do not match its experiment
    (``RunDir.problems``) is listed under ``invalid`` and left out; the report goes on.
    ``python -m lib report`` prints it."""
    rows, unfinished, invalid, read_from = [], [], [], []
    for e in exps:
        rd = released_run(e, runs_dir)  # or the search probe's run of the same experiment
        if isinstance(rd, ProbeRun):
            read_from.append(rd.read_line())
        # Not finished: no summary.json yet, still running, or a prefix stopped early. "unreadable"
        # goes on to ``problems``, which names the file: one damaged run never stops the report.
        # status and problems never raise
        if rd.status not in ("complete", "diverged", "unreadable"):
            unfinished.append(str(rd.path))
            continue
        if problems := rd.problems(e):
            invalid.extend(problems)
            continue
        s = rd.summary
        rows.append(
            {
                "scale": e.scale,
                "impl": e.impl,
                "config": e.config_name,
                "seed": e.seed,
                "variant": variant_label(e),
                # escape step as recorded, against the split's unigram floor: a
                # report has no chapter floor
                "best_val_loss": s["best_val_loss"],
                "escape_step": s["escape_step"],
                "floor": s["unigram_floor"],
                "wall_s": s["wall_s"],
                "status": s["status"],
                "diverged_step": s.get("diverged_step"),
            }
        )
    # the columns given: with no finished run the table is empty but keeps
    # its shape for seed_table below
    df = pd.DataFrame(
        rows,
        columns=[
            "scale",
            "impl",
            "config",
            "seed",
            "variant",
            "best_val_loss",
            "escape_step",
            "floor",
            "wall_s",
            "status",
            "diverged_step",
        ],
    )
    totals = {
        "planned": len(exps),
        "finished": len(df),
        "unfinished": unfinished,
        "invalid": invalid,
        # the search probe's runs read in place of the plan's own (lib.engine.probe_reads)
        "read_from": read_from,
        "diverged": [
            f"{r.scale} {r.impl} {r.variant} {r.config} seed {r.seed}"
            + (f" (at step {int(r.diverged_step)})" if pd.notna(r.diverged_step) else "")
            for r in df[df.status == "diverged"].itertuples()
        ],
        # a summary without wall_s adds nothing
        "wall_s": float(pd.to_numeric(df.wall_s, errors="coerce").sum()),
        # one floor per scale: every run of a scale trains on the same data, so the
        # first run's floor is theirs
        "floors": {k: round(float(v), 4) for k, v in df.groupby("scale").floor.first().items()},
    }
    # The variant is a key: a gain, another budget or a mixer run is its own row,
    # never pooled with the plain run.
    table = seed_table(df, by=("scale", "impl", "variant", "config"))
    table["best val (mean ± std, n)"] = [
        _pm(m, s, n) for m, s, n in zip(table["mean"], table["std"], table["n"])
    ]
    table = table.rename(columns={"escape_steps": "escape steps"})[
        [
            "scale",
            "impl",
            "variant",
            "config",
            "best val (mean ± std, n)",
            "min",
            "max",
            "seeds",
            "escape steps",
        ]
        + (["left out"] if "left out" in table else [])
    ]
    return table.round({"min": 4, "max": 4}), totals  # the mean and std are already text (_pm)


def budget_table(scale: str, impl: str, summaries: pd.DataFrame, floor: float) -> pd.DataFrame:
    """What one run of a chapter's scale trains on (tokens per step and per run, epochs of the train
    split), how many runs are finished, and how far its Full Residual runs end below the floor. What
    they cost is in the reproducibility chapter (``lib.book.costs``)."""
    from ..engine.data import load_corpus

    e = get_preset(scale, impl)
    corpus = load_corpus(e.dataset)
    # tokens per optimiser step; at 124M 16 x 8 x 1024 = 131,072 (Table
    # 1's batch 16 and accumulation 8)
    per_step = e.train.batch_size * e.train.grad_accum * e.model.block_size
    # every seed: the worst one decides the last row
    full = summaries[summaries.config == "FullResidual"].best_val_loss
    rows = {
        "train / val tokens in the data": f"{len(corpus.train):,} / {len(corpus.val):,}",
        "tokens per step (batch x accum x block)": f"{per_step:,}",
        "steps": f"{e.train.max_steps:,}",
        # In epochs too: a budget is read against the size of its data, not only in steps.
        "tokens seen per run (epochs of the train split)": (
            f"{per_step * e.train.max_steps:,} "
            f"({per_step * e.train.max_steps / len(corpus.train):.1f})"
        ),
        "finished runs": str(len(summaries)),
        # the floor the chapter's verdicts use (Chapter.floor): the unigram floor on characters,
        # on BPE data the NoResidual run's, so the row names no particular floor and the
        # chapter's floor note says which
        "FullResidual: best val below the chapter's floor by":
        # the worst Full Residual seed (the highest loss): a positive number
        # says every seed left the floor
        f"{floor - full.max():.3f} nats, worst seed (floor {floor:.3f})" if len(full) else "no run",
    }
    return pd.DataFrame({scale: rows})  # one column, named for the scale


def seeds_by_config(summ: pd.DataFrame, planned) -> str:
    """The seeds each configuration has, in the plan's order: one list where every ``planned``
    configuration has the same seeds, otherwise one per configuration trained (a sweep half trained,
    or a single-seed No Residual anchor beside five seeds, must not read as five seeds of
    everything); "none yet" where nothing is trained."""
    by = {c: list(dict.fromkeys(g.seed)) for c, g in summ.groupby("config", sort=False)}
    if not by:
        return "none yet"
    if set(by) == set(planned) and len({tuple(v) for v in by.values()}) == 1:
        return ", ".join(map(str, next(iter(by.values()))))
    return "; ".join(f"{CONFIG_NAMES[c]} {', '.join(map(str, v))}" for c, v in by.items())


def cross_scale_table() -> pd.DataFrame:
    """Table 6: the paper's rows beside the same quantities from our released runs."""
    from ..claims.asymmetry import asymmetry
    from ..claims.paper import paper_values

    # Each paper row beside our runs of the same kind: its seeds where the paper's row is one
    # seed or one seed set (Table 2 and Table 4 are seed 1337, Table 3 seeds 1337/42/123),
    # every seed for the multi-seed sweeps. The 124M nanoGPT row has no counterpart. 124M is
    # read at the chapter's stand-in.
    bpe = plans.STAND_IN_124M
    ours_for = {
        ("10M", "nanogpt", ""): ("cpu", plans.joint_collapse("cpu", seeds=(PAPER_SEED,))),
        ("10M", "residualgpt", "original"): ("cpu", plans.asymmetry_10m("cpu", extra_seeds=())),
        ("10M", "residualgpt", "phase3"): ("cpu", plans.asymmetry_10m("cpu")),
        ("124M", "residualgpt", "original"): (bpe, plans.sweep_124m(bpe, seeds=(PAPER_SEED,))),
        ("124M", "residualgpt", "controlled"): (bpe, plans.sweep_124m(bpe)),
    }
    # Table 6 is read from data/paper_results.csv; each of its rows has a
    # (scale, impl, phase) key there.
    t6 = paper_values(ref="Table 6")
    rows = []
    # the file's (= paper's) order
    for (scale, impl, phase), g in t6.groupby(["scale", "impl", "phase"], sort=False):
        paper = dict(zip(g.metric, g.value))
        row = {
            "paper scale": scale,
            "impl": impl,
            "paper row": phase or "-",
            "paper gap %": paper.get("attn_gap_pct"),
            "paper ratio": paper.get("asym_ratio"),
        }
        if (scale, impl, phase) in ours_for:
            our_scale, exps = ours_for[(scale, impl, phase)]
            # Released runs only, no chapter floor: escape steps as each run recorded
            # them. asymmetry() pools inside.
            summ = summaries_of(as_released(exps, RUNS_DIR))
            a = asymmetry(summ)
            attn = summ[summ.config == "AttnOnly"]
            # "none yet": the row is kept, so the table shows which of Table
            # 6's rows we have not trained
            row.update(
                {
                    "our scale": our_scale,
                    "our seeds": seeds_by_config(summ, {e.config_name for e in exps}),
                    "our AttnOnly": a.get("attn_mean"),
                    "our FFNOnly": a.get("ffn_mean"),
                    # a gap % means "AttnOnly recovered" only where AttnOnly left the floor
                    "our AttnOnly left the floor": (
                        f"{attn.escape_step.notna().sum()} of {len(attn)}"
                    ),
                    "our gap %": a.get("attn_gap_pct"),
                    "our ratio": a.get("asym_ratio"),
                }
            )
        else:
            # the 124M nanoGPT row: no plan trains a nanoGPT stand-in for it
            row["our scale"] = "not run"
        rows.append(row)
    return pd.DataFrame(rows).round(3)  # Table 6's own three decimals


# copied to the built site's root (_config.yml html_extra_path)
DOWNLOADS = ROOT / "book" / "downloads"


# The scalar columns of an evaluation row; per-layer lists stay in each run's own history.jsonl.
HISTORY_COLUMNS = [
    "step",
    "val_loss",
    "train_loss",
    "lr",
    "tokens",
    "train_time_s",
    "hidden_growth",
]


def export_run_data(runs_dir=RUNS_DIR, out_dir=DOWNLOADS) -> dict:
    """Every released run's summary as one CSV (one row per run, with the fields of its config.json
    that name the experiment) and every evaluation of every run as another (scalar columns), for
    readers who want the numbers behind the book. Written at each build; returns the row counts."""
    import json

    summaries, histories = [], []
    # sorted: two builds from the same runs write the same files
    for path in sorted(Path(runs_dir).rglob("summary.json")):
        rd = RunDir(path.parent)
        # ``.replaced-*``: the old files of a run that was forced to train again, kept
        # aside, never a result. A partial run (a paper-shape prefix) is exported;
        # "unreadable" goes on to be named below.
        if ".replaced-" in str(path) or rd.status not in (*FINISHED, "partial", "unreadable"):
            continue  # a run still training is not released
        # relative to the repository: the CSV never carries the path of the machine that built it
        rel = str(rd.path.relative_to(ROOT)) if rd.path.is_relative_to(ROOT) else str(rd.path)
        # The folder is walked, not a plan: each run is checked against its own
        # config.json and where it sits.
        problems = rd.placement_problems(runs_dir)
        if problems:  # never exported as a result; the build prints why
            print(f"export_run_data: left out: {'; '.join(problems)}")
            continue
        cfg = json.loads((rd.path / "config.json").read_text())
        model, train = cfg.get("model", {}), cfg.get("train", {})
        # scalars only: a CSV cell holds no list, and the summary's lists stay in the run's files
        summaries.append(
            {
                "path": rel,
                **{k: v for k, v in rd.summary.items() if not isinstance(v, (list, dict))},
                "dataset": cfg.get("dataset"),
                "n_layer": model.get("n_layer"),
                # mixer and precision default to what a run from before those
                # fields existed trained with
                "n_embd": model.get("n_embd"),
                "mixer": model.get("mixer", "attention"),
                "lr": train.get("lr"),
                "batch_size": train.get("batch_size"),
                "precision": train.get("precision", "fp32"),
            }
        )
        for r in rd.history():
            # a column a run did not record (hidden_growth without diagnostics) is left empty
            histories.append({"path": rel, **{k: r.get(k) for k in HISTORY_COLUMNS}})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(summaries).to_csv(out / "runs_summaries.csv", index=False)
    # the columns given, so an empty export still writes its header
    pd.DataFrame(histories, columns=["path", *HISTORY_COLUMNS]).to_csv(
        out / "runs_histories.csv", index=False
    )
    return {"runs": len(summaries), "evaluations": len(histories)}
