"""A run another directory already holds: the 124M search's probe runs, read as runs of the stand-in
the search chose.

The search trained its probe "124M warm-up slope" at the 124M preset's own schedule (a 2,000-step
warm-up of a 20,000-step run) and stopped it with ``--until 1200``. Its stand-in, `cpu-bpe-ramp`
(``plans.SEARCH_STAND_INS``), is that probe as a preset: the same model, data, seed and rates,
with a budget of 1,200 steps. Only two fields differ, the scale's name and ``max_steps``, and
before step 1,200 neither changes anything the run computes: the rate is still climbing the
warm-up, which ``max_steps`` does not enter; the batches, the dropout masks and the evaluation
batches come from the seed and the shapes; the evaluations fall on the same steps. So the
probe's AttnOnly at seeds 1337 and 42 and its Full Residual and FFNOnly at seed 1337, each
stopped at step 1,200, are the same experiments as the sweep's runs of those seeds, trained
earlier under the probe's directory. ``probe_run_of`` checks that field by field and rate by rate
for each experiment; ``released_run`` reads such a run as the sweep's only where the sweep's own
directory does not exist. A run of the sweep's own, finished or not, always comes first.

The same experiment on another host is not the same numbers. AttnOnly seed 42 was trained both
ways (the sweep's own before this module was written): the probe's on an AVX-512 host, the
sweep's on an AVX2 one. The two histories agree within 1e-6 to step 100 and within 0.03 to step
900, then end 0.055 apart at step 1,200 (5.827 against 5.772; best 5.820 against 5.772). That is
about the whole spread of the sweep's other AttnOnly seeds that stay off the floor (5.715-5.773):
host arithmetic moves an AttnOnly run about as much as another seed does. The sweep reads its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import plans
from .config import Experiment
from .runs import RUNS_DIR, RunDir, run_path
from .train import lr_at

# The fields a probe's run may differ in: the scale's name (the directory's first part) and the
# budget, over which lr_at is checked instead of assumed.
FREE_FIELDS = ("scale", "train.max_steps")


def _flat(d: dict, pre: str = "") -> dict:
    out = {}
    for k, v in d.items():
        out.update(_flat(v, f"{pre}{k}.") if isinstance(v, dict) else {f"{pre}{k}": v})
    return out


def probe_run_of(exp: Experiment) -> Experiment | None:
    """The probe experiment whose first ``exp.train.max_steps`` steps are ``exp``'s run, or None:
    a probe of ``exp``'s scale (``plans.SEARCH_STAND_INS``) that trained ``exp``'s configuration
    and seed, stopped at ``exp``'s budget, equal in every field but ``FREE_FIELDS``, on the same
    rate at every step it trains."""
    for name, scale in plans.SEARCH_STAND_INS.items():
        if scale != exp.scale:  # every other scale, at once
            continue
        probe = plans.search_probe(name)
        other = plans.probe_runs(probe).get((exp.config_name, exp.seed))
        if other is None or probe.stop != exp.train.max_steps:
            continue
        a, b = _flat(json.loads(exp.to_json())), _flat(json.loads(other.to_json()))
        if {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)} - set(FREE_FIELDS):
            continue
        if any(lr_at(exp.train, s) != lr_at(other.train, s) for s in range(probe.stop + 1)):
            continue
        return other
    return None


class ProbeRun(RunDir):
    """The run of ``probe`` (its own directory, its own files) read as ``exp``'s: complete where it
    stopped at exactly ``exp``'s budget, its files checked against ``probe``, the experiment
    that wrote them. ``path`` is the probe's directory, so every table row that shows a run's path
    shows where this one was read from."""

    def __init__(self, runs_dir, probe: Experiment, exp: Experiment):
        super().__init__(run_path(probe, runs_dir))
        self.probe, self.exp, self.runs_dir = probe, exp, Path(runs_dir)
        self._own = RunDir(self.path)  # the files as written, for the checks

    def read_line(self, relative: bool = False) -> str:
        """``<the experiment's own path>: read from <the probe's>``, the one form in which every
        listing (the sweep's log, ``--dry-run``, ``report``, the chapter) names such a run; with
        ``relative``, both paths from the runs directory."""
        own, read = run_path(self.exp, self.runs_dir), self.path
        if relative:
            own, read = own.relative_to(self.runs_dir), read.relative_to(self.runs_dir)
        return f"{own}: read from {read}"

    @property
    def summary(self) -> dict | None:
        s = self._own.summary
        if not isinstance(s, dict) or s.get("steps") != self.exp.train.max_steps:
            return s
        # partial at the probe's 20,000-step budget, complete at the experiment's
        return {**s, "status": "complete"} if s.get("status") in ("partial", "complete") else s

    def problems(self, exp: Experiment) -> list[str]:
        if exp != self.exp:
            want, got = run_path(self.exp, "."), run_path(exp, ".")
            return [f"{self.path} is read as {want}, not as {got}"]
        return self._own.problems(self.probe)


def released_run(exp: Experiment, runs_dir=RUNS_DIR) -> RunDir:
    """Where ``exp``'s run is read: its own directory, unless there is none (a run being trained,
    stopped or damaged there is its own, for the trainer to resume or refuse, never shadowed) and
    a probe's run (``probe_run_of``) stopped at ``exp``'s budget, its files sound, stands for it."""
    own = RunDir(run_path(exp, runs_dir))
    if own.path.exists() or (probe := probe_run_of(exp)) is None:
        return own
    read = ProbeRun(runs_dir, probe, exp)
    return read if read.status == "complete" and not read.problems(exp) else own
