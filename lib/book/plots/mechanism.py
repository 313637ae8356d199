"""The figures of book/mechanism.ipynb (the ladder of floors, the probes, the local mixer) and of
book/escape_and_bundle.ipynb (the escape map, the bundle
and the schedule over seeds)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...claims.schedule_seeds import no_outcome
from ...engine.config import PAPER_SEED
from ...engine.results import pooled
from .style import COLORS, FLOOR_STYLE, _configs, _legend

# Every floor is black and thin, told apart by its dash; colour stays with the configurations.
LADDER_STYLE = dict(color="black", linewidth=0.9)


# unigram dotted, bigram dashed, trigram dash-dot, 4-gram sparse dots
LADDER_DASHES = {1: ":", 2: "--", 3: "-.", 4: (0, (1, 3))}


def floor_ladder(ax, floors: pd.DataFrame, orders=(1, 2, 3)) -> None:
    """Horizontal lines at the n-gram floors (``mechanism.floors`` rows), labelled for the legend:
    on the fixed validation batches where computed (the tokens the `residualgpt` runs are
    evaluated on), else on the split."""
    for r in floors[floors.order.isin(orders)].itertuples():
        # the fixed batches' floor where the ladder has it: like for like
        # with the losses the runs record
        fixed = "on_fixed_batches" in floors and pd.notna(r.on_fixed_batches)
        nats = r.on_fixed_batches if fixed else r.nats
        ax.axhline(
            nats,
            **LADDER_STYLE,
            linestyle=LADDER_DASHES[r.order],
            label=f"{r.floor} floor {nats:.3f}" + (" (fixed batches)" if fixed else ""),
        )


def ladder_figure(ends: pd.DataFrame, floors: pd.DataFrame, title: str):
    """Where each model ends on the ladder of floors: one column per model (``ends``: model,
    best_val_loss, one row per seed; a dot per seed; a diverged seed is no result and is not drawn),
    the floors as horizontal lines."""
    # pooled: a diverged seed's earlier best is no result
    ends = pooled(ends)
    fig, ax = plt.subplots(figsize=(9, 4.8))
    # the models in the order the reader gave them
    models = list(dict.fromkeys(ends.model)) if len(ends) else []
    for i, m in enumerate(models):
        y = ends[ends.model == m].best_val_loss
        # colour by configuration (the model's first word), squares for the mixer; zorder
        # puts the dots over the floors
        ax.scatter(
            [i] * len(y),
            y,
            color=COLORS[m.split(" ")[0]],
            marker="s" if "mixer" in m else "o",
            zorder=3,
        )
    floor_ladder(ax, floors, orders=tuple(floors.order))  # every order the ladder holds
    # "AttnOnly + local mixer" on two lines
    ax.set_xticks(range(len(models)), [m.replace(" + ", "\n+ ") for m in models], fontsize=8)
    # half a column either side of the dots
    ax.set(
        ylabel="best validation loss (nats/token)",
        title=title,
        xlim=(-0.6, max(len(models), 1) - 0.4),
    )
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


# column -> panel title
PROBE_MEASURES = {
    "position_cosine": "cosine between positions",
    "token_accuracy": "input token read back",
    "effective_rank": "effective rank",
}


def probe_figure(table: pd.DataFrame, title: str):
    """Each probe measure against depth, one colour per configuration (dotted: with the local
    mixer), initialisation (thin, faded) and trained (thick)."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (col, label) in zip(axes, PROBE_MEASURES.items()):
        # sort=False: the models in the table's order
        for model, t in table.groupby("model", sort=False):
            config = model.split(" ")[0]
            ls = ":" if "mixer" in model else "-"  # the mixer dotted
            # the untrained model thin and faded, the trained one thick: the
            # change is what training did
            for state, kw in (
                ("init", dict(lw=1, alpha=0.45)),
                ("trained", dict(lw=2.2, alpha=0.95)),
            ):
                s = t[t.state == state]
                ax.plot(
                    s.depth,
                    s[col],
                    color=COLORS[config],
                    ls=ls,
                    marker="o",
                    ms=3,
                    **kw,
                    # labelled in one panel only: the figure has one legend for all three
                    label=f"{model} ({state})" if col == "position_cosine" else None,
                )
        if col == "token_accuracy" and len(table):
            # chance: always guessing the most frequent token (lib.engine.probes)
            ax.axhline(table.token_chance.iloc[0], **FLOOR_STYLE, label=None)
            ax.text(0, table.token_chance.iloc[0] + 0.02, "chance", fontsize=8)
        ax.set(xlabel="depth (0 = embedding, k = after block k)", title=label)
    if len(table):
        # effective rank runs from 1 (one shared vector) to the width: a log axis shows both ends
        axes[2].set_yscale("log")
    fig.suptitle(title)
    # one legend for the three panels, beside them
    fig.legend(
        *axes[0].get_legend_handles_labels(),
        loc="center left",
        bbox_to_anchor=(1.0, 0.5),
        frameon=False,
        fontsize=8,
    )
    fig.tight_layout()
    return fig


