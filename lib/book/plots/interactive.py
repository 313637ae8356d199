"""Offline interactive plotly figures (the book loads its own ``plotly.min.js`` once):
seed and gain explorers, the best-validation strip, and the notebook seed widget.
Every plot has a stable ``div_id``."""

from __future__ import annotations

import json

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...engine.config import CONFIGS
from .curves import val_curves
from .style import COLORS, _configs, floor_lines, y_top


class PlotlyHTML:
    """Displays as offline HTML in the book and as a live plotly figure in Jupyter."""

    def __init__(self, fig: go.Figure, div_id: str):
        self.fig, self.div_id = fig, div_id

    def html(self) -> str:
        # No plotly.js inside: the book loads its local copy once a page (_config.yml
        # html_js_files), not once a plot, and nothing comes from a CDN. The div_id is stable:
        # tests/test_built_html.py finds each plot by it.
        return self.fig.to_html(
            include_plotlyjs=False,
            full_html=False,
            include_mathjax=False,
            # no plotly logo in the mode bar
            div_id=self.div_id,
            config={"displaylogo": False},
        )

    def _repr_mimebundle_(self, include=None, exclude=None):
        # HTML for the built book (_config.yml drops the JSON there); plotly's JSON for a live
        # front-end to draw. to_json, not to_dict: it turns numpy arrays into plain JSON lists.
        return {
            "text/html": self.html(),
            "application/vnd.plotly.v1+json": json.loads(self.fig.to_json()),
        }


def group_explorer(
    df: pd.DataFrame,
    select: str,
    color: str,
    div_id: str,
    title: str,
    label: str = "label",
    floor: float | dict | None = None,
) -> PlotlyHTML:
    """Validation curves, one trace per ``label``; a dropdown shows one
    value of ``select`` (or all).

    ``color`` names the column that picks each trace's colour
    (configurations get their fixed colours).
    """
    fig = go.Figure()
    keys = []
    # the colours of values that are not configurations (gains), spread over a sequential map
    palette = plt.get_cmap("viridis")
    # key=str: numbers and strings sort together
    colour_values = sorted(df[color].unique(), key=str)
    # sort=False: traces in the caller's order (seed_explorer sorts them); a
    # diverged row has no point to draw
    for lab, h in df.dropna(subset=["val_loss"]).groupby(label, sort=False):
        h = h.sort_values("step")
        cval = h[color].iloc[0]
        # configurations keep their fixed colours
        col = COLORS.get(cval) or matplotlib.colors.to_hex(
            palette(colour_values.index(cval) / max(1, len(colour_values) - 1))
        )
        fig.add_trace(
            go.Scatter(
                x=h.step,
                y=h.val_loss,
                mode="lines+markers",
                marker=dict(size=4),
                line=dict(color=col, width=1.5),
                name=str(lab),
                # <extra></extra> drops plotly's second hover box: the label already names the trace
                hovertemplate=f"{lab}<br>step %{{x}}<br>val loss %{{y:.4f}}<extra></extra>",
            )
        )
        # one key per trace, in trace order: the menu's masks follow it
        keys.append(h[select].iloc[0])
    if floor is not None:
        for k, (name, value) in enumerate(floor_lines(floor)):
            # the first floor black and dotted, the others grey and dashed, as
            # the static figures draw them
            fig.add_hline(
                y=value,
                line=dict(
                    color="black" if k == 0 else "grey", dash="dot" if k == 0 else "dash", width=1
                ),
            )
        # Named under the plot, not on their lines: the runs that stay on a floor run along it, and
        # a label there covers them. (Not in the legend either: with a trace per seed it scrolls,
        # and the floors would be last.)
        fig.add_annotation(
            text="; ".join(
                f"{'dotted' if k == 0 else 'dashed'}: {name} {value:.4f}"
                for k, (name, value) in enumerate(floor_lines(floor))
            ),
            xref="paper",
            yref="paper",
            x=0,
            y=-0.2,
            xanchor="left",
            yanchor="top",
            showarrow=False,
            font=dict(size=11),
        )
        top = y_top(df)
        if top is not None:  # a late spike must not squash the curves; zooming out shows it
            low = min(float(df.val_loss.dropna().min()), *(v for _, v in floor_lines(floor)))
            fig.update_yaxes(range=[low - 0.15, top])
    # seeds and gains in numeric order
    choices = sorted(set(keys), key=lambda v: (isinstance(v, str), v))
    # Floors are shapes (add_hline), not traces: every choice of the menu keeps them.
    buttons = [dict(label="all", method="update", args=[{"visible": [True] * len(keys)}])]
    buttons += [
        dict(
            label=f"{select} {v}", method="update", args=[{"visible": [bool(k == v) for k in keys]}]
        )
        for v in choices
    ]
    fig.update_layout(
        title=title,
        xaxis_title="step",
        yaxis_title="validation loss",
        height=480,
        # room above the plot for the menu, and below it for the floors' names
        template="plotly_white",
        margin=dict(t=90, b=90),
        updatemenus=[
            dict(
                buttons=buttons,
                direction="down",
                x=0.0,
                xanchor="left",
                y=1.13,
                yanchor="top",
                showactive=True,
            )
        ],
    )
    return PlotlyHTML(fig, div_id)


