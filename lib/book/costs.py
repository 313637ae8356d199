"""What the released runs cost on the machines that trained them, read from each run's own
``summary.json`` (``wall_s``, ``tokens_per_s``) and ``env.json`` (the device): one table
per chapter and configuration, one for the two chapters that read the mechanism's plans
(both shown in the reproducibility chapter, so that the chapters about a claim stay about
it), and the compute statement of the limitations page: every released run once, summed
per page of the book and in all."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from ..claims import bundle, escape_map, mechanism, paper_shape, schedule_seeds
from ..claims.runset import CHAPTERS, PLAN_FOR, RunSet
from ..engine import plans
from ..engine.config import Experiment
from ..engine.host import ROOT
from ..engine.results import FINISHED, as_released, cost_table, summaries_of
from ..engine.runs import RUNS_DIR, RunDir, run_path


def chapter_costs() -> pd.DataFrame:
    """``results.cost_table`` per chapter (its released runs at the scale the book shows) and
    configuration, then the paper-shape 10M prefixes, one part per run of their plan."""
    parts = {}
    for name in CHAPTERS:
        # The released runs at the stand-in scale the built book shows.
        ch = RunSet.of(name)
        s, planned = ch.summaries(), Counter(e.config_name for e in ch.experiments())
        for config in planned:  # the plan's order
            parts[f"{name} ({ch.scale}): {config}"] = (s[s.config == config], planned[config])
    # The paper-shape prefixes belong to no chapter's plan, and each is trained to its own step: a
    # part per run, read from its own directory (the chapters show a whole run in its prefix's
    # place; its cost is the whole runs' part).
    prefix = summaries_of(as_released(plans.paper_10m_prefix()), ("complete", "partial"))
    for e in plans.paper_10m_prefix():
        variant = paper_shape.schedule_variant(e.impl, e.train.schedule)
        # the other's schedule, named
        label = f"paper-shape prefix (10M): {e.impl} {e.config_name}" + (
            "" if variant == "recipe" else f" ({variant})"
        )
        mine = prefix[
            (prefix.impl == e.impl)
            & (prefix.config == e.config_name)
            & (prefix.schedule == e.train.schedule)
        ]
        parts[label] = (mine, 1)
    # The whole runs are trained in segments, so a partial one is unfinished, not a prefix: only the
    # complete ones count as trained, and the estimate for the rest is a whole run's median.
    whole = plans.paper_10m_whole()
    parts[
        "paper shape, whole runs (10M): " + ", ".join(f"{e.impl} {e.config_name}" for e in whole)
    ] = (summaries_of(as_released(whole), ("complete",)), len(whole))
    return cost_table(parts)


def mechanism_costs(runs_dir=RUNS_DIR) -> pd.DataFrame:
    """``results.cost_table`` of every part of book/mechanism.ipynb and
    book/escape_and_bundle.ipynb: the runs trained of those planned, their cost,
    and an estimate for the rest."""
    # The chapters' own readers, so this table counts exactly the runs those pages show (each
    # prints its left-out runs too).
    mixer, during = mechanism.mixer_runs(runs_dir), mechanism.probe_during_runs(runs_dir)
    escape, long = escape_map.escape_runs(runs_dir), escape_map.escape_long_runs(runs_dir)
    factors, schedule = bundle.bundle_runs(runs_dir), schedule_seeds.schedule_runs(runs_dir)
    # mixer_runs sets the attention runs beside the mixer ones; those are the 10M
    # chapter's cost, not this part's.
    return cost_table(
        {
            "mechanism: local-mixer test (§3)": (
                mixer.table[mixer.table.mixer == "local"],
                mixer.planned,
            ),
            "mechanism: probes during training (§2)": (during.table, during.planned),
            "escape map (§1)": (escape.table, escape.planned),
            "escape map, boundary cells at the full budget (§1)": (long.table, long.planned),
            "bundle, one factor at a time (§2)": (factors.table, factors.planned),
            "bundle: the schedule, clipping and biases with seeds (§2)": (
                schedule.table,
                schedule.planned,
            ),
        }
    )


# --- the compute statement ------------------------------------------------------------------------
# the runs at the paper's exact 10M shape, which two chapters read: a row of their own
PAPER_SHAPE = "paper_shape"


def page_runs() -> list[tuple[str, list[Experiment]]]:
    """Each page of the book that shows runs, in reading order (``PAPER_SHAPE`` last), with the
    experiments it shows. A run two pages show is counted once, on the first (the fixed-batch
    chapter's AttnOnly is the gain chapter's g = 1 run, for one)."""
    author = plans.author_values()
    return [
        (
            "joint_collapse",
            [
                *PLAN_FOR["joint_collapse"]("cpu"),
                *[e for e in author if e.impl == "nanogpt"],
                *plans.rounding_twins(),
            ],
        ),
        (
            "gain_confound",
            [*PLAN_FOR["gain_confound"]("cpu"), *plans.gain_twins(), *plans.gain_seeds()],
        ),
        ("fixed_val_batches", PLAN_FOR["fixed_val_batches"]("cpu")),
        (
            "10m_asymmetry",
            [*PLAN_FOR["10m_asymmetry"]("cpu"), *[e for e in author if e.impl == "residualgpt"]],
        ),
        (
            "124m_sweep",
            [
                *PLAN_FOR["124m_sweep"](plans.STAND_IN_124M),
                *plans.search_124m(),
                *PLAN_FOR["124m_sweep"]("cpu-bpe"),
                *plans.longer_budget_124m(),
            ],
        ),
        ("mechanism", [*plans.mixer_test(), *plans.probe_during()]),
        (
            "escape_and_bundle",
            [
                *plans.escape_map(),
                *plans.escape_long_budget(),
                *plans.escape_warmup(),
                *plans.bundle(),
                *plans.schedule_seeds(),
            ],
        ),
        (
            PAPER_SHAPE,
            [
                *plans.paper_10m_prefix(),
                *plans.paper_10m_whole(),
                *plans.paper_10m_schedule_seeds(),
                *plans.paper_10m_nanogpt_schedule_seeds(),
            ],
        ),
    ]


def page_title(name: str, book=ROOT / "book") -> str:
    """A page's title as the reader sees it: the first level-1 heading of ``book/<name>``;
    ``PAPER_SHAPE`` is named after the two chapters that show those runs."""
    if name == PAPER_SHAPE:
        return (
            "At the paper's own 10M shape (shown in "
            f"\u201c{page_title('joint_collapse', book)}\u201d and "
            f"\u201c{page_title('10m_asymmetry', book)}\u201d)"
        )
    path = book / f"{name}.ipynb"
    if path.exists():
        cells = json.loads(path.read_text())["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = (book / f"{name}.md").read_text()
    return re.search(r"^# (.+)$", text, re.M).group(1).strip()


def _host(segments: list[dict]) -> str:
    """What trained a run, from its env.json's segments: the processors or GPUs they name, or, where
    none does (runs started before env.json recorded the CPU's model, whose ``device_name`` is
    the bare device), the device."""
    named = {
        s["device_name"] for s in segments if s.get("device_name") not in (None, s.get("device"))
    }
    return "; ".join(sorted(named or {s.get("device", "unknown") for s in segments})) or "unknown"


def run_costs(runs_dir=RUNS_DIR) -> pd.DataFrame:
    """One row per released run under ``runs_dir`` (finished or a prefix, as ``export_run_data``
    exports them): the page that shows it (``page_runs``; "" where none does), its scale,
    implementation, status, steps, wall time (every segment of a resumed run added up, on a machine
    that may have been busy), tokens/s, and from env.json the devices, hosts and threads of all its
    segments. A run still training is not released; a run whose files do not describe it is left out
    and named in ``attrs["left_out"]``."""
    runs_dir = Path(runs_dir)
    where = {}
    for page, exps in page_runs():
        for e in exps:
            where.setdefault(run_path(e, runs_dir), page)
    rows, left_out = [], []
    for path in sorted(runs_dir.rglob("summary.json")):  # sorted: the same runs give the same table
        rd = RunDir(path.parent)
        # ``.replaced-*`` is a forced retrain's old files, kept aside, never a result
        if ".replaced-" in str(path) or rd.status not in (*FINISHED, "partial"):
            continue
        problems = rd.placement_problems(runs_dir)
        if problems:
            left_out.append("; ".join(problems))
            continue
        s, env = rd.summary, rd.read_json("env.json") or {}
        segments = [env, *env.get("resumed", [])] if env else []
        rows.append(
            {
                "path": str(rd.path.relative_to(runs_dir)),
                "page": where.get(rd.path, ""),
                "scale": s.get("scale"),
                "impl": s.get("impl"),
                "status": s.get("status"),
                "steps": s.get("steps"),
                "max_steps": s.get("max_steps"),
                "wall_s": float(s.get("wall_s") or 0),
                "tokens_per_s": s.get("tokens_per_s"),
                "device": "; ".join(sorted({seg.get("device", "unknown") for seg in segments}))
                or "unknown",
                "host": _host(segments),
                "threads": "; ".join(sorted({str(seg.get("threads")) for seg in segments}))
                or "unknown",
            }
        )
    out = pd.DataFrame(
        rows,
        columns=[
            "path",
            "page",
            "scale",
            "impl",
            "status",
            "steps",
            "max_steps",
            "wall_s",
            "tokens_per_s",
            "device",
            "host",
            "threads",
        ],
    )
    out.attrs["left_out"] = left_out
    return out


def compute_by_page(costs: pd.DataFrame) -> pd.DataFrame:
    """``run_costs`` summed per page, in reading order: runs and wall-clock hours, then a last row
    for all of them ("" is a run no page shows, listed only if there is one)."""
    order = [name for name, _ in page_runs()] + [""]
    rows = []
    for page in order:
        mine = costs[costs.page == page]
        if page == "" and mine.empty:
            continue
        rows.append(
            {
                "page": page_title(page) if page else "shown on no page",
                "runs": len(mine),
                "hours": mine.wall_s.sum() / 3600,
            }
        )
    rows.append(
        {"page": "all released runs", "runs": len(costs), "hours": costs.wall_s.sum() / 3600}
    )
    return pd.DataFrame(rows)


def compute_table(costs: pd.DataFrame) -> pd.DataFrame:
    """``compute_by_page`` as the limitations page shows it: hours to one decimal,
    each page's share of the total."""
    t = compute_by_page(costs)
    total = t.hours.iloc[-1]
    return pd.DataFrame(
        {
            "page": t.page,
            "runs": t.runs,
            "wall-clock hours": t.hours.map(lambda h: f"{h:.1f}"),
            "share of the total": (t.hours / total).map(lambda f: f"{f:.0%}") if total else "-",
        }
    )


