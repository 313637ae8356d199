"""Static figures of training curves: validation loss per configuration and seed against its floors,
the longer budget, the paper-shape prefixes, the diagnostics, the gains, the evaluation noise, the
author's Phase-2 curves, and the front page's gap-recovered figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from ...engine.config import CONFIGS, PAPER_SEED
from ...engine.plans import SCHEDULE_NAMES, SCHEDULE_SEEDS, own_schedule
from ...engine.results import layer0_ffn, one_run
from .style import (
    COLORS,
    FLOOR_STYLE,
    _configs,
    _draw_floors,
    _floor,
    _legend,
    floor_lines,
    off_the_top,
    y_top,
)

# The nanoGPT schedule figure: the warm-up's colour (apart from every configuration's and the
# floor's), and a line style per seed, in the plan's order
WARMUP_COLOR = "#ff7f0e"
# (never the floor's dotted line)
SEED_DASHES = ("-", "--", "-.", (0, (6, 2, 1, 2, 1, 2)), (0, (10, 3)))


def val_curves(hist: pd.DataFrame, floor: float | dict, title: str, ax=None):
    """Validation loss against step, one colour per configuration, one thin line per seed (in
    numeric order, AttnOnly drawn over FFNOnly). The axis stops just above the step-0 loss;
    evaluations above it are named under the plot."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    # AttnOnly last: never hidden
    for config in sorted(_configs(hist), key=lambda c: c == "AttnOnly"):
        runs = hist[hist.config == config]
        # a reader's retrained seed is a line of its own beside the released run of the same seed
        keys = ["seed", "source"] if "source" in runs else ["seed"]
        # i == 0 below: one legend entry per configuration
        for i, (key, h) in enumerate(runs.groupby(keys)):
            diverged = "status" in h and (h.status == "diverged").any()
            # taken before dropna: a training divergence's row has no val_loss, but its
            # step is where the run stopped
            end = int(h.step.max())
            h = h.dropna(subset=["val_loss"])
            # dashed: a reader's own retrain
            retrained = "source" in h and (h.source == "retrained").any()
            ax.plot(
                h.step,
                h.val_loss,
                color=COLORS[config],
                lw=1.4,
                alpha=0.8,
                ls=":" if diverged else "--" if retrained else "-",
                label=config if i == 0 else None,
            )
            # dotted, and a cross where it diverged: never mistaken for a result
            if diverged and len(h):
                ax.plot(
                    [end],
                    [h.val_loss.iloc[-1]],
                    marker="x",
                    ms=8,
                    color=COLORS[config],
                    label=(
                        f"{config} seed {key[0] if isinstance(key, tuple) else key} diverged at "
                        f"step {end}"
                    ),
                )
    # the floors after the curves, so they sit on top and their labels follow
    # the configurations in the legend
    _draw_floors(ax, floor)
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title)
    top = y_top(hist)
    if top is not None:
        # down to the lowest loss or floor, whichever is lower, with a margin:
        # nothing drawn falls under the axis
        low = float(hist.val_loss.dropna().min())
        ax.set_ylim(min(low, *(v for _, v in floor_lines(floor))) - 0.15, top)
        # what the axis cuts is named under the plot, so the cap never hides a result
        if cut := off_the_top(hist, top):
            ax.text(
                0.0,
                -0.2,
                "off the top: " + "; ".join(cut),
                transform=ax.transAxes,
                fontsize=7,
                va="top",
                wrap=True,
            )
    if ax.get_legend_handles_labels()[0]:
        # off the data
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


