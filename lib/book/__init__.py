"""The book layer: what a chapter notebook calls. ``chapter`` (a chapter's parameters, banner and
retraining; the runs it reads are its ``lib.claims.runset.RunSet``), ``reader`` (the parameters of
the chapters that only read runs), ``tables`` (the tables it shows), ``verdict`` (its verdict
block), ``costs`` (what the released runs cost, for the reproducibility chapter and the compute
statement), ``limitations`` (the stand-ins' departures from the paper's presets and what the paper's
runs would cost on this CPU, for the limitations page), ``plots`` and ``front_page``. The names a
notebook imports are re-exported here, so that a chapter reads
``from lib.book import Chapter, Verdict``."""

from ..claims.runset import CHAPTERS
from .chapter import PARAMETERS, Chapter, ParameterError
from .reader import READERS, open_runs
from .tables import (
    beside_paper,
    budget_table,
    cross_scale_table,
    export_run_data,
    frame_html,
    prefix_view,
    presets_table,
    quantities,
    release_report,
    seed_table,
    show_tables_as_the_book_does,
    values_view,
    variant_label,
)
from .verdict import Verdict

__all__ = [
    "CHAPTERS",
    "PARAMETERS",
    "READERS",
    "Chapter",
    "ParameterError",
    "Verdict",
    "beside_paper",
    "budget_table",
    "cross_scale_table",
    "export_run_data",
    "frame_html",
    "open_runs",
    "prefix_view",
    "presets_table",
    "quantities",
    "release_report",
    "seed_table",
    "show_tables_as_the_book_does",
    "values_view",
    "variant_label",
]
