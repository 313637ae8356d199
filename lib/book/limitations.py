"""The limitations page: how the CPU stand-ins depart from the paper's presets (read field by field
from ``lib.engine.config``), and what a run at the paper's scale would cost on the CPU that trained
the released runs (the presets' arithmetic over the rate those runs measured, ``costs.run_costs``).
Nothing here is typed: a preset or a run that changes moves the page."""

from __future__ import annotations

import pandas as pd
import torch

from ..claims.paper import author_recipes
from ..claims.runset import CHAPTERS, PLAN_FOR
from ..claims.verdicts import and_list
from ..engine import plans
from ..engine.bench import step_flops
from ..engine.config import IMPL_NAMES, PAPER_SCALES, Experiment, departures, get_preset
from ..engine.results import trained_whole, whole_cpu_hours
from ..engine.runs import RUNS_DIR, run_path


def comparisons() -> list[tuple[str, str, str]]:
    """(stand-in, paper scale, implementation) of the chapters, each once, in the chapters' order (a
    chapter's earlier stand-ins before its own), then the stand-ins the 124M search's probes are
    presets of (``plans.SEARCH_STAND_INS``)."""
    found = [
        (scale, s.paper_scale, s.impl)
        for s in CHAPTERS.values()
        for scale in (*s.earlier, s.stand_in)
    ]
    found += [(scale, "124M", "residualgpt") for scale in plans.SEARCH_STAND_INS.values()]
    return list(dict.fromkeys(found))


def _quietly_built(fn, exp: Experiment):
    # On the meta device: a 124M model is counted without allocating its weights; fork_rng,
    # because building a model seeds the global generator (lib.engine.experiment.build_model) and
    # a page's kernel should not notice.
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        return fn(exp)


def parameters(exp: Experiment) -> int:
    """Unique parameters of the experiment's model (a tied embedding once), as
    ``GPT.num_params`` counts them."""
    from ..engine.model import GPT

    return _quietly_built(lambda e: GPT(e.model).num_params(), exp)


def tokens_per_run(exp: Experiment) -> int:
    return exp.train.max_steps * exp.train.tokens_per_step * exp.model.block_size


def flops_per_token(exp: Experiment) -> float:
    """Training FLOPs per token, ``bench.step_flops``'s accounting (6 per
    weight, plus attention's scores)."""
    return _quietly_built(step_flops, exp) / (exp.train.tokens_per_step * exp.model.block_size)


def _shown(v) -> str:
    return (
        f"{v:g}"
        if isinstance(v, float)
        else f"{v:,}"
        if isinstance(v, int) and not isinstance(v, bool)
        else str(v)
    )


def stand_in_departures() -> pd.DataFrame:
    """For each stand-in a chapter trains (``comparisons``): every preset field whose value differs
    from the paper preset it stands in for, both values side by side, then what the differences add
    up to (parameters, tokens trained per run)."""
    rows = []
    for stand_in, paper, impl in comparisons():
        p, s = get_preset(paper, impl), get_preset(stand_in, impl)
        label = f"{stand_in} for {paper} ({IMPL_NAMES[impl]})"
        rows += [
            {
                "stand-in": label,
                "field": k,
                "paper's preset": _shown(a),
                "stand-in's value": _shown(b),
            }
            for k, (a, b) in departures(s, p).items()
        ]
        rows += [
            {
                "stand-in": label,
                "field": name,
                "paper's preset": f"{f(p):,}",
                "stand-in's value": f"{f(s):,}",
            }
            for name, f in (("parameters", parameters), ("tokens per run", tokens_per_run))
        ]
    return pd.DataFrame(rows, columns=["stand-in", "field", "paper's preset", "stand-in's value"])


def planned_at(scale: str) -> int:
    """How many runs the chapters train at a paper scale: their plans at
    that scale, each experiment once."""
    return len(
        plans.unique(
            [
                e
                for name, spec in CHAPTERS.items()
                if spec.paper_scale == scale
                for e in PLAN_FOR[name](scale)
            ]
        )
    )


def measured_rates(costs: pd.DataFrame) -> pd.Series:
    """Training tokens/s of the released runs at the paper's 10M shape
    (evaluations excluded), on this CPU."""
    at = costs[(costs.scale == "10M") & costs.tokens_per_s.notna()]
    return at.tokens_per_s.astype(float)