def longer_budget_curves(
    hist: pd.DataFrame,
    probe_hist: pd.DataFrame,
    floor: float | dict,
    title: str,
    seed: int,
    ax=None,
):
    """The released runs of ``seed`` at the preset's budget (solid) and the longer-budget runs of
    the same seed (dashed, from ``Chapter.probe``), against the floor. The solid runs are drawn
    even before the probe has run."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    for c in _configs(hist):
        # the released run of this seed at the preset's budget; the probe's runs are
        # drawn from probe_hist below
        h = one_run(hist, c, seed, "released").dropna(subset=["val_loss"])
        if len(h):
            # the budget in the label: the solid run's steps read against the dashed probe's
            ax.plot(
                h.step,
                h.val_loss,
                color=COLORS[c],
                lw=1.4,
                label=f"{c} seed {seed}, {h.budget.iloc[0]:,} steps",
            )
    # a (configuration, budget) pair is one longer run
    for (config, budget), p in probe_hist[probe_hist.seed == seed].groupby(
        ["config", "budget"], sort=False
    ):
        p = p.dropna(subset=["val_loss"])
        ax.plot(
            p.step,
            p.val_loss,
            color=COLORS[config],
            lw=1.4,
            ls="--",
            label=f"{config} seed {seed}, {budget:,} steps",
        )
    # counted before the floors: axhline adds its lines to ax.lines too, and a floor is no curve
    n_runs = len(ax.lines)
    _draw_floors(ax, floor)
    lowest = min(
        [*(v for _, v in floor_lines(floor)), *(min(ln.get_ydata()) for ln in ax.lines[:n_runs])]
    )
    # step 0 lies far above: the floor is what matters here
    ax.set_ylim(lowest - 0.1, _floor(floor) + 0.5)
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title)
    _legend(ax)
    return ax


def prefix_curves(prefix, title: str):
    """The paper-shape 10M runs as far as they are trained (solid,
    ``paper_shape.paper_shape_prefix``) beside the `cpu` stand-in's seed-1337 run of the same
    implementation and configuration over the same steps (dashed), one panel per implementation; the
    unigram floor, and the paper's best value after its 3,000 steps as a short tick at the right
    edge (its curves are not published as numbers). With no paper-shape run released there is
    nothing solid to draw: one sentence says so and names the commands, and no figure."""
    # No solid run, no figure: the notebook shows the sentence and the first
    # command instead of an empty plot.
    if prefix.histories.empty:
        print(
            f"No paper-shape run is released yet ({len(prefix.missing)} planned, about 70-120 "
            "minutes each on a 2-core CPU); the first: "
            f"{prefix.missing[0] if prefix.missing else '-'}"
        )
        return None
    impls = ("nanogpt", "residualgpt")
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharey=True)
    # the furthest any prefix has trained (300 before any is)
    last = int(prefix.table.steps.max()) if len(prefix.table) else 300
    for ax, impl in zip(axes, impls):
        own = own_schedule(impl, "10M")
        for c in _configs(prefix.histories[prefix.histories.impl == impl]):
            runs = prefix.histories[
                (prefix.histories.impl == impl) & (prefix.histories.config == c)
            ].dropna(subset=["val_loss"])
            for schedule, h in runs.groupby("schedule", sort=False):
                # on the other implementation's schedule: squares and dash-dot, named in the legend
                swapped = schedule != own
                ax.plot(
                    h.step,
                    h.val_loss,
                    color=COLORS[c],
                    lw=2,
                    marker="s" if swapped else "o",
                    ms=4,
                    ls="-." if swapped else "-",
                    label=f"{c}, 10M (paper shape)"
                    + (f", {SCHEDULE_NAMES[schedule]}" if swapped else ""),
                )
        for c in _configs(prefix.stand_in_histories[prefix.stand_in_histories.impl == impl]):
            h = prefix.stand_in_histories
            # the stand-in over the prefixes' steps (at least its first evaluation after
            # step 0), read side by side
            h = h[(h.impl == impl) & (h.config == c) & (h.step <= max(last, 100))].dropna(
                subset=["val_loss"]
            )
            ax.plot(
                h.step, h.val_loss, color=COLORS[c], lw=1.2, ls="--", label=f"{c}, cpu stand-in"
            )
        # the paper's value is for each implementation's own recipe; the paper
        # trained no swapped schedule
        for r in prefix.table[
            (prefix.table.impl == impl) & (prefix.table.schedule == "recipe")
        ].itertuples():
            if r.paper_best_value is not None and not pd.isna(r.paper_best_value):
                # a left-pointing tick at the right edge: the paper's best after 3,000 steps,
                # not a point of this curve
                ax.plot(
                    [max(last, 100)],
                    [r.paper_best_value],
                    marker="<",
                    ms=9,
                    color=COLORS[r.config],
                    ls="none",
                    label=f"{r.config}: paper best after 3,000 steps",
                )
        # the floor this implementation's runs are judged on (results.floor_of)
        ax.axhline(
            prefix.floors[impl], **FLOOR_STYLE, label=f"unigram floor {prefix.floors[impl]:.4f}"
        )
        ax.set(xlabel="step", title=f"{impl}")
        # each panel's legend below it: inside, it covered the curves it names
        ax.legend(
            frameon=False, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2
        )
    axes[0].set_ylabel("validation loss (nats/token)")
    # from below the paper's best values to above every curve: a run on the other's schedule
    # overshoots step 0's ln 65 = 4.17 on its way (nanoGPT with the warm-up + cosine reaches 5.29 at
    # step 50), and a cut curve misleads
    top = max(4.6, float(prefix.histories.val_loss.max()) + 0.2)
    axes[0].set_ylim(1.0, top)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def diagnostics_figure(
    hist: pd.DataFrame, title: str, seed: int = PAPER_SEED, source: str = "released"
):
    """(a) Block 0's FFN gradient norm (``results.layer0_ffn``, the paper's Fig. 2a quantity) on a
    log axis, which separates the starved values (1e-5 and below) from each other; (b) hidden-state
    growth h_L / h_0, for one run per configuration: the same ``seed`` and ``source`` that
    ``joint_collapse.layer0_grad`` reads."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    # Histories without the diagnostics columns (runs trained without them) draw
    # two empty panels, not an error.
    for config in _configs(hist) if {"grad_norm_mlp", "hidden_growth"} <= set(hist.columns) else []:
        h = one_run(hist, config, seed, source).dropna(subset=["val_loss"])
        # step 0's evaluation comes before any backward pass, so it has no gradient row
        g = h.dropna(subset=["grad_norm_mlp"]) if "grad_norm_mlp" in h else h.iloc[0:0]
        # the author's definition where the run recorded it, else the FFN's whole parameter norm
        layer0 = [layer0_ffn(r) for r in g.to_dict("records")]
        a.plot(g.step, layer0, color=COLORS[config], label=config)
        # the stream's norm after the last block over the embedding's, on the
        # first fixed validation batch
        b.plot(h.step, h.hidden_growth, color=COLORS[config], label=config)
    a.set(
        yscale="log",
        xlabel="step",
        ylabel="block-0 FFN gradient norm",
        title="(a) layer-0 FFN gradient norm",
    )
    b.set(xlabel="step", ylabel="$\\|h_L\\| / \\|h_0\\|$", title="(b) hidden-state norm growth")
    _legend(a)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def gain_figure(curves: pd.DataFrame, title: str, floor: float | dict | None = None):
    """Validation curves per gain, runtime (left) and weight-level (right), against the floor; the
    legend sits beside the panels, off the curves."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    # gains are ordered, so a sequential colour map: the smallest dark, the largest light
    cmap = plt.get_cmap("viridis")
    gains = sorted(curves.gain.unique())
    # curves without a source column are all released
    source = curves["source"] if "source" in curves else pd.Series("released", index=curves.index)
    for ax, mode in zip(axes, ("runtime", "weight")):
        for i, g in enumerate(gains):
            # a retrained seed: its own lines
            for src, ls in (("released", "-"), ("retrained", "--")):
                # one (mode, gain) curve of one source; g = 1, the plain run, appears in both panels
                c = curves[
                    (curves["mode"] == mode) & (curves.gain == g) & (source == src)
                ].sort_values("step")
                if len(c):
                    # dotted, and said in the legend
                    diverged = "status" in c and (c.status == "diverged").any()
                    # the gains spread over the whole map
                    ax.plot(
                        c.step,
                        c.val_loss,
                        color=cmap(i / max(1, len(gains) - 1)),
                        ls=":" if diverged else ls,
                        label=f"g = {g:g}"
                        + (" (retrained)" if src == "retrained" else "")
                        + (f" (diverged after step {int(c.step.max())})" if diverged else ""),
                    )
        if floor is not None:  # the gain chapter passes its floor; a bare call draws none
            _draw_floors(ax, floor)
        ax.set(xlabel="step", title=f"{mode} gain")
    axes[0].set_ylabel("validation loss (nats/token)")
    # one legend for both panels, beside the second: they share the gains and their colours
    if axes[1].get_legend_handles_labels()[0]:
        axes[1].legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def gain_seeds_figure(
    curves: dict[int, pd.DataFrame], title: str, floor: float | dict | None = None
):
    """The runtime gains' validation curves, one panel per seed (``curves``: seed -> that
    seed's gain curves), coloured by gain as in ``gain_figure``, so a split that repeats
    from seed to seed can be seen to."""
    fig, axes = plt.subplots(
        1, len(curves), figsize=(3.8 * len(curves), 3.6), sharey=True, squeeze=False
    )
    cmap = plt.get_cmap("viridis")
    gains = sorted({g for c in curves.values() for g in c.gain.unique()})
    for ax, (seed, c) in zip(axes[0], curves.items()):
        run = c[c["mode"] == "runtime"]
        for i, g in enumerate(gains):
            one = run[run.gain == g].sort_values("step")
            if len(one):
                ax.plot(
                    one.step,
                    one.val_loss,
                    color=cmap(i / max(1, len(gains) - 1)),
                    label=f"g = {g:g}",
                )
        if floor is not None:
            _draw_floors(ax, floor)
        ax.set(xlabel="step", title=f"seed {seed}")
    axes[0][0].set_ylabel("validation loss (nats/token)")
    if axes[0][-1].get_legend_handles_labels()[0]:
        axes[0][-1].legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def noise_figure(noise: pd.DataFrame, title: str):
    """Histogram of random-evaluation estimates per checkpoint, with its fixed-batch
    value; one panel per checkpoint, each on its own x-range (the checkpoints are far
    apart, their noise is narrow)."""
    # squeeze=False: the axes stay a 1 x n array even for one checkpoint
    fig, axes = plt.subplots(
        1, max(1, len(noise)), figsize=(5 * max(1, len(noise)), 3.4), squeeze=False
    )
    for ax, (_, r) in zip(axes[0], noise.iterrows()):
        # random_eval_samples: 500 resampled random evaluations of the run's own
        # size (claims.fixed_val_batches)
        ax.hist(
            r.random_eval_samples,
            bins=30,
            color=COLORS[r.config],
            alpha=0.6,
            label=f"random {r.eval_batches}-batch evals",
        )
        # the one value the fixed batches give, where the random evaluations scatter
        ax.axvline(r.fixed_val, color=COLORS[r.config], lw=2, ls="--", label="fixed batches")
        ax.set(xlabel="validation loss", ylabel="count", title=f"{r.config}, seed {r.seed}")
        # no offset: across such a narrow range matplotlib would print the
        # ticks as offsets from one value
        ax.ticklabel_format(axis="x", useOffset=False)
        _legend(ax)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def seed_labels(
    ends: list[tuple[int, float, int]], apart: float = 0.05
) -> dict[tuple[int, float], str]:
    """One label per place where runs end ({(step, loss): "seed, seed"}), from each run's (last
    step, last loss, seed): runs ending at the same step within ``apart`` in loss (those that never
    left the floor, all stopped at the plan's last step) share one label, at the first one's end,
    rather than printing over one another."""
    labels: dict[tuple[int, float], list[int]] = {}
    for step, loss, seed in sorted(ends):
        near = next((k for k in labels if k[0] == step and abs(k[1] - loss) <= apart), None)
        labels.setdefault(near or (step, loss), []).append(seed)
    return {k: ", ".join(map(str, sorted(v))) for k, v in labels.items()}


def phase2_figure(
    curves: pd.DataFrame, ours: pd.DataFrame, floor: float, phase3: float, title: str
):
    """The author's Phase-2 AttnOnly and FFNOnly curves (constant learning rate;
    ``paper.author_phase2_curves``), one line per seed, beside Phase 3's AttnOnly mean after 3,000
    steps (a tick at the right edge) and this book's paper-shape ResidualGPT AttnOnly runs on each
    schedule, one line per seed (``ours``: histories, e.g.
    ``claims.schedule_10m.schedule_10m_histories``), on one axis; their steps again, enlarged, in a
    panel of their own to its right."""
    h = ours
    # ResidualGPT AttnOnly only: the run whose Phase-2 and Phase-3 results disagree (§8.1)
    h = (
        h[(h.impl == "residualgpt") & (h.config == "AttnOnly")].dropna(subset=["val_loss"])
        if len(h)
        else h
    )
    # The first steps, where this book's runs are, enlarged beside the main axis: at the full axis
    # they fill its first tenth, and an inset drawn over the main axis covered its floor lines.
    if len(h):
        fig, (ax, zoom) = plt.subplots(
            1, 2, figsize=(12, 5.6), gridspec_kw={"width_ratios": [2.2, 1]}
        )
    else:
        (fig, ax), zoom = plt.subplots(figsize=(9, 6)), None
    # the author's three Phase-2 seeds, told apart by line style (their
    # colour is their configuration's)
    styles = {PAPER_SEED: "-", 42: "--", 123: ":"}
    # AttnOnly and FFNOnly: the pair whose gap the paper's asymmetry is about
    authors = curves[curves.config.isin(["AttnOnly", "FFNOnly"])]
    for (config, seed), g in authors.groupby(["config", "seed"]):
        ax.plot(
            g.step,
            g.val_loss,
            color=COLORS[config],
            ls=styles.get(seed, "-."),
            lw=1.2,
            alpha=0.8,
            label=f"author's Phase-2 notebook, {config} seed {seed}",
        )
    for schedule, s in h.groupby("schedule") if len(h) else []:
        name = SCHEDULE_NAMES[schedule]
        # black (constant lr) or grey (warm-up + cosine), told apart by marker too: this book's
        # runs stand apart from the author's coloured curves, whose line styles are their seeds;
        # one legend entry per schedule
        style = dict(
            color="black" if schedule == "constant" else "0.45",
            marker="o" if schedule == "cosine" else "s",
            ms=3,
            lw=1.6,
        )
        seeds = sorted(set(s.seed))
        # how far each seed's run has trained: the runs of one schedule stop at different
        # steps (the plan's rule, or a run still short of its stop), so the legend never gives
        # them all the furthest one's
        last = s.groupby("seed").step.max()
        to = "; ".join(
            f"{', '.join(str(x) for x in sorted(g.index))} to step {int(step):,}"
            for step, g in sorted(last.groupby(last), key=lambda kv: -kv[0])
        )
        label = (
            f"this book, ResidualGPT AttnOnly, 10M paper shape, {name}, "
            f"seed{'s' if len(seeds) > 1 else ''} {to}"
        )
        ends = []
        for i, (seed, g) in enumerate(s.groupby("seed")):
            g = g.sort_values("step")
            ax.plot(g.step, g.val_loss, **style, label=label if i == 0 else None)
            zoom.plot(g.step, g.val_loss, **style)
            ends.append((int(g.step.iloc[-1]), float(g.val_loss.iloc[-1]), seed))
        if schedule == "constant":
            # the constant-rate runs part where each leaves the floor, so each is named by its seed
            # at its end; the warm-up runs leave together at their first evaluation and run on side
            # by side, where names would overlap (the legend gives each seed's last step)
            for (step, loss), names in seed_labels(ends).items():
                zoom.annotate(
                    names,
                    (step, loss),
                    xytext=(3, 0),
                    textcoords="offset points",
                    fontsize=7,
                    va="center",
                )
    if zoom is not None:
        end = int(h.step.max())
        for (config, seed), g in authors[authors.step <= end].groupby(["config", "seed"]):
            zoom.plot(
                g.step,
                g.val_loss,
                color=COLORS[config],
                ls=styles.get(seed, "-."),
                lw=1.2,
                alpha=0.8,
            )
        zoom.axhline(floor, **FLOOR_STYLE)
        # from below the lowest loss our runs reach (or the floor) to above
        # the step-0 loss (ln 65 = 4.17)
        zoom.set(
            xlim=(0, end),
            ylim=(min(float(h.val_loss.min()), floor) - 0.15, 4.3),
            xlabel="step",
            title=f"the first {end:,} steps, enlarged",
        )
    # Phase 3's mean placed at its last step, 3,000: the paper reports where
    # the runs end, not their curves
    ax.plot(
        [3000],
        [phase3],
        marker="<",
        ms=10,
        color=COLORS["AttnOnly"],
        ls="none",
        label=f"paper, Phase 3, AttnOnly mean {phase3:.3f} (8 seeds)",
    )
    ax.axhline(floor, **FLOOR_STYLE, label=f"unigram floor {floor:.4f}")
    # from below Phase 3's 1.580 to above the step-0 loss (ln 65 = 4.17)
    ax.set(
        xlabel="step",
        ylabel="validation loss (nats/token)",
        ylim=(1.3, 4.3),
        title="the whole 3,000 steps" if zoom is not None else "",
    )
    fig.suptitle(title)
    fig.tight_layout()
    # below both panels, in two columns: about ten entries would cover the curves, and
    # beside them they squeeze the axes
    fig.legend(
        *ax.get_legend_handles_labels(),
        frameon=False,
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=2,
    )
    return fig


def seed_panels(
    hist: pd.DataFrame,
    floor: float | dict,
    title: str,
    paper_seeds: pd.DataFrame | None = None,
    paper_label: str = "paper",
):
    """One panel per configuration, every seed a labelled line, each panel's y-range its own runs'
    (from the floor down to its lowest loss, the step-0 spike cut): configurations that sit 0.01
    apart on one shared axis are told apart here, and a seed that leaves the floor shows as the one
    line below it. The early descent (above every run's second half and the floors) runs off the
    top. ``paper_seeds``: the author's per-seed values where a notebook prints them (columns config,
    seed, value, ref), written in the panel's corner, not drawn on our axis, since they are another
    scale's losses on other data."""
    configs = [c for c in CONFIGS if c in set(hist.config)] or list(CONFIGS)
    # Two panels a row on the page's 9.5-inch width (the lead figure's), so that 10-point labels are
    # drawn at about 11 px at a 1,400-px window; four in a row shrank them to 7-8 px.
    ncols = min(2, len(configs))
    nrows = -(-len(configs) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(4.75 * ncols, 4.9 * nrows), squeeze=False, sharex=True
    )
    for ax in axes.flat[len(configs) :]:
        ax.set_visible(False)
    for ax, config in zip(axes.flat, configs):
        runs = hist[hist.config == config].dropna(subset=["val_loss"])
        ends = []
        for seed, h in runs.groupby("seed"):
            h = h.sort_values("step")
            ax.plot(h.step, h.val_loss, color=COLORS[config], lw=1.2, alpha=0.85)
            ends.append((int(h.step.iloc[-1]), float(h.val_loss.iloc[-1]), int(seed)))
        _draw_floors(ax, floor)
        # the second half of each run: the early descent from the untrained
        # model's loss runs off the top
        late = runs[runs.step >= runs.groupby("seed").step.transform("max") / 2].val_loss
        if len(late):
            floors = [v for _, v in floor_lines(floor)]
            lo, hi = min(*runs.val_loss, *floors), max(*late, *floors)
            pad = max(0.05, 0.1 * (hi - lo))
            ax.set_ylim(lo - pad, hi + pad)
            # seeds that end within a twentieth of the panel's range share one label,
            # not printed over each other
            for (step, loss), label in seed_labels(ends, apart=(hi - lo + 2 * pad) / 20).items():
                ax.annotate(
                    label,
                    (step, loss),
                    fontsize=10,
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    color=COLORS[config],
                )
        n = runs.seed.nunique()
        ax.set_title(f"{config} ({n} seed{'s' if n != 1 else ''})", fontsize=11)
        ax.xaxis.set_tick_params(labelbottom=True)  # every panel keeps its steps
        ax.set_xlabel("step", fontsize=11)
        ax.tick_params(labelsize=10)
        if paper_seeds is not None and len(paper_seeds):
            p = paper_seeds[paper_seeds.config == config]
            if len(p):  # under the panel, never over the curves
                text = "\n".join(
                    f"seed {int(r.seed)}: {r.value:.3f} ({r.ref})" for r in p.itertuples()
                )
                ax.text(
                    0.0,
                    -0.2,
                    f"{paper_label}:\n{text}",
                    transform=ax.transAxes,
                    fontsize=10,
                    va="top",
                )
    for row in axes:
        row[0].set_ylabel("validation loss (nats/token)", fontsize=11)
    names = "; ".join(
        f"{'dotted' if k == 0 else 'dashed'}: {n} {v:.3f}"
        for k, (n, v) in enumerate(floor_lines(floor))
    )
    fig.suptitle(f"{title}\n{names}", fontsize=11)
    fig.tight_layout()
    return fig


