"""Figures for the book: static matplotlib figures and offline interactive plotly plots.

Interactive plots are emitted as HTML without plotly.js (the book loads the
package's own ``plotly.min.js`` once, locally) plus plotly's JSON for live
Jupyter front-ends; every plot has a stable ``div_id``.
"""

from __future__ import annotations

import pandas as pd

from ...engine.config import CONFIGS

# One fixed colour per configuration (matplotlib's tab10 blue, green, red, grey), read by
# the static figures and the plotly explorers alike, so a colour names the same
# configuration on every page of the book.
COLORS = {
    "FullResidual": "#1f77b4",
    "AttnOnly": "#2ca02c",
    "FFNOnly": "#d62728",
    "NoResidual": "#7f7f7f",
}


def _sharp_inline_figures() -> None:
    """In a notebook (and so in the built book): PNGs at twice the resolution, shown at their usual
    size, so that the figures stay sharp on a high-density screen."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return  # outside a Jupyter install there is nothing to configure
    # plain Python (the CLI, pytest): matplotlib's own formats are left alone
    if get_ipython() is not None:
        set_matplotlib_formats("retina")


_sharp_inline_figures()  # on import: every figure module imports this one
# The floor the chapter's verdicts use is drawn black and dotted; any other floor beside it
# (the unigram floor next to the empirical NoResidual one on BPE data) is grey and dashed, so
# the eye finds the one that decides.
FLOOR_STYLE = dict(color="black", linestyle=":", linewidth=1.2)
OTHER_FLOOR_STYLE = dict(color="grey", linestyle="--", linewidth=0.9)


def floor_lines(floor) -> list[tuple[str, float]]:
    """The floor lines a figure draws: a number is the unigram floor; a dict
    (``Chapter.floor_lines``) names each line, the first the floor the chapter's verdicts use (on
    BPE data the NoResidual run, not the unigram floor, so that the two are never confused)."""
    return list(floor.items()) if isinstance(floor, dict) else [("unigram floor", float(floor))]


def _floor(floor) -> float:
    return floor_lines(floor)[0][1]  # the first line is the floor the verdicts use


def _draw_floors(ax, floor) -> None:
    for k, (name, value) in enumerate(floor_lines(floor)):
        # the value goes in the label, to be read against the numbers in the tables
        ax.axhline(
            value, **(FLOOR_STYLE if k == 0 else OTHER_FLOOR_STYLE), label=f"{name} {value:.4f}"
        )


def _legend(ax) -> None:
    if ax.get_legend_handles_labels()[0]:  # an empty chapter (no runs yet) draws no legend
        ax.legend(frameon=False, fontsize=8)


def _configs(df: pd.DataFrame) -> list[str]:
    # CONFIGS' order, not the order the runs were read in: every legend lists them alike
    return [c for c in CONFIGS if c in set(df.config)]


def y_top(hist: pd.DataFrame) -> float | None:
    """The top of a loss axis: just above the untrained models' step-0 loss, so that a spike later
    in a run cannot squash the curves that matter (``off_the_top`` names what is cut)."""
    h = hist.dropna(subset=["val_loss"])
    # The first evaluation (step 0) of every run, its highest, plus 0.25 of headroom; None for an
    # empty chapter, which leaves matplotlib's own limits.
    return float(h[h.step == h.step.min()].val_loss.max()) + 0.25 if len(h) else None


def off_the_top(hist: pd.DataFrame, top: float) -> list[str]:
    """The evaluations above ``top``: 'FFNOnly seed 0: 9.62 at step 300'."""
    h = hist.dropna(subset=["val_loss"])
    h = h[h.val_loss > top]
    # sorted: the note under a figure reads the same at every build
    return [
        f"{r.config} seed {r.seed}: {r.val_loss:.2f} at step {int(r.step)}"
        for r in h.sort_values(["config", "seed", "step"]).itertuples()
    ]