def paper_scale_cost(costs: pd.DataFrame) -> pd.DataFrame:
    """What one run of each paper preset, and the runs the chapters plan at it, would take on the
    CPU that trained the released 10M runs: its training FLOPs over the FLOP rate those runs
    reached (their tokens/s times the 10M preset's FLOPs per token), at the fastest run (the
    closest to an idle machine) and at the median. Training only: evaluations add to it. NaN
    where no 10M run is released."""
    rates = measured_rates(costs)
    fastest, median = (rates.max(), rates.median()) if len(rates) else (float("nan"), float("nan"))
    base = flops_per_token(get_preset("10M"))
    rows = []
    for scale in PAPER_SCALES:
        e = get_preset(scale)
        # the run's work in 10M tokens: a 124M token costs flops_per_token(124M) / base of them
        ratio = flops_per_token(e) / base
        seconds_fast, seconds_median = (
            tokens_per_run(e) * ratio / fastest,
            tokens_per_run(e) * ratio / median,
        )
        rows.append(
            {
                "paper's preset": scale,
                "steps": e.train.max_steps,
                "tokens per run": tokens_per_run(e),
                "FLOPs per token, relative to 10M": ratio,
                "hours per run": seconds_fast / 3600,
                "hours per run at the median rate": seconds_median / 3600,
                "runs planned": planned_at(scale),
                "days for the planned runs": planned_at(scale) * seconds_fast / 86400,
            }
        )
    return pd.DataFrame(rows)


def paper_scale_shown(cost: pd.DataFrame) -> pd.DataFrame:
    """``paper_scale_cost`` as the page shows it, every number formatted here so that the test of
    the built page can look for the same strings."""
    return pd.DataFrame(
        {
            "paper's preset": cost["paper's preset"],
            "steps": cost.steps.map("{:,}".format),
            "tokens per run": cost["tokens per run"].map("{:,}".format),
            "FLOPs per token, relative to 10M": cost["FLOPs per token, relative to 10M"].map(
                "{:.1f}".format
            ),
            "hours per run (fastest rate)": cost["hours per run"].map("{:,.1f}".format),
            "hours per run (median rate)": cost["hours per run at the median rate"].map(
                "{:,.1f}".format
            ),
            "runs the chapters plan": cost["runs planned"],
            "days for those runs (fastest rate)": cost["days for the planned runs"].map(
                "{:,.0f}".format
            ),
        }
    )


def cannot_test_statement(costs: pd.DataFrame) -> str:
    """What the released paper-shape runs reached and what the paper's runs
    would cost here, in two sentences."""
    at = costs[costs.scale == "10M"]
    if at.empty:
        return (
            "No run at the paper's 10M shape is released, so this CPU's rate at that shape is not "
            "measured."
        )
    rates, cost = measured_rates(costs), paper_scale_cost(costs).set_index("paper's preset")
    # a run trained to its budget is whole, not a prefix: counted apart, so that
    # "prefixes" is every one it names
    whole = trained_whole(at)
    # a whole run trained in segments (plans.paper_10m_whole) and not yet at its end is a whole
    # run in training, not a prefix
    whole_plan = {str(run_path(e, RUNS_DIR).relative_to(RUNS_DIR)) for e in plans.paper_10m_whole()}
    training = ~whole & at.path.isin(whole_plan)
    part = at[~whole & ~training]
    budget = sorted(set(at.max_steps.astype(int)))

    def reach(runs: pd.DataFrame) -> str:
        steps = sorted(set(runs.steps.astype(int)))
        return f"{steps[0]:,}" if len(steps) == 1 else f"{steps[0]:,} to {steps[-1]:,}"

    ten, big = cost.loc["10M"], cost.loc["124M"]
    budget_words = f"{'/'.join(f'{b:,}' for b in budget)} steps"
    tokens = f"at {rates.min():,.0f} to {rates.max():,.0f} training tokens/s."
    if not whole.any() and not training.any():
        runs = (
            f"The {len(at)} released runs at the paper's 10M shape are prefixes: they trained "
            f"{reach(part)} of its {budget_words}, {tokens}"
        )
    else:
        said = [f"{int(whole.sum())} trained all of its {budget_words}"] if whole.any() else []
        if training.any():
            n = int(training.sum())
            said.append(
                f"{n} {'is a whole run' if n == 1 else 'are whole runs'} still in training (at "
                f"step {reach(at[training])})"
            )
        if len(part):
            said.append(
                f"{len(part)} {'is a prefix' if len(part) == 1 else 'are prefixes'} of it, "
                f"trained {reach(part)} steps"
            )
        runs = (
            f"Of the {len(at)} released runs at the paper's 10M shape, {and_list(said)}, {tokens}"
        )
    lo, hi, measured = whole_run_hours(costs)
    # what the whole runs took, first: the estimate below is training alone, at the best rate
    took = (
        "Trained whole on a CPU here, a run took "
        + (f"{lo:.1f}" if round(lo, 1) == round(hi, 1) else f"{lo:.1f} to {hi:.1f}")
        + " hours, evaluations and a busy machine included; training alone, at"
        if measured
        else "At"
    )
    return " ".join(
        [
            runs,
            (
                f"{took} the fastest of those rates one whole 10M run takes "
                f"{ten['hours per run']:,.1f} hours, and the"
            ),
            (
                f"{int(ten['runs planned'])} runs the chapters plan at 10M "
                f"{ten['days for the planned runs']:,.0f} days."
            ),
            (
                f"One 124M run, {big['tokens per run'] / ten['tokens per run']:,.0f} times the "
                "tokens at"
            ),
            (
                f"{big['FLOPs per token, relative to 10M']:.1f} times the FLOPs per token, takes "
                f"{big['hours per run']:,.0f}"
            ),
            (
                f"hours ({big['hours per run'] / 24:,.0f} days), and the "
                f"{int(big['runs planned'])} runs of the 124M sweep"
            ),
            f"(Table 5) {big['days for the planned runs'] / 365:,.1f} years.",
        ]
    )


