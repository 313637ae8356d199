"""Figures for the book: static matplotlib figures and offline interactive plotly plots.

Interactive plots are emitted as HTML without plotly.js (the book loads the
package's own ``plotly.min.js`` once, locally) plus plotly's JSON for live
Jupyter front-ends; every plot has a stable ``div_id``.
"""
from __future__ import annotations

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .config import CONFIGS
from .results import FIG2_SEED, layer0_ffn, one_run, pooled

COLORS = {"FullResidual": "#1f77b4", "AttnOnly": "#2ca02c", "FFNOnly": "#d62728", "NoResidual": "#7f7f7f"}


def _sharp_inline_figures() -> None:
    """In a notebook (and so in the built book): PNGs at twice the resolution, shown at their usual size,
    so that the figures stay sharp on a high-density screen."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return
    if get_ipython() is not None:
        set_matplotlib_formats("retina")


_sharp_inline_figures()
FLOOR_STYLE = dict(color="black", linestyle=":", linewidth=1.2)
OTHER_FLOOR_STYLE = dict(color="grey", linestyle="--", linewidth=0.9)


def floor_lines(floor) -> list[tuple[str, float]]:
    """The floor lines a figure draws: a number is the unigram floor; a dict (``Chapter.floor_lines``) names each
    line, the first the floor the chapter's verdicts use (on BPE data the NoResidual run, not the unigram
    floor, so that the two are never confused)."""
    return list(floor.items()) if isinstance(floor, dict) else [("unigram floor", float(floor))]


def _floor(floor) -> float:
    return floor_lines(floor)[0][1]


def _draw_floors(ax, floor) -> None:
    for k, (name, value) in enumerate(floor_lines(floor)):
        ax.axhline(value, **(FLOOR_STYLE if k == 0 else OTHER_FLOOR_STYLE), label=f"{name} {value:.3f}")


def _legend(ax) -> None:
    if ax.get_legend_handles_labels()[0]:  # an empty chapter (no runs yet) draws no legend
        ax.legend(frameon=False, fontsize=8)


def _configs(df: pd.DataFrame) -> list[str]:
    return [c for c in CONFIGS if c in set(df.config)]


def y_top(hist: pd.DataFrame) -> float | None:
    """The top of a loss axis: just above the untrained models' step-0 loss, so that a spike later in a
    run cannot squash the curves that matter (``off_the_top`` names what is cut)."""
    h = hist.dropna(subset=["val_loss"])
    return float(h[h.step == h.step.min()].val_loss.max()) + 0.25 if len(h) else None


def off_the_top(hist: pd.DataFrame, top: float) -> list[str]:
    """The evaluations above ``top``: 'FFNOnly seed 0: 9.62 at step 300'."""
    h = hist.dropna(subset=["val_loss"])
    h = h[h.val_loss > top]
    return [f"{r.config} seed {r.seed}: {r.val_loss:.2f} at step {int(r.step)}"
            for r in h.sort_values(["config", "seed", "step"]).itertuples()]


def val_curves(hist: pd.DataFrame, floor: float | dict, title: str, ax=None):
    """Validation loss against step, one colour per configuration, one thin line per seed (in numeric
    order, AttnOnly drawn over FFNOnly). The axis stops just above the step-0 loss; evaluations above it
    are named under the plot."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    for config in sorted(_configs(hist), key=lambda c: c == "AttnOnly"):  # AttnOnly last: never hidden
        runs = hist[hist.config == config]
        keys = ["seed", "source"] if "source" in runs else ["seed"]
        for i, (key, h) in enumerate(runs.groupby(keys)):
            diverged = "status" in h and (h.status == "diverged").any()
            end = int(h.step.max())
            h = h.dropna(subset=["val_loss"])
            retrained = "source" in h and (h.source == "retrained").any()  # dashed: a reader's own retrain
            ax.plot(h.step, h.val_loss, color=COLORS[config], lw=1.4, alpha=0.8,
                    ls=":" if diverged else "--" if retrained else "-", label=config if i == 0 else None)
            if diverged and len(h):  # dotted, and a cross where it diverged: never mistaken for a result
                ax.plot([end], [h.val_loss.iloc[-1]], marker="x", ms=8, color=COLORS[config],
                        label=f"{config} seed {key[0] if isinstance(key, tuple) else key} diverged at step {end}")
    _draw_floors(ax, floor)
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title)
    top = y_top(hist)
    if top is not None:
        low = float(hist.val_loss.dropna().min())
        ax.set_ylim(min(low, *(v for _, v in floor_lines(floor))) - 0.15, top)
        if cut := off_the_top(hist, top):
            ax.text(0.0, -0.2, "off the top: " + "; ".join(cut), transform=ax.transAxes, fontsize=7, va="top",
                    wrap=True)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # off the data
    return ax


