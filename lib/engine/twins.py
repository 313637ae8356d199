"""A run that another directory already holds: the 124M search's probe runs, read as the runs of
the stand-in the search chose.

The search trained its probe "124M warm-up slope" at the 124M preset's own schedule (a 2,000-step
warm-up of a 20,000-step run) and stopped it with ``--until 1200``. Its stand-in, `cpu-bpe-ramp`
(``plans.SEARCH_STAND_INS``), is that probe as a preset: the same model, data, seed and rates,
with a budget of 1,200 steps. Only two fields differ, the scale's name and ``max_steps``, and
before step 1,200 neither changes anything the run computes (the rate is still climbing the
warm-up, which ``max_steps`` does not enter). So the probe's AttnOnly at seeds 1337 and 42 and its
Full Residual and FFNOnly at seed 1337, each stopped at step 1,200, are the sweep's runs of those
seeds, trained under the probe's directory. ``twin_of`` proves that field by field and rate by
rate for each experiment, not once for the preset; ``released_run`` reads such a run as the
sweep's where the sweep's own directory holds no finished run. A run the sweep trains itself
always comes first.

Released AttnOnly seed 42 exists both ways (the sweep trained its own before this module was
written), on two hosts (the probe on AVX-512, the sweep's on AVX2 dispatch): the two histories
agree within 1e-6 to step 100, within 0.03 to step 900, and end 0.055 apart at step 1,200 (5.827
against 5.772, 1.4 times that evaluation's standard error of 0.039), both off the floor from step
550. The sweep reads its own.
"""

from __future__ import annotations

import json

from . import plans
from .config import Experiment
from .runs import RUNS_DIR, RunDir, run_path
from .train import lr_at

# The fields a twin may differ in: the scale's name (the directory's first part) and the budget,
# which lr_at is checked over instead of assumed.
TWIN_FIELDS = ("scale", "train.max_steps")


def _flat(d: dict, pre: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{pre}{k}.") if isinstance(v, dict) else {f"{pre}{k}": v})
    return out


def twin_of(exp: Experiment) -> Experiment | None:
    """The probe experiment whose first ``exp.train.max_steps`` steps are ``exp``'s run, or None:
    a probe of ``exp``'s scale (``plans.SEARCH_STAND_INS``) that trained ``exp``'s configuration
    and seed, stopped at ``exp``'s budget, equal in every field but ``TWIN_FIELDS``, on the same
    rate at every step it trains."""
    for name, scale in plans.SEARCH_STAND_INS.items():
        probe = plans.search_probe(name)
        twin = plans.probe_runs(probe).get((exp.config_name, exp.seed))
        if scale != exp.scale or twin is None or probe.stop != exp.train.max_steps:
            continue
        a, b = _flat(json.loads(exp.to_json())), _flat(json.loads(twin.to_json()))
        if {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} - set(TWIN_FIELDS):
            continue
        if any(lr_at(exp.train, s) != lr_at(twin.train, s) for s in range(probe.stop + 1)):
            continue
        return twin
    return None


class TwinRun(RunDir):
    """The run of ``twin`` (its own directory, its own files) read as ``exp``'s: complete where it
    stopped at exactly ``exp``'s budget, its files checked against ``twin``, the experiment
    that wrote them. Its summary says so (``read_as``), so a page can name it."""

    def __init__(self, path, twin: Experiment, exp: Experiment):
        super().__init__(path)
        self.twin, self.exp = twin, exp
        self._own = RunDir(path)  # the files as written, for the checks

    @property
    def summary(self) -> dict | None:
        s = self._own.summary
        if not isinstance(s, dict) or s.get("steps") != self.exp.train.max_steps:
            return s
        # partial at the twin's 20,000-step budget, complete at the experiment's
        if s.get("status") in ("partial", "complete"):
            return {**s, "status": "complete", "read_as": str(run_path(self.exp, "."))}
        return s

    def problems(self, exp: Experiment) -> list[str]:
        if exp != self.exp:
            return [
                f"{self.path} is read as {run_path(self.exp, '.')}, not as {run_path(exp, '.')}"
            ]
        return self._own.problems(self.twin)


def released_run(exp: Experiment, runs_dir=RUNS_DIR) -> RunDir:
    """Where ``exp``'s released run is read: its own directory, unless that holds no finished run
    and a twin (``twin_of``) stopped at ``exp``'s budget does."""
    own = RunDir(run_path(exp, runs_dir))
    if own.status in ("complete", "diverged") or (twin := twin_of(exp)) is None:
        return own
    standing = TwinRun(run_path(twin, runs_dir), twin, exp)
    return standing if standing.status == "complete" and not standing.problems(exp) else own
