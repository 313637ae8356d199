"""The book layer: what a chapter notebook calls. ``chapter`` (a chapter's parameters, banner, retraining and
the runs it reads), ``tables`` (the tables it shows), ``verdict`` (its verdict block). The names a notebook
imports are re-exported here, so that a chapter reads ``from lib.book import Chapter, Verdict``."""
from .chapter import CHAPTERS, PARAMETERS, Chapter, ParameterError, cross_scale_table
from .tables import beside_paper, export_run_data, presets_table, release_report, seed_table, variant_label
from .verdict import Verdict

__all__ = ["CHAPTERS", "PARAMETERS", "Chapter", "ParameterError", "Verdict", "beside_paper", "cross_scale_table",
           "export_run_data", "presets_table", "release_report", "seed_table", "variant_label"]