def thread_range(threads: pd.Series) -> str:
    """The threads the runs trained on, in words: "2", or "1 to 2" where they differ (a run trained
    beside other work on one core). A run resumed on another thread count lists each of its own
    ("1; 2", ``costs.run_costs``)."""
    counts = sorted({int(t) for ts in threads.dropna() for t in str(ts).split("; ")})
    if not counts:
        return "?"
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"


def whole_run_hours(costs: pd.DataFrame) -> tuple[float, float, bool]:
    """What one whole run of the paper's 10M preset takes here: the wall-clock range of the released
    ones, evaluations and all (True), or, before any is released, the estimate at the fastest
    measured rate (``paper_scale_cost``, training only; False)."""
    hours = whole_cpu_hours(costs[costs.scale == "10M"])
    if hours is not None:
        return *hours, True
    est = float(paper_scale_cost(costs).set_index("paper's preset").loc["10M", "hours per run"])
    return est, est, False


def summary_compute(costs: pd.DataFrame) -> dict:
    """The compute the front page's summary states (``front_page.summary_parts``), from
    ``costs.run_costs``: the released runs, their wall-clock hours, how many at the paper's 10M
    shape (and of them, trained whole) and on a GPU, the threads they ran on (a range where they
    differ), what one whole 10M run takes (``whole_run_hours``), and whether the author's Phase-2
    notebook trains at a constant rate (``phase2_constant``)."""
    return dict(
        runs=len(costs),
        hours=costs.wall_s.sum() / 3600,
        at_shape=int((costs.scale == "10M").sum()),
        whole=int(trained_whole(costs[costs.scale == "10M"]).sum()),
        gpu=int(costs.device.str.contains("cuda").sum()),
        threads=thread_range(costs.threads),
        whole_hours=whole_run_hours(costs),
        constant=phase2_constant(),
    )


# the notebook whose outputs match two of Phase 2's three seeds (data/author_recipes.csv)
PHASE2_NOTEBOOK = "Notebooks/10M/10M_MIXTURE_EXPERIMENT.ipynb"


def phase2_constant() -> bool:
    """Whether the author's Phase-2 notebook trains at a constant rate (no warm-up, no decay), as
    data/author_recipes.csv records from its cells, where Table 1 gives ResidualGPT at 10M a
    warm-up and cosine (nanoGPT's constant rate is Table 1's own)."""
    r = author_recipes()
    schedule = r[(r.notebook == PHASE2_NOTEBOOK) & (r.field == "schedule")].value
    if len(schedule) != 1:  # the front page's sentence would go without a word
        raise ValueError(
            f"data/author_recipes.csv has {len(schedule)} 'schedule' rows for {PHASE2_NOTEBOOK}, "
            "not 1"
        )
    return schedule.iloc[0].startswith("constant")
