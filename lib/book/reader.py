"""The parameters of a chapter that only reads runs (book/mechanism.ipynb,
book/escape_and_bundle.ipynb, and the scorecard's book/what_holds.ipynb): those chapters train
nothing themselves, because their runs are hours of CPU time; ``python -m lib sweep --plan P``
trains them, and the chapter reads them from ``runs_dir``."""

from __future__ import annotations

from pathlib import Path

from ..engine.runs import RUNS_DIR
from .chapter import ParameterError, check_runs_dir_parameter, user_names
from .tables import show_tables_as_the_book_does

# chapter -> the plans whose runs it reads (lib.engine.plans.PLANS), cheapest answer first
READERS = {
    "mechanism": ("mixer_test", "probe_during"),
    "escape_and_bundle": ("escape_map", "escape_long", "bundle", "schedule_seeds"),
    # the front page's verdicts: every chapter's runs, the paper-shape prefixes, the mixer test, the
    # bundle and the rounding twins the joint-collapse knife-edge is read from
    "what_holds": ("release", "10m_prefix", "mixer_test", "bundle", "rounding_twins"),
}
# One parameter: a reading chapter trains nothing, so it has no seed, scale or device to choose.
READER_PARAMETERS = {"runs_dir": None}


def open_runs(name: str, namespace: dict, announce: bool = True) -> Path:
    """Check a reading chapter's parameters cell (``runs_dir``: None for the released ``runs/``, or
    the directory a sweep trained into) and return the directory its runs are read from. Unknown
    names and a directory that does not exist are refused with the valid choices."""
    if name not in READERS:
        raise ParameterError(f"unknown chapter {name!r}; valid: {', '.join(READERS)}")
    given = user_names(namespace)
    # A misspelt name (run_dir) is refused, not ignored: papermill's -p would
    # otherwise leave the chapter on runs/.
    if unknown := sorted(set(given) - set(READER_PARAMETERS)):
        raise ParameterError(
            f"unknown parameter(s) {', '.join(unknown)}; valid: {', '.join(READER_PARAMETERS)}"
        )
    check_runs_dir_parameter(given.get("runs_dir"))
    runs_dir = Path(given.get("runs_dir") or RUNS_DIR)  # None (or "") is the release
    # A missing directory would read as one where nothing is trained yet: every run
    # listed as a command, no error.
    if not runs_dir.is_dir():
        raise ParameterError(
            f"runs_dir {str(runs_dir)!r} is not a directory; valid: None (the released runs/) or "
            f"a directory `python -m lib sweep --plan P --runs-dir DIR` trained into"
        )
    show_tables_as_the_book_does()  # a DataFrame shows here as in the chapters that train
    if announce:
        # compared resolved: runs/ reached by a relative path or a link is still the release
        where = (
            "runs/ (the released runs)"
            if runs_dir.resolve() == RUNS_DIR.resolve()
            else str(runs_dir)
        )
        trains = "; ".join(f"python -m lib sweep --plan {p}" for p in READERS[name])
        print(
            f"Reading this chapter's runs from {where}. It trains nothing itself: {trains} (each "
            "with --runs-dir DIR to train elsewhere). A run not trained yet is listed with its "
            "command."
        )
    return runs_dir


__all__ = ["READERS", "open_runs"]