def mixer_curves(
    hist: pd.DataFrame, floors: pd.DataFrame, title: str, seed: int = PAPER_SEED, ax=None
):
    """Validation loss of seed ``seed``: each configuration with attention (solid) and with the
    local mixer (dashed), against the ladder of floors."""
    ax = ax or plt.subplots(figsize=(9, 4.5))[1]
    # sort=False: the order the runs were read in
    for (model, mixer), h in hist[hist.seed == seed].groupby(["model", "mixer"], sort=False):
        h = h.dropna(subset=["val_loss"])
        ax.plot(
            h.step,
            h.val_loss,
            color=COLORS[model.split(" ")[0]],
            lw=1.6,
            ls="--" if mixer != "attention" else "-",
            label=model,
        )
    floor_ladder(ax, floors)
    # from 1.5 to just above the unigram floor: step 0 (about ln 65 = 4.17) lies far
    # above, the ladder is what matters
    top = floors[floors.order == 1].nats.iloc[0] if len(floors) else None
    if top is not None:
        ax.set_ylim(1.5, top + 0.4)
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title)
    if ax.get_legend_handles_labels()[0]:
        # off the data
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def escape_heatmap(grid: pd.DataFrame, depths, gains, title: str):
    """The escape map: AttnOnly over depth x FFN-output gain, FFNOnly's row and AttnOnly without
    GPT-2's 1/√(2L) scaling (``scaled_init`` False, where the grid has it) below. Each cell writes
    the escape step ('never': stayed on the floor for the run's budget) over the best validation
    loss; the colour is the best loss, the graded outcome (white: not trained)."""
    # a grid without the column has only GPT-2-scaled runs
    scaled = (
        grid.scaled_init.astype(bool)
        if "scaled_init" in grid
        else pd.Series(True, index=grid.index)
    )
    # the map's rows: AttnOnly at each depth, then FFNOnly at depth 6, the control
    rows = [("AttnOnly", d, True) for d in depths] + [("FFNOnly", 6, True)]
    # then each unscaled run's own row, below the map
    rows += [
        (c, int(d), False)
        for c, d in grid.loc[~scaled, ["config", "depth"]].drop_duplicates().itertuples(index=False)
    ]
    # taller by a band per row beyond the map and its control
    fig, ax = plt.subplots(figsize=(7.5, 4.6 + 0.4 * (len(rows) - len(depths) - 1)))
    values = np.full((len(rows), len(gains)), np.nan)  # NaN: white, not trained
    labels = {}
    # An untrained cell of the map shows a dash; the unscaled rows are trained at
    # gain 1 only, the rest left blank.
    for i, (config, d, sc) in enumerate(rows):
        for j, g in enumerate(gains):
            cell = grid[
                (grid.config == config) & (grid.depth == d) & (grid.gain == g) & (scaled == sc)
            ]
            if len(cell):
                e, values[i, j] = cell.escape_step.iloc[0], cell.best_val_loss.iloc[0]
                labels[i, j] = f"{int(e) if pd.notna(e) else 'never'}\n{values[i, j]:.2f}"
            elif sc:
                ax.text(j, i, "-", ha="center", va="center", fontsize=8, color="#999999")
    im = ax.imshow(values, cmap="viridis", aspect="auto")  # dark is a low loss, far below the floor
    # halfway between the map's lowest and highest loss
    mid = np.nanmean([np.nanmin(values), np.nanmax(values)]) if labels else 0.0
    for (i, j), text in labels.items():  # light text on the dark (low-loss) cells
        ax.text(
            j,
            i,
            text,
            ha="center",
            va="center",
            fontsize=8,
            color="white" if values[i, j] < mid else "black",
        )
    fig.colorbar(im, ax=ax, label="best validation loss (lower: further below the floor)")
    ax.set_xticks(range(len(gains)), [f"{g:g}" for g in gains])
    ax.set_yticks(
        range(len(rows)), [f"{c} L={d}" + ("" if sc else ", no 1/√(2L)") for c, d, sc in rows]
    )
    ax.set(xlabel="gain on the FFN output projection at initialisation", title=title)
    fig.tight_layout()
    return fig


