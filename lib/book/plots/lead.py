"""The front page's figure: each claim that has a number, the paper's value beside the
book's, at one scale of loss that every data set shares: the difference from the No Residual
loss of the same sweep (below 0: a model that learned more)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.transforms import blended_transform_factory

from .style import COLORS

# How each kind of evidence is drawn: the paper's mean a filled diamond, the paper-shape
# runs filled squares (they outrank a stand-in, so they are drawn first and solid), a
# stand-in's seeds open circles.
MARKERS = {
    "paper": dict(marker="D", s=46),
    "paper shape": dict(marker="s", s=46),
    "stand-in": dict(marker="o", s=40),
}
UNTESTABLE = "NOT TESTABLE HERE"
# Read at a 1,400 px window, where the book's text column shows the figure about 760 px wide: the
# smallest type at LEAD_FONT_PT points on a LEAD_WIDTH_IN-inch figure is drawn at LEAD_FONT_PT * 760
# / (LEAD_WIDTH_IN * 72) px, which tests/test_browser.py measures to be at least 11.
LEAD_WIDTH_IN = 9.5
LEAD_FONT_PT = 10


def lead_figure(rows: pd.DataFrame):
    """``rows``: ``scorecard.lead_rows``. One band per claim, titled (its ``title``) with its
    verdict; within it
    one line per kind of evidence, the paper first, then the paper's own shape, then the
    stand-in. A claim whose stand-in cannot test it (NOT TESTABLE HERE) has its stand-in drawn
    in grey on a hatched band with the reason written across it, so that its points at 0 cannot
    be read as a failed reproduction."""
    lines = list(dict.fromkeys(zip(rows.group, rows.label)))
    groups = list(dict.fromkeys(rows.group))
    fig, ax = plt.subplots(figsize=(LEAD_WIDTH_IN, 1.4 + 0.5 * len(lines) + 0.55 * len(groups)))
    y, ticks, labels = 0.0, [], []
    for g in groups:
        gr = rows[rows.group == g]
        head = gr.iloc[0]
        untestable = head.verdict.startswith(UNTESTABLE)
        # the claim and its verdict as the card gives it, above its lines from the left edge of the
        # labels' column, across the band: the figure's width, not the axis's
        ax.text(
            0.005,
            y + 0.1,
            f"{head.get('title', g)}: {head.verdict}",
            ha="left",
            va="bottom",
            fontsize=LEAD_FONT_PT + 0.5,
            fontweight="bold",
            transform=blended_transform_factory(fig.transFigure, ax.transData),
            # over the axis's spine, which would otherwise run through the heading's words
            bbox=dict(facecolor="white", edgecolor="none", pad=1.0),
            zorder=5,
        )
        y -= 0.7
        for label in dict.fromkeys(gr.label):
            r = gr[gr.label == label]
            source = r.source.iloc[0]
            grey = untestable and source == "stand-in"
            if grey:
                # the band says why, where the eye would otherwise read a result
                ax.axhspan(
                    y - 0.32,
                    y + 0.32,
                    facecolor="none",
                    hatch="///",
                    edgecolor="#bbbbbb",
                    linewidth=0,
                )
                reason = textwrap.fill(f"not testable here: {head.why.split('; ')[0]}", 48)
                ax.text(
                    0.5,
                    y,
                    reason,
                    transform=ax.get_yaxis_transform(),
                    ha="center",
                    va="center",
                    fontsize=LEAD_FONT_PT,
                    style="italic",
                    bbox=dict(facecolor="white", edgecolor="none", pad=1),
                )
            full = r.full.dropna()
            if len(full) and not grey:
                # Full Residual's loss in the same sweep: the other end of
                # the scale (the full model)
                ax.plot([full.iloc[0]] * 2, [y - 0.25, y + 0.25], color="black", linewidth=1.6)
            for k, config in enumerate(("AttnOnly", "FFNOnly")):
                c = r[r.config == config]
                if c.empty or grey:
                    continue
                dy = (0.5 - k) * 0.2  # AttnOnly just above the line, FFNOnly just below
                color = COLORS[config]
                if source == "paper" and c.lo.notna().any():  # Table 5's seed range
                    ax.plot([c.lo.iloc[0], c.hi.iloc[0]], [y + dy] * 2, color=color, linewidth=1.2)
                filled = source != "stand-in"
                ax.scatter(
                    c.above,
                    [y + dy] * len(c),
                    facecolors=color if filled else "none",
                    edgecolors=color,
                    linewidths=1.2,
                    zorder=3,
                    **MARKERS[source],
                )
            ticks.append(y)
            labels.append(label)
            y -= 0.75
        y -= 0.25  # a gap before the next claim
    ax.axvline(0, color="black", linewidth=0.8, linestyle=":")
    # two lines at most a label, so that the bands keep most of the width
    # at the type size the page needs
    ax.set_yticks(ticks, [textwrap.fill(label, 30) for label in labels], fontsize=LEAD_FONT_PT)
    source_of = dict(zip(rows.label, rows.source))
    for tick, label in zip(ax.get_yticklabels(), labels):
        if source_of[label] == "paper shape":
            tick.set_fontweight("bold")  # the only runs at the paper's own scale
    ax.set_ylim(y + 0.3, 0.45)  # the first claim's title just inside the top
    ax.set_xlabel(
        "best validation loss minus No Residual's\nin the same sweep (nats)", fontsize=LEAD_FONT_PT
    )
    ax.tick_params(axis="x", labelsize=LEAD_FONT_PT)
    handles = [
        plt.Line2D(
            [],
            [],
            linestyle="none",
            markerfacecolor=COLORS[c],
            markeredgecolor=COLORS[c],
            marker="o",
            label=c,
        )
        for c in ("AttnOnly", "FFNOnly")
    ]
    handles += [
        plt.Line2D(
            [],
            [],
            linestyle="none",
            marker=MARKERS[s]["marker"],
            color="black",
            markerfacecolor="black" if s != "stand-in" else "none",
            label={
                "paper": "the paper's mean",
                "paper shape": "ours, the paper's\n10M shape",
                "stand-in": "ours, a CPU stand-in\n(one per seed)",
            }[s],
        )
        for s in MARKERS
    ]
    handles += [
        plt.Line2D([], [], color="black", linewidth=1.6, label="Full Residual,\nsame sweep"),
        plt.Line2D(
            [],
            [],
            color="black",
            linewidth=0.8,
            linestyle=":",
            label="0: collapsed onto\nNo Residual",
        ),
    ]
    # beside the bands, top right: below them it sat under the axis
    # label, far from the points it names
    ax.legend(
        handles=handles,
        frameon=False,
        fontsize=LEAD_FONT_PT,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        handletextpad=0.3,
        labelspacing=0.9,
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig
