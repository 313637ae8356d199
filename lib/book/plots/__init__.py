"""Figures for the book: static matplotlib figures and offline interactive plotly plots, drawn from
the tables ``lib.engine.results`` and the chapters hand them (figures import results, never
chapters). ``style`` (colours, floor lines, axis limits), ``curves``, ``interactive``,
``mechanism``; a notebook calls them as ``plots.<name>``."""

from .curves import (
    diagnostics_figure,
    gain_figure,
    gain_seeds_figure,
    longer_budget_curves,
    nanogpt_schedule_figure,
    noise_figure,
    phase2_figure,
    prefix_curves,
    seed_panels,
    val_curves,
)
from .interactive import (
    PlotlyHTML,
    best_val_strip,
    gain_explorer,
    group_explorer,
    seed_explorer,
    seed_widget,
)
from .lead import lead_figure
from .mechanism import (
    bundle_bars,
    escape_heatmap,
    escape_strip,
    floor_ladder,
    ladder_figure,
    mixer_curves,
    probe_figure,
    probes_over_training_figure,
    twin_figure,
)
from .style import COLORS, floor_lines, off_the_top, y_top

__all__ = [
    "COLORS",
    "PlotlyHTML",
    "best_val_strip",
    "bundle_bars",
    "diagnostics_figure",
    "escape_heatmap",
    "escape_strip",
    "floor_ladder",
    "floor_lines",
    "gain_explorer",
    "gain_figure",
    "gain_seeds_figure",
    "group_explorer",
    "ladder_figure",
    "lead_figure",
    "longer_budget_curves",
    "mixer_curves",
    "nanogpt_schedule_figure",
    "noise_figure",
    "off_the_top",
    "phase2_figure",
    "prefix_curves",
    "probe_figure",
    "probes_over_training_figure",
    "seed_explorer",
    "seed_panels",
    "seed_widget",
    "twin_figure",
    "val_curves",
    "y_top",
]