def nanogpt_schedule_figure(
    ours: pd.DataFrame, author: pd.DataFrame, floor: float, title: str, steps: int
):
    """nanoGPT AttnOnly at the paper's 10M shape, one line per seed on each schedule (``ours``:
    histories, e.g. ``claims.schedule_10m.nanogpt_schedule_histories``): its own constant rate
    (black squares) and the same recipe with only a warm-up + cosine (orange circles), a line style
    per seed, each as far as it has trained, against the unigram floor; beside them, where the
    author's NanoGPT_10M.ipynb left each configuration at its last step (``author``:
    ``paper.author_nanogpt10m_curves``), marked at the right edge, with ``steps`` (the plan's stop)
    as the x-axis."""
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(9.5, 5.5))
    h = (
        ours[(ours.impl == "nanogpt") & (ours.config == "AttnOnly")].dropna(subset=["val_loss"])
        if len(ours)
        else ours
    )
    # a seed's line style is the same on both schedules, so a seed's two runs can be paired
    order = list(SCHEDULE_SEEDS) + sorted(set(h.seed) - set(SCHEDULE_SEEDS)) if len(h) else []
    dash = {seed: SEED_DASHES[i % len(SEED_DASHES)] for i, seed in enumerate(order)}
    schedules = []
    for schedule, s in h.groupby("schedule") if len(h) else []:
        style = dict(
            color="black" if schedule == "constant" else WARMUP_COLOR,
            marker="s" if schedule == "constant" else "o",
            ms=3,
            lw=1.4,
        )
        label = f"this book, {SCHEDULE_NAMES[schedule]}" + (
            " (the author's recipe)" if schedule == own_schedule("nanogpt", "10M") else ""
        )
        # the schedule's legend entry drawn solid, whichever seed comes first
        schedules.append((Line2D([], [], **style), label))
        for seed, g in s.groupby("seed"):
            g = g.sort_values("step")
            ax.plot(g.step, g.val_loss, **style, ls=dash[seed])
    # the author's log gives only where each configuration ends (step 2,999): a
    # marker at the right edge, its value
    for i, r in enumerate(author.itertuples()):
        ax.plot(
            # side by side: the configurations end within a hundredth of each other
            [steps * (1.025 + 0.03 * i)],
            [r.val_loss],
            marker="<",
            ms=9,
            ls="none",
            color=COLORS.get(r.config, "black"),
            label=(
                f"author's NanoGPT_10M.ipynb, {r.config} at step {int(r.step):,}: {r.val_loss:.4f}"
            ),
        )
    # nanoGPT evaluates on fresh random batches: its floor is the whole validation split's
    ax.axhline(floor, **FLOOR_STYLE, label=f"unigram floor, whole validation split {floor:.4f}")
    low = min([floor, *([float(h.val_loss.min())] if len(h) else []), *author.val_loss])
    # every evaluation drawn, step 0's too
    top = max([4.3, *([float(h.val_loss.max()) + 0.1] if len(h) else [])])
    ax.set(
        xlabel="step",
        ylabel="validation loss (nats/token)",
        xlim=(0, steps * (1.04 + 0.03 * len(author))),
        ylim=(low - 0.15, top),
        title=title,
    )
    # top right, over the steps after the first evaluations, where the
    # curves run at or below the floor; then a line style per seed drawn
    handles, labels = ax.get_legend_handles_labels()
    handles = [handle for handle, _ in schedules] + handles
    labels = [label for _, label in schedules] + labels
    seeds = [seed for seed in dash if len(h) and (h.seed == seed).any()]
    handles += [Line2D([], [], color="0.3", lw=1.4, ls=dash[seed]) for seed in seeds]
    labels += [f"seed {seed}" for seed in seeds]
    ax.legend(
        handles,
        labels,
        frameon=True,
        framealpha=0.9,
        edgecolor="none",
        fontsize=10,
        loc="upper right",
    )
    fig.tight_layout()
    return fig