def longer_budget_curves(hist: pd.DataFrame, probe_hist: pd.DataFrame, floor: float | dict, title: str,
                         seed: int, ax=None):
    """The released runs of ``seed`` at the preset's budget (solid) and the longer-budget runs of the
    same seed (dashed, from ``Chapter.probe``), against the floor. The solid runs are drawn even
    before the probe has run."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    for c in _configs(hist):
        h = one_run(hist, c, seed, "released").dropna(subset=["val_loss"])
        if len(h):
            ax.plot(h.step, h.val_loss, color=COLORS[c], lw=1.4, label=f"{c} seed {seed}, {h.budget.iloc[0]:,} steps")
    for (config, budget), p in probe_hist[probe_hist.seed == seed].groupby(["config", "budget"], sort=False):
        p = p.dropna(subset=["val_loss"])
        ax.plot(p.step, p.val_loss, color=COLORS[config], lw=1.4, ls="--",
                label=f"{config} seed {seed}, {budget:,} steps")
    n_runs = len(ax.lines)
    _draw_floors(ax, floor)
    lowest = min([*(v for _, v in floor_lines(floor)), *(min(ln.get_ydata()) for ln in ax.lines[:n_runs])])
    ax.set_ylim(lowest - 0.1, _floor(floor) + 0.5)  # step 0 lies far above: the floor is what matters here
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title)
    _legend(ax)
    return ax


def prefix_curves(prefix, title: str):
    """The paper-shape 10M runs as far as they are trained (solid, ``paper_shape.paper_shape_prefix``) beside the
    `cpu` stand-in's seed-1337 run of the same implementation and configuration over the same steps
    (dashed), one panel per implementation; the unigram floor, and the paper's best value after its
    3,000 steps as a short tick at the right edge (its curves are not published as numbers)."""
    impls = ("nanogpt", "residualgpt")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    last = int(prefix.table.steps.max()) if len(prefix.table) else 300
    for ax, impl in zip(axes, impls):
        own = "constant" if impl == "nanogpt" else "cosine"  # each implementation's own schedule
        for c in _configs(prefix.histories[prefix.histories.impl == impl]):
            runs = prefix.histories[(prefix.histories.impl == impl) & (prefix.histories.config == c)].dropna(
                subset=["val_loss"])
            for schedule, h in runs.groupby("schedule", sort=False):
                swapped = schedule != own
                ax.plot(h.step, h.val_loss, color=COLORS[c], lw=2, marker="s" if swapped else "o", ms=4,
                        ls="-." if swapped else "-", label=f"{c}, 10M (paper shape)"
                        + (f", {'warm-up + cosine' if schedule == 'cosine' else 'constant lr'}" if swapped else ""))
        for c in _configs(prefix.stand_in_histories[prefix.stand_in_histories.impl == impl]):
            h = prefix.stand_in_histories
            h = h[(h.impl == impl) & (h.config == c) & (h.step <= max(last, 100))].dropna(subset=["val_loss"])
            ax.plot(h.step, h.val_loss, color=COLORS[c], lw=1.2, ls="--", label=f"{c}, cpu stand-in")
        for r in prefix.table[(prefix.table.impl == impl) & (prefix.table.schedule == "recipe")].itertuples():
            if r.paper_best_value is not None and not pd.isna(r.paper_best_value):
                ax.plot([max(last, 100)], [r.paper_best_value], marker="<", ms=9, color=COLORS[r.config],
                        ls="none", label=f"{r.config}: paper best after 3,000 steps")
        ax.axhline(prefix.floor, **FLOOR_STYLE, label=f"unigram floor {prefix.floor:.3f}")
        ax.set(xlabel="step", title=f"{impl}")
        ax.legend(frameon=False, fontsize=7, loc="upper right")
    axes[0].set_ylabel("validation loss (nats/token)")
    axes[0].set_ylim(1.0, 4.6)  # step 0 (ln 65 = 4.17) to below the paper's best values
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def diagnostics_figure(hist: pd.DataFrame, title: str, seed: int = FIG2_SEED, source: str = "released"):
    """(a) Block 0's FFN gradient norm (``results.layer0_ffn``, the paper's Fig. 2a quantity) on a log axis,
    which separates the starved values (1e-5 and below) from each other; (b) hidden-state growth h_L / h_0, for
    one run per configuration: the same ``seed`` and ``source`` that ``joint_collapse.layer0_grad`` reads."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.6))
    for config in _configs(hist) if {"grad_norm_mlp", "hidden_growth"} <= set(hist.columns) else []:
        h = one_run(hist, config, seed, source).dropna(subset=["val_loss"])
        g = h.dropna(subset=["grad_norm_mlp"]) if "grad_norm_mlp" in h else h.iloc[0:0]
        layer0 = [layer0_ffn(r) for r in g.to_dict("records")]
        a.plot(g.step, layer0, color=COLORS[config], label=config)
        b.plot(h.step, h.hidden_growth, color=COLORS[config], label=config)
    a.set(yscale="log", xlabel="step", ylabel="block-0 FFN gradient norm", title="(a) layer-0 FFN gradient norm")
    b.set(xlabel="step", ylabel="$\\|h_L\\| / \\|h_0\\|$", title="(b) hidden-state norm growth")
    _legend(a)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def gain_figure(curves: pd.DataFrame, title: str, floor: float | dict | None = None):
    """Validation curves per gain, runtime (left) and weight-level (right), against the floor; the legend sits
    beside the panels, off the curves."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    cmap = plt.get_cmap("viridis")
    gains = sorted(curves.gain.unique())
    source = curves["source"] if "source" in curves else pd.Series("released", index=curves.index)
    for ax, mode in zip(axes, ("runtime", "weight")):
        for i, g in enumerate(gains):
            for src, ls in (("released", "-"), ("retrained", "--")):  # a retrained seed: its own lines
                c = curves[(curves["mode"] == mode) & (curves.gain == g) & (source == src)].sort_values("step")
                if len(c):
                    diverged = "status" in c and (c.status == "diverged").any()  # dotted, and said in the legend
                    ax.plot(c.step, c.val_loss, color=cmap(i / max(1, len(gains) - 1)), ls=":" if diverged else ls,
                            label=f"g = {g:g}" + (" (retrained)" if src == "retrained" else "")
                            + (f" (diverged after step {int(c.step.max())})" if diverged else ""))
        if floor is not None:
            _draw_floors(ax, floor)
        ax.set(xlabel="step", title=f"{mode} gain")
    axes[0].set_ylabel("validation loss (nats/token)")
    if axes[1].get_legend_handles_labels()[0]:
        axes[1].legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title)
    fig.tight_layout()
    return fig


class PlotlyHTML:
    """Displays as offline HTML in the book and as a live plotly figure in Jupyter."""

    def __init__(self, fig: go.Figure, div_id: str):
        self.fig, self.div_id = fig, div_id

    def html(self) -> str:
        return self.fig.to_html(include_plotlyjs=False, full_html=False, include_mathjax=False,
                                div_id=self.div_id, config={"displaylogo": False})

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "application/vnd.plotly.v1+json": json.loads(self.fig.to_json())}


def group_explorer(df: pd.DataFrame, select: str, color: str, div_id: str, title: str,
                   label: str = "label", floor: float | dict | None = None) -> PlotlyHTML:
    """Validation curves, one trace per ``label``; a dropdown shows one value of ``select`` (or all).

    ``color`` names the column that picks each trace's colour (configurations get their fixed colours).
    """
    fig = go.Figure()
    keys = []
    palette = plt.get_cmap("viridis")
    colour_values = sorted(df[color].unique(), key=str)
    for lab, h in df.dropna(subset=["val_loss"]).groupby(label, sort=False):
        h = h.sort_values("step")
        cval = h[color].iloc[0]
        col = COLORS.get(cval) or matplotlib.colors.to_hex(
            palette(colour_values.index(cval) / max(1, len(colour_values) - 1)))
        fig.add_trace(go.Scatter(x=h.step, y=h.val_loss, mode="lines+markers", marker=dict(size=4),
                                 line=dict(color=col, width=1.5), name=str(lab),
                                 hovertemplate=f"{lab}<br>step %{{x}}<br>val loss %{{y:.4f}}<extra></extra>"))
        keys.append(h[select].iloc[0])
    if floor is not None:
        for k, (name, value) in enumerate(floor_lines(floor)):
            fig.add_hline(y=value, line=dict(color="black" if k == 0 else "grey", dash="dot" if k == 0 else "dash",
                                             width=1),
                          annotation_text=f"{name} {value:.3f}",
                          annotation_position="top right" if k == 0 else "bottom right")
        top = y_top(df)
        if top is not None:  # a late spike must not squash the curves; zooming out shows it
            low = min(float(df.val_loss.dropna().min()), *(v for _, v in floor_lines(floor)))
            fig.update_yaxes(range=[low - 0.15, top])
    choices = sorted(set(keys), key=lambda v: (isinstance(v, str), v))  # seeds and gains in numeric order
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * len(keys)}])]
    buttons += [dict(label=f"{select} {v}", method="update", args=[{"visible": [bool(k == v) for k in keys]}])
                for v in choices]
    fig.update_layout(title=title, xaxis_title="step", yaxis_title="validation loss", height=460,
                      template="plotly_white", margin=dict(t=90),
                      updatemenus=[dict(buttons=buttons, direction="down", x=0.0, xanchor="left",
                                        y=1.13, yanchor="top", showactive=True)])
    return PlotlyHTML(fig, div_id)


def seed_explorer(hist: pd.DataFrame, floor: float | dict, div_id: str, title: str) -> PlotlyHTML:
    """Validation curves, one trace per (configuration, seed); the dropdown picks a seed."""
    order = {c: i for i, c in enumerate(CONFIGS)}
    h = hist.assign(_o=hist.config.map(order)).sort_values(["_o", "seed", "step"])
    retrained = h.get("source", pd.Series("released", index=h.index)).eq("retrained")
    diverged = h.get("status", pd.Series("complete", index=h.index)).eq("diverged")
    h = h.assign(label=h.config + " seed " + h.seed.astype(str) + retrained.map({True: " (retrained)", False: ""})
                 + diverged.map({True: " (diverged)", False: ""}))
    return group_explorer(h, select="seed", color="config", div_id=div_id, title=title, floor=floor)


def gain_explorer(curves: pd.DataFrame, div_id: str, title: str) -> PlotlyHTML:
    """``gain_curves`` interactively: one trace per (mode, gain, source); the menu picks a mode."""
    suffix = curves.get("source", pd.Series("released", index=curves.index)).map(
        {"released": "", "retrained": " (retrained)"})
    labelled = curves.assign(label=curves["mode"] + " g=" + curves.gain.map("{:g}".format) + suffix)
    return group_explorer(labelled, select="mode", color="gain", div_id=div_id, title=title)


def noise_figure(noise: pd.DataFrame, title: str):
    """Histogram of random-evaluation estimates per checkpoint, with its fixed-batch value; one panel
    per checkpoint, each on its own x-range (the checkpoints are far apart, their noise is narrow)."""
    fig, axes = plt.subplots(1, max(1, len(noise)), figsize=(5 * max(1, len(noise)), 3.4), squeeze=False)
    for ax, (_, r) in zip(axes[0], noise.iterrows()):
        ax.hist(r.random_eval_samples, bins=30, color=COLORS[r.config], alpha=0.6,
                label=f"random {r.eval_batches}-batch evals")
        ax.axvline(r.fixed_val, color=COLORS[r.config], lw=2, ls="--", label="fixed batches")
        ax.set(xlabel="validation loss", ylabel="count", title=f"{r.config}, seed {r.seed}")
        ax.ticklabel_format(axis="x", useOffset=False)
        _legend(ax)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def best_val_strip(summaries: pd.DataFrame, paper: pd.DataFrame | None, floor: float | dict, div_id: str,
                   title: str, paper_label: str = "paper") -> PlotlyHTML:
    """Best validation loss of every seed (hover: seed, escape step) beside the paper's mean ± std.

    Two panels on one y-axis, ours (with our floors) and the paper's: the paper is at another scale (on other
    data at 124M), so the panels are apart, but the same loss reads at the same height in both, and a stand-in
    that sits on the floor where the paper's model left it shows as the gap it is."""
    from plotly.subplots import make_subplots
    has_paper = paper is not None and len(paper) > 0
    fig = make_subplots(rows=1, cols=2 if has_paper else 1, horizontal_spacing=0.12, shared_yaxes=True,
                        subplot_titles=["ours", paper_label] if has_paper else ["ours"])
    configs = _configs(summaries) or list(CONFIGS)
    for i, config in enumerate(configs):
        s = summaries[summaries.config == config].sort_values("seed")
        jitter = np.linspace(-0.18, 0.18, len(s)) if len(s) > 1 else np.zeros(len(s))  # seeds side by side
        fig.add_trace(go.Scatter(
            x=i + jitter, y=s.best_val_loss, mode="markers", name=f"ours: {config}",
            marker=dict(color=COLORS[config], size=9, line=dict(width=1, color="white")),
            customdata=list(zip(s.seed, s.escape_step.fillna(-1))),
            hovertemplate="seed %{customdata[0]}<br>best val %{y:.4f}<br>"
                          "escape step %{customdata[1]} (-1: none)<extra>ours</extra>"), row=1, col=1)
    for k, (name, value) in enumerate(floor_lines(floor)):
        fig.add_hline(y=value, line=dict(color="black" if k == 0 else "grey", dash="dot" if k == 0 else "dash",
                                         width=1), row=1, col=1, annotation_text=f"our {name} {value:.3f}",
                      annotation_position="top right" if k == 0 else "bottom right")
    if has_paper:
        fig.add_trace(go.Scatter(
            x=paper.config, y=paper.value, mode="markers", name=paper_label,
            marker=dict(symbol="diamond-open", size=12, color="black"),
            error_y=dict(type="data", array=paper["std"].fillna(0), visible=True),
            customdata=paper.reported, hovertemplate="%{x}<br>paper %{customdata}<extra></extra>"), row=1, col=2)
        fig.update_xaxes(categoryorder="array", categoryarray=configs, row=1, col=2)
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(configs))), ticktext=configs,
                     range=[-0.5, len(configs) - 0.5], row=1, col=1)
    fig.update_yaxes(title_text="best validation loss", row=1, col=1)
    fig.update_layout(title=title, template="plotly_white", height=440)
    return PlotlyHTML(fig, div_id)