def bundle_bars(table: pd.DataFrame, max_steps: int, title: str, control: str | None = None):
    """Escape step (left) and best validation loss (right) of nanoGPT AttnOnly with one factor of
    the ResidualGPT bundle switched on its own; untrained factors are listed without a bar;
    nanoGPT itself and the rounding-only ``control`` are grey, the control hatched. A run that
    trained its whole budget and never left the floor has no bar either: its row says "never" in
    words, beside the budget's dotted line."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    y = range(len(table))
    # A bar is a measured escape step, nothing else. "Never" (a complete run with no escape
    # step) drawn as a bar to the budget read as a length that was measured; a factor not
    # trained yet, or one that diverged (stopped early, so it never had the chance), has no
    # bar and says why in its label.
    done = table.status == "complete"
    never = done & table.escape_step.isna()
    labels = [f if st == "complete" else f"{f} ({st})" for f, st in zip(table.factor, table.status)]
    # grey: nanoGPT itself and its rounding-only twin, which computes the same function
    colors = ["#999999" if f in ("none", control) else "#2ca02c" for f in table.factor]
    bars = a1.barh(y, table.escape_step.astype(float), color=colors)
    for bar, f in zip(bars, table.factor):
        bar.set_hatch("//" if f == control else "")
    for i, c in zip(y, colors):
        if never.iloc[i]:  # in words, in the row's colour, starting where a bar would
            a1.text(
                max_steps * 0.02,
                i,
                f"never left the floor in {max_steps:,} steps",
                va="center",
                fontsize=8,
                color=c,
                fontstyle="italic",
            )
    # the budget: no escape step can lie beyond it
    a1.axvline(max_steps, color="grey", lw=0.8, ls=":")
    a1.set_yticks(list(y), labels)
    a1.invert_yaxis()  # the table's first factor on top
    a1.set(
        xlabel=f"escape step (dotted: the budget, {max_steps:,} steps)",
        title="escape",
        xlim=(0, max_steps * 1.03),
    )
    # nanoGPT grey, every factor blue (the control too: its hatch is on the left)
    a2.barh(
        y,
        table.best_val_loss,
        color=["#999999" if f == "none" else "#1f77b4" for f in table.factor],
    )
    a2.set(xlabel="best validation loss", title="best loss")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def twin_figure(twin: pd.DataFrame, factor: str, title: str):
    """nanoGPT and its twin with ``factor`` switched (``bundle.twin_gap``): the absolute difference
    of their training losses on a log scale (left), and both validation curves (right)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8))
    # clipped at 1e-9: a log axis cannot show the zero difference of two runs that agree exactly
    a1.semilogy(twin.step, twin.gap.clip(lower=1e-9), color="#d62728", marker="o", ms=3)
    a1.set(
        xlabel="step", ylabel="|difference of training losses|", title="how far apart the twins are"
    )
    # nanoGPT grey and the factor green, as their bars in bundle_bars
    a2.plot(twin.step, twin.val_none, color="#999999", lw=1.8, marker="o", ms=3, label="nanoGPT")
    a2.plot(
        twin.step, twin.val_factor, color="#2ca02c", lw=1.8, ls="--", marker="o", ms=3, label=factor
    )
    a2.set(xlabel="step", ylabel="validation loss", title="validation loss")
    _legend(a2)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def probes_over_training_figure(table: pd.DataFrame, title: str):
    """The three probes after the last block against the training step,
    one colour per configuration."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (col, label) in zip(axes, PROBE_MEASURES.items()):
        for config in _configs(table):
            # the probes' evaluations in step order
            t = table[table.config == config].sort_values("step")
            ax.plot(t.step, t[col], color=COLORS[config], lw=1.6, marker="o", ms=2.5, label=config)
        if col == "token_accuracy" and len(table):
            # chance: always guessing the most frequent token (lib.engine.probes)
            ax.axhline(table.token_chance.iloc[0], **FLOOR_STYLE)
        # after the last block: the state the final LayerNorm and the LM head read
        ax.set(xlabel="step", title=f"{label}, last block")
    if len(table):
        axes[2].set_yscale("log")  # effective rank from 1 to the width, as in probe_figure
    _legend(axes[0])
    fig.suptitle(title)
    fig.tight_layout()
    return fig


# one shape per seed, in the order the seeds first appear
SEED_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def escape_strip(
    table: pd.DataFrame,
    budget: int,
    title: str,
    planned: dict | None = None,
    chosen: dict | None = None,
):
    """Escape step per seed per factor (``schedule_seeds.schedule_runs().table``), one column per
    (implementation, factor), one marker per seed (the same shape for a seed in every column, so a
    seed can be followed across them); a run that never left the floor is drawn at "never", above
    the budget. Behind each factor's column, its baseline's range over the same seeds (the same
    implementation's "none"), which the rule (``schedule_seeds.schedule_effects``) reads it against.
    ``planned``: seeds planned per (implementation, factor), said under each column beside the seeds
    drawn, so a column still training is not read as complete. ``chosen``: per (implementation,
    factor), the seeds whose runs chose the factor (``schedule_seeds.chosen_seeds``), which the rule
    does not judge: drawn hollow, and left out of the band and the count."""
    chosen = chosen or {}
    fig, ax = plt.subplots(figsize=(9, 4.2))
    # one column per (implementation, factor), in the plan's order; a run with no outcome (diverged)
    # is named under its column, not drawn, as the rule leaves it out
    keys = list(dict.fromkeys(zip(table.impl, table.factor))) if len(table) else []
    lost = table[no_outcome(table)] if len(table) else table
    table = table[~no_outcome(table)] if len(table) else table
    seeds = list(dict.fromkeys(table.seed)) if len(table) else []
    marker = {s: SEED_MARKERS[k % len(SEED_MARKERS)] for k, s in enumerate(seeds)}
    # "never" sits above the budget, apart from a late escape; the budget itself is the dotted line
    never = budget * 1.1
    for i, (impl, factor) in enumerate(keys):
        g = table[(table.impl == impl) & (table.factor == factor)]
        picked = chosen.get((impl, factor), set())
        y = g.escape_step.astype(float).fillna(never)  # never left the floor: drawn at "never"
        # the baseline's range over this factor's judged seeds, as a band behind its column
        if factor != "none":
            judged = g.seed[~g.seed.isin(picked)]
            base = table[(table.impl == impl) & (table.factor == "none") & table.seed.isin(judged)]
            if len(base):
                b = base.escape_step.astype(float).fillna(never)
                ax.fill_between(
                    [i - 0.3, i + 0.3],
                    b.min(),
                    b.max(),
                    color="grey",
                    alpha=0.2,
                    lw=0,
                    label="baseline's range, same seeds"
                    if "baseline's range, same seeds" not in ax.get_legend_handles_labels()[1]
                    else None,
                )
                # its edges as lines, so that a range of one step (every seed alike) still shows
                ax.hlines([b.min(), b.max()], i - 0.3, i + 0.3, color="grey", lw=0.8, alpha=0.6)
        jitter = np.linspace(-0.15, 0.15, len(g)) if len(g) > 1 else [0.0]  # the seeds side by side
        # ResidualGPT in AttnOnly's green, nanoGPT in black
        color = COLORS["AttnOnly"] if impl == "residualgpt" else "black"
        for x, (seed, v) in zip(i + np.asarray(jitter), zip(g.seed, y)):
            hollow = (
                dict(facecolors="none", edgecolors=color) if seed in picked else dict(color=color)
            )
            ax.scatter([x], [v], s=30, marker=marker[seed], zorder=3, **hollow)
    ax.axhline(budget, color="grey", lw=0.8, ls=":")

    def tick(impl, factor):
        gone = (
            lost[(lost.impl == impl) & (lost.factor == factor)].seed.tolist() if len(lost) else []
        )
        drawn = (
            int(
                (
                    (table.impl == impl)
                    & (table.factor == factor)
                    & ~table.seed.isin(chosen.get((impl, factor), set()))
                ).sum()
            )
            if len(table)
            else 0
        )
        n = (
            f"\n{drawn} of {planned[impl, factor]} seeds"
            if planned and (impl, factor) in planned
            else ""
        )
        return f"{impl}\n{factor}{n}" + (
            f"\n(seed {', '.join(map(str, gone))} diverged)" if gone else ""
        )

    ax.set_xticks(range(len(keys)), [tick(impl, factor) for impl, factor in keys], fontsize=8)
    # ticks at 0, half the budget, the budget and "never": nothing between
    # the budget and "never" is a step
    ax.set_yticks([0, budget / 2, budget, never], ["0", f"{budget // 2:,}", f"{budget:,}", "never"])
    ax.set(
        ylabel="escape step\n(first evaluation 0.1 below the floor)",
        title=title,
        ylim=(0, never * 1.05),
    )
    # the legend: each seed's shape (in grey: the colour is the implementation's), then the band
    handles = [
        plt.Line2D([], [], ls="", marker=marker[s], color="grey", label=f"seed {s}") for s in seeds
    ]
    # the colour key: the implementation, whatever the seed
    handles += [
        plt.Line2D([], [], ls="", marker="o", color=c, label=impl)
        for impl, c in (("nanoGPT", "black"), ("ResidualGPT", COLORS["AttnOnly"]))
        if impl.lower() in set(table.impl)
    ]
    if any(
        len(set(table.seed[(table.impl == i) & (table.factor == f)]) & p)
        for (i, f), p in chosen.items()
    ):
        handles.append(
            plt.Line2D(
                [],
                [],
                ls="",
                marker="o",
                markerfacecolor="none",
                color="grey",
                label="seed that chose the factor (not judged)",
            )
        )
    handles += [h for h, lab in zip(*ax.get_legend_handles_labels()) if lab.startswith("baseline")]
    if handles:
        ax.legend(
            handles=handles,
            frameon=False,
            fontsize=8,
            ncol=min(len(handles), 5),
            loc="upper center",
            bbox_to_anchor=(0.5, -0.3),
        )
    fig.tight_layout()
    return fig