def seed_explorer(hist: pd.DataFrame, floor: float | dict, div_id: str, title: str) -> PlotlyHTML:
    """Validation curves, one trace per (configuration, seed); the dropdown picks a seed."""
    # configurations in §3.4's order, then seeds, then steps: traces and legend read in that order
    order = {c: i for i, c in enumerate(CONFIGS)}
    h = hist.assign(_o=hist.config.map(order)).sort_values(["_o", "seed", "step"])
    # histories without a source or status column are released and not diverged
    retrained = h.get("source", pd.Series("released", index=h.index)).eq("retrained")
    diverged = h.get("status", pd.Series("complete", index=h.index)).eq("diverged")
    # the label says which seed, and whether it is a retrain or diverged: the
    # legend and the hover both show it
    h = h.assign(
        label=h.config
        + " seed "
        + h.seed.astype(str)
        + retrained.map({True: " (retrained)", False: ""})
        + diverged.map({True: " (diverged)", False: ""})
    )
    return group_explorer(h, select="seed", color="config", div_id=div_id, title=title, floor=floor)


def gain_explorer(curves: pd.DataFrame, div_id: str, title: str) -> PlotlyHTML:
    """``gain_curves`` interactively: one trace per (mode, gain, source); the menu picks a mode."""
    suffix = curves.get("source", pd.Series("released", index=curves.index)).map(
        {"released": "", "retrained": " (retrained)"}
    )
    # ":g": 0.25 and 4, not 0.250000
    labelled = curves.assign(label=curves["mode"] + " g=" + curves.gain.map("{:g}".format) + suffix)
    # colour by gain; the menu picks runtime or weight
    return group_explorer(labelled, select="mode", color="gain", div_id=div_id, title=title)