def seed_widget(hist: pd.DataFrame, floor: float, title: str = "validation loss"):
    """Live-kernel control: a dropdown of seeds redrawing ``val_curves`` for the chosen one.

    The built HTML uses the plotly menus instead (no kernel there); this is for Jupyter.
    """
    import ipywidgets as widgets

    seeds = ["all", *sorted(int(s) for s in hist.seed.unique())]
    out = widgets.Output()
    pick = widgets.Dropdown(options=seeds, value="all", description="seed")

    def draw(choice):
        out.clear_output(wait=True)
        with out:
            h = hist if choice == "all" else hist[hist.seed == choice]
            val_curves(h, floor, f"{title}, seed {choice}")
            plt.show()

    pick.observe(lambda change: draw(change["new"]), names="value")
    draw("all")
    return widgets.VBox([pick, out])


# -- book/mechanism.ipynb ------------------------------------------------------------------------------
LADDER_STYLE = dict(color="black", linewidth=0.9)
LADDER_DASHES = {1: ":", 2: "--", 3: "-.", 4: (0, (1, 3))}


def floor_ladder(ax, floors: pd.DataFrame, orders=(1, 2, 3)) -> None:
    """Horizontal lines at the n-gram floors (``mechanism.floors`` rows), labelled for the legend: on the fixed
    validation batches where computed (the tokens the `residualgpt` runs are evaluated on), else on the split."""
    for r in floors[floors.order.isin(orders)].itertuples():
        fixed = "on_fixed_batches" in floors and pd.notna(r.on_fixed_batches)
        nats = r.on_fixed_batches if fixed else r.nats
        ax.axhline(nats, **LADDER_STYLE, linestyle=LADDER_DASHES[r.order],
                   label=f"{r.floor} floor {nats:.3f}" + (" (fixed batches)" if fixed else ""))