def _counted(values: pd.Series, form: str) -> str:
    """``form`` filled with the one value every run has ("the device cpu"), or
    with each value and its count."""
    c = Counter(values)
    if len(c) == 1:
        return form.format(next(iter(c)))
    return ", ".join(f"{form.format(v)} in {_runs(n)}" for v, n in c.most_common())


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _threads(value) -> str:
    """A run's threads in words: "1 thread", "2 threads", or "1 and 2 threads" for a run resumed on
    another count (``run_costs`` joins its segments' counts with "; ")."""
    counts = str(value).split("; ")
    return f"{' and '.join(counts)} thread{'' if counts == ['1'] else 's'}"


def compute_statement(costs: pd.DataFrame) -> str:
    """The compute statement in words: how many released runs, their wall time in all, and
    what trained them, read from each run's env.json (the device, the threads, and the
    processor where it was recorded)."""
    hours = costs.wall_s.sum() / 3600
    gpu = int(costs.device.str.contains("cuda").sum())
    # hosts named beyond the bare device: the CPU's model, recorded from the commit that added it
    named = Counter(h for h, d in zip(costs.host, costs.device) if h != d)
    return " ".join(
        [
            (
                f"The {len(costs)} released runs took {hours:.1f} hours of wall-clock time in all "
                f"({hours / 24:.1f} days),"
            ),
            ("every one on a CPU and none on a GPU:" if not gpu else f"{gpu} of them on a GPU:"),
            (
                f"their env.json files give {_counted(costs.device, 'the device {}')} and "
                f"{_counted(costs.threads.map(_threads), '{}')}."
            ),
            (
                f"They name the processor for {_runs(sum(named.values()))} ("
                + "; ".join(f"{h}: {_runs(n)}" for h, n in named.most_common())
                + (
                    f") and not for the other {len(costs) - sum(named.values())}, trained before "
                    "env.json recorded it."
                )
                if named
                else "No run's env.json names its processor."
            ),
        ]
    )