def best_val_strip(
    summaries: pd.DataFrame,
    paper: pd.DataFrame | None,
    floor: float | dict,
    div_id: str,
    title: str,
    paper_label: str = "paper",
) -> PlotlyHTML:
    """Best validation loss of every seed (hover: seed, escape step) beside the paper's mean ± std.

    Two panels on one y-axis, ours (with our floors) and the paper's: the paper is at
    another scale (on other data at 124M), so the panels are apart, but the same loss reads
    at the same height in both, and a stand-in that sits on the floor where the paper's
    model left it shows as the gap it is."""
    from plotly.subplots import make_subplots

    has_paper = paper is not None and len(paper) > 0
    # one y-axis for both panels: the same loss at the same height (see the docstring)
    fig = make_subplots(
        rows=1,
        cols=2 if has_paper else 1,
        horizontal_spacing=0.12,
        shared_yaxes=True,
        subplot_titles=["ours", paper_label] if has_paper else ["ours"],
    )
    # with no runs, all four: the axis keeps its categories
    configs = _configs(summaries) or list(CONFIGS)
    for i, config in enumerate(configs):
        s = summaries[summaries.config == config].sort_values("seed")
        # seeds side by side
        jitter = np.linspace(-0.18, 0.18, len(s)) if len(s) > 1 else np.zeros(len(s))
        fig.add_trace(
            go.Scatter(
                x=i + jitter,
                y=s.best_val_loss,
                mode="markers",
                name=f"ours: {config}",
                marker=dict(color=COLORS[config], size=9, line=dict(width=1, color="white")),
                # -1 stands for "never left the floor", as the hover says: a NaN would
                # reach plotly's JSON as null
                customdata=list(zip(s.seed, s.escape_step.fillna(-1))),
                hovertemplate=(
                    "seed %{customdata[0]}<br>best val %{y:.4f}<br>"
                    "escape step %{customdata[1]} (-1: none)<extra>ours</extra>"
                ),
            ),
            row=1,
            col=1,
        )
    # Our floors on our panel only: the paper's panel is another scale's data. Named in the legend,
    # not beside the line: the configurations that stay on the floor put their markers right where
    # a label on the line would go.
    for k, (name, value) in enumerate(floor_lines(floor)):
        fig.add_hline(
            y=value,
            line=dict(
                color="black" if k == 0 else "grey", dash="dot" if k == 0 else "dash", width=1
            ),
            row=1,
            col=1,
            showlegend=True,
            name=f"our {name} {value:.4f}",
        )
    if has_paper:
        fig.add_trace(
            go.Scatter(
                # one mean per configuration
                x=paper.config,
                y=paper.value,
                mode="markers",
                name=paper_label,
                marker=dict(symbol="diamond-open", size=12, color="black"),
                # the paper's std; a one-seed anchor has none and draws no bar
                error_y=dict(type="data", array=paper["std"].fillna(0), visible=True),
                # the hover shows the paper's own digits
                customdata=paper.reported,
                hovertemplate="%{x}<br>paper %{customdata}<extra></extra>",
            ),
            row=1,
            col=2,
        )
        # the paper's panel in our panel's order
        fig.update_xaxes(categoryorder="array", categoryarray=configs, row=1, col=2)
    # numeric positions on ours, for the jitter, labelled with the configuration names
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(configs))),
        ticktext=configs,
        range=[-0.5, len(configs) - 0.5],
        row=1,
        col=1,
    )
    fig.update_yaxes(title_text="best validation loss", row=1, col=1)
    fig.update_layout(title=title, template="plotly_white", height=440)
    return PlotlyHTML(fig, div_id)


def seed_widget(hist: pd.DataFrame, floor: float, title: str = "validation loss"):
    """Live-kernel control: a dropdown of seeds redrawing ``val_curves`` for the chosen one.

    The built HTML uses the plotly menus instead (no kernel there); this is for Jupyter.
    """
    # only a live kernel needs ipywidgets: the built page shows the plotly menu instead
    import ipywidgets as widgets

    # all first, then the seeds in numeric order
    seeds = ["all", *sorted(int(s) for s in hist.seed.unique())]
    out = widgets.Output()
    pick = widgets.Dropdown(options=seeds, value="all", description="seed")

    def draw(choice):
        out.clear_output(wait=True)  # the old figure stays until the new one is drawn: no flicker
        with out:
            h = hist if choice == "all" else hist[hist.seed == choice]
            val_curves(h, floor, f"{title}, seed {choice}")
            plt.show()  # inside the Output, so the figure replaces the last one in the widget

    # only a change of the chosen value redraws
    pick.observe(lambda change: draw(change["new"]), names="value")
    draw("all")  # the first drawing, before any choice
    return widgets.VBox([pick, out])