def ladder_figure(ends: pd.DataFrame, floors: pd.DataFrame, title: str):
    """Where each model ends on the ladder of floors: one column per model (``ends``: model, best_val_loss, one row
    per seed; a dot per seed; a diverged seed is no result and is not drawn), the floors as horizontal lines."""
    ends = pooled(ends)
    fig, ax = plt.subplots(figsize=(9, 4.2))
    models = list(dict.fromkeys(ends.model)) if len(ends) else []
    for i, m in enumerate(models):
        y = ends[ends.model == m].best_val_loss
        ax.scatter([i] * len(y), y, color=COLORS[m.split(" ")[0]], marker="s" if "mixer" in m else "o", zorder=3)
    floor_ladder(ax, floors, orders=tuple(floors.order))
    ax.set_xticks(range(len(models)), [m.replace(" + ", "\n+ ") for m in models], fontsize=8)
    ax.set(ylabel="best validation loss (nats/token)", title=title, xlim=(-0.6, max(len(models), 1) - 0.4))
    ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


PROBE_MEASURES = {"position_cosine": "cosine between positions", "token_accuracy": "input token read back",
                  "effective_rank": "effective rank"}


def probe_figure(table: pd.DataFrame, title: str):
    """Each probe measure against depth, one colour per configuration (dotted: with the local mixer),
    initialisation (thin, faded) and trained (thick)."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, (col, label) in zip(axes, PROBE_MEASURES.items()):
        for model, t in table.groupby("model", sort=False):
            config = model.split(" ")[0]
            ls = ":" if "mixer" in model else "-"
            for state, kw in (("init", dict(lw=1, alpha=0.45)), ("trained", dict(lw=2.2, alpha=0.95))):
                s = t[t.state == state]
                ax.plot(s.depth, s[col], color=COLORS[config], ls=ls, marker="o", ms=3, **kw,
                        label=f"{model} ({state})" if col == "position_cosine" else None)
        if col == "token_accuracy" and len(table):
            ax.axhline(table.token_chance.iloc[0], **FLOOR_STYLE, label=None)
            ax.text(0, table.token_chance.iloc[0] + 0.02, "chance", fontsize=8)
        ax.set(xlabel="depth (0 = embedding, k = after block k)", title=label)
    if len(table):
        axes[2].set_yscale("log")
    fig.suptitle(title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False,
               fontsize=8)
    fig.tight_layout()
    return fig


def mixer_curves(hist: pd.DataFrame, floors: pd.DataFrame, title: str, seed: int = 1337, ax=None):
    """Validation loss of seed ``seed``: each configuration with attention (solid) and with the local
    mixer (dashed), against the ladder of floors."""
    ax = ax or plt.subplots(figsize=(9, 4.5))[1]
    for (model, mixer), h in hist[hist.seed == seed].groupby(["model", "mixer"], sort=False):
        h = h.dropna(subset=["val_loss"])
        ax.plot(h.step, h.val_loss, color=COLORS[model.split(" ")[0]], lw=1.6,
                ls="--" if mixer != "attention" else "-", label=model)
    floor_ladder(ax, floors)
    top = floors[floors.order == 1].nats.iloc[0] if len(floors) else None
    if top is not None:
        ax.set_ylim(1.5, top + 0.4)
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # off the data
    return ax


def escape_heatmap(grid: pd.DataFrame, depths, gains, title: str):
    """The escape map: AttnOnly over depth x FFN-output gain, FFNOnly's row and AttnOnly without GPT-2's
    1/√(2L) scaling (``scaled_init`` False, where the grid has it) below. Each cell writes the escape step
    ('never': stayed on the floor for the run's budget) over the best validation loss; the colour is the best
    loss, the graded outcome (white: not trained)."""
    scaled = grid.scaled_init.astype(bool) if "scaled_init" in grid else pd.Series(True, index=grid.index)
    rows = [("AttnOnly", d, True) for d in depths] + [("FFNOnly", 6, True)]
    rows += [(c, int(d), False) for c, d in grid.loc[~scaled, ["config", "depth"]].drop_duplicates().itertuples(
        index=False)]
    fig, ax = plt.subplots(figsize=(7.5, 4.6 + 0.4 * (len(rows) - len(depths) - 1)))
    values = np.full((len(rows), len(gains)), np.nan)
    labels = {}
    for i, (config, d, sc) in enumerate(rows):
        for j, g in enumerate(gains):
            cell = grid[(grid.config == config) & (grid.depth == d) & (grid.gain == g) & (scaled == sc)]
            if len(cell):
                e, values[i, j] = cell.escape_step.iloc[0], cell.best_val_loss.iloc[0]
                labels[i, j] = f"{int(e) if pd.notna(e) else 'never'}\n{values[i, j]:.2f}"
            elif sc:
                ax.text(j, i, "-", ha="center", va="center", fontsize=8, color="#999999")
    im = ax.imshow(values, cmap="viridis", aspect="auto")
    mid = np.nanmean([np.nanmin(values), np.nanmax(values)]) if labels else 0.0
    for (i, j), text in labels.items():  # light text on the dark (low-loss) cells
        ax.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if values[i, j] < mid else "black")
    fig.colorbar(im, ax=ax, label="best validation loss (lower: further below the floor)")
    ax.set_xticks(range(len(gains)), [f"{g:g}" for g in gains])
    ax.set_yticks(range(len(rows)), [f"{c} L={d}" + ("" if sc else ", no 1/√(2L)") for c, d, sc in rows])
    ax.set(xlabel="gain on the FFN output projection at initialisation", title=title)
    fig.tight_layout()
    return fig


def bundle_bars(table: pd.DataFrame, max_steps: int, title: str, control: str | None = None):
    """Escape step (left) and best validation loss (right) of nanoGPT AttnOnly with one factor of the
    ResidualGPT bundle switched on its own; untrained factors are listed without a bar; nanoGPT itself and
    the rounding-only ``control`` are grey, the control hatched."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    y = range(len(table))
    esc = table.escape_step.fillna(max_steps).where(table.status != "not trained")
    bars = a1.barh(y, esc, color=["#999999" if f in ("none", control) else "#2ca02c" for f in table.factor])
    for bar, f in zip(bars, table.factor):
        bar.set_hatch("//" if f == control else "")
    a1.set_yticks(list(y), list(table.factor))
    a1.invert_yaxis()
    a1.set(xlabel=f"escape step ({max_steps:,} = never)", title="escape")
    a2.barh(y, table.best_val_loss, color=["#999999" if f == "none" else "#1f77b4" for f in table.factor])
    a2.set(xlabel="best validation loss", title="best loss")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def twin_figure(twin: pd.DataFrame, factor: str, title: str):
    """nanoGPT and its twin with ``factor`` switched (``bundle.twin_gap``): the absolute difference of their
    training losses on a log scale (left), and both validation curves (right)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8))
    a1.semilogy(twin.step, twin.gap.clip(lower=1e-9), color="#d62728", marker="o", ms=3)
    a1.set(xlabel="step", ylabel="|difference of training losses|", title="how far apart the twins are")
    a2.plot(twin.step, twin.val_none, color="#999999", lw=1.8, marker="o", ms=3, label="nanoGPT")
    a2.plot(twin.step, twin.val_factor, color="#2ca02c", lw=1.8, ls="--", marker="o", ms=3, label=factor)
    a2.set(xlabel="step", ylabel="validation loss", title="validation loss")
    _legend(a2)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def probes_over_training_figure(table: pd.DataFrame, title: str):
    """The three probes after the last block against the training step, one colour per configuration."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, (col, label) in zip(axes, PROBE_MEASURES.items()):
        for config in _configs(table):
            t = table[table.config == config].sort_values("step")
            ax.plot(t.step, t[col], color=COLORS[config], lw=1.6, marker="o", ms=2.5, label=config)
        if col == "token_accuracy" and len(table):
            ax.axhline(table.token_chance.iloc[0], **FLOOR_STYLE)
        ax.set(xlabel="step", title=f"{label}, last block")
    if len(table):
        axes[2].set_yscale("log")
    _legend(axes[0])
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def phase2_figure(curves: pd.DataFrame, prefix, floor: float, phase3: float, title: str):
    """The author's Phase-2 AttnOnly and FFNOnly curves (constant learning rate; ``paper.author_phase2_curves``),
    one line per seed, beside Phase 3's AttnOnly mean after 3,000 steps (a tick at the right edge) and this book's
    paper-shape ResidualGPT AttnOnly prefixes on each schedule (``prefix.histories``), on one axis."""
    fig, ax = plt.subplots(figsize=(9, 4.2))
    styles = {1337: "-", 42: "--", 123: ":"}
    for (config, seed), g in curves[curves.config.isin(["AttnOnly", "FFNOnly"])].groupby(["config", "seed"]):
        ax.plot(g.step, g.val_loss, color=COLORS[config], ls=styles.get(seed, "-."), lw=1.2, alpha=0.8,
                label=f"author, Phase 2, {config} seed {seed}")
    h = prefix.histories
    h = h[(h.impl == "residualgpt") & (h.config == "AttnOnly")].dropna(subset=["val_loss"]) if len(h) else h
    for schedule, g in (h.groupby("schedule") if len(h) else []):
        name = "warm-up + cosine" if schedule == "cosine" else "constant"
        ax.plot(g.step, g.val_loss, color="black", marker="o", ms=3, lw=2, ls="-" if schedule == "cosine" else "--",
                label=f"this book, 10M paper shape, AttnOnly, {name}")
    ax.plot([3000], [phase3], marker="<", ms=10, color=COLORS["AttnOnly"], ls="none",
            label=f"paper, Phase 3, AttnOnly mean {phase3:.3f} (8 seeds)")
    ax.axhline(floor, **FLOOR_STYLE, label=f"unigram floor {floor:.3f}")
    ax.set(xlabel="step", ylabel="validation loss (nats/token)", title=title, ylim=(1.3, 4.3))
    ax.legend(frameon=False, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return fig


def escape_strip(table: pd.DataFrame, budget: int, title: str):
    """Escape step per seed per factor (``bundle.schedule_runs().table``), one column per (implementation,
    factor), one dot per seed; a run that never left the floor is drawn at "never", above the budget."""
    fig, ax = plt.subplots(figsize=(9, 3.8))
    keys = list(dict.fromkeys(zip(table.impl, table.factor))) if len(table) else []
    never = budget * 1.1
    for i, (impl, factor) in enumerate(keys):
        g = table[(table.impl == impl) & (table.factor == factor)]
        y = g.escape_step.astype(float).fillna(never)
        jitter = np.linspace(-0.12, 0.12, len(g)) if len(g) > 1 else [0.0]
        ax.scatter(i + np.asarray(jitter), y, s=30, color=COLORS["AttnOnly"] if impl == "residualgpt" else "black",
                   zorder=3)
    ax.axhline(budget, color="grey", lw=0.8, ls=":")
    ax.set_xticks(range(len(keys)), [f"{impl}\n{factor}" for impl, factor in keys], fontsize=8)
    ax.set_yticks([0, budget / 2, budget, never], ["0", f"{budget // 2:,}", f"{budget:,}", "never"])
    ax.set(ylabel="escape step (first evaluation 0.1 below the floor)", title=title, ylim=(0, never * 1.05))
    fig.tight_layout()
    return fig


def lead_figure(rows: pd.DataFrame, title: str):
    """The front page's one figure: for each scale, the paper's fraction of the No Residual to Full Residual gap
    recovered (its mean, with its seed range where it gives one) beside the book's (one dot per seed), AttnOnly
    and FFNOnly. ``rows``: ``scorecard.lead_rows`` (group, label, source, config, recovered, lo, hi)."""
    groups = list(dict.fromkeys(rows.group))
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.75 * len(dict.fromkeys(zip(rows.group, rows.label)))))
    y, ticks, labels = 0, [], []
    for g in groups:
        ax.text(0.5, y + 0.42, g, ha="center", va="bottom", fontsize=8, fontweight="bold",
                transform=ax.get_yaxis_transform())  # the scale this pair of rows is about
        for label in dict.fromkeys(rows[rows.group == g].label):
            r = rows[(rows.group == g) & (rows.label == label)]
            for k, config in enumerate(("AttnOnly", "FFNOnly")):
                c = r[r.config == config]
                dy = (k - 0.5) * 0.22
                if c.empty:
                    continue
                if c.source.iloc[0] == "paper":
                    ax.errorbar(c.recovered, [y + dy] * len(c), xerr=[c.recovered - c.lo.fillna(c.recovered),
                                                                     c.hi.fillna(c.recovered) - c.recovered],
                                fmt="D", color=COLORS[config], ms=7, capsize=3, label=f"{config}, paper")
                else:
                    ax.scatter(c.recovered, [y + dy] * len(c), marker="o", facecolors="none",
                               edgecolors=COLORS[config], s=40, label=f"{config}, this book (one per seed)")
            ticks.append(y)
            labels.append(label)
            y -= 1
        y -= 0.6  # a gap between scales, room for the next one's name
    for x in (0, 1):
        ax.axvline(x, color="black", linewidth=0.8, linestyle=":" if x == 0 else "--")
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylim(y + 0.4, 0.9)
    ax.set_xlabel("fraction of the No Residual → Full Residual gap recovered (0: collapsed; 1: as the full model)")
    handles, names = ax.get_legend_handles_labels()
    keep = dict(zip(names, handles))
    ax.legend(keep.values(), keep.keys(), frameon=False, fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.1), ncol=2)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
