"""The release plan is exactly the union of the chapters' plans, each run once, seed 1337 first."""

import pytest

from lib.engine import plans
from lib.engine.config import off_preset_fields
from lib.engine.runs import run_path


def _keys(exps):
    return [e.to_json() for e in exps]


def test_release_is_the_union_of_the_chapter_plans_without_duplicates():
    release = _keys(plans.release())
    assert len(release) == len(set(release))
    chapters = set()
    for name, plan in plans.PLANS.items():
        # The prefix plans are trained with --until (partial by design);
        # release trains runs to the end.
        if name not in (
            "release",
            *plans.PREFIX_PLANS,
            *plans.MECHANISM_PLANS,
            *plans.RECIPE_PLANS,
        ):
            chapters |= set(_keys(plan()))
    chapters |= set(_keys(plans.joint_collapse(seeds=(42,))))  # the issue's "and 42 if time allows"
    assert set(release) == chapters


def test_every_chapter_gets_its_seed_1337_runs_before_any_third_seed():
    probe, extra = _keys(plans.longer_budget_124m()), _keys(plans.joint_collapse(seeds=(42,)))
    release = plans.release()
    # the long probe, then "if time allows"
    assert _keys(release[-len(probe) - len(extra) :]) == probe + extra
    release = release[: -len(probe) - len(extra)]
    first_third_seed = min(i for i, e in enumerate(release) if e.seed not in (1337, 42))
    seed_1337 = [i for i, e in enumerate(release) if e.seed == 1337]
    assert max(seed_1337) < first_third_seed
    assert {e.scale for e in release[:first_third_seed]} == {"cpu", "cpu-bpe"}


def test_the_cli_offers_exactly_the_plans():
    from lib.cli import PLAN_NAMES

    assert set(PLAN_NAMES) == set(plans.PLANS)


def test_a_shortened_release_trains_each_run_once():
    # the probe becomes the plain AttnOnly/FFNOnly seed 1337
    short = plans.with_steps(plans.release(), 5)
    assert (
        len(_keys(short))
        == len(set(_keys(short)))
        == len(plans.release()) - len(plans.longer_budget_124m())
    )


def test_a_plan_resolves_at_the_scale_asked_for_or_refuses():
    import pytest

    from lib.engine.config import ConfigError

    assert {e.scale for e in plans.resolve("124m_sweep", "124M")} == {"124M"}
    assert {e.scale for e in plans.resolve("124m_sweep")} == {"cpu-bpe"}
    with pytest.raises(ConfigError, match="fixed scale"):
        plans.resolve("release", "124M")
    with pytest.raises(ConfigError, match="valid: cpu, 10M"):
        plans.resolve("joint_collapse", "124M")


def test_configs_seeds_and_impls_narrow_a_plan_or_are_refused():
    import pytest

    from lib.engine.config import ConfigError

    exps = plans.resolve("10m_asymmetry", configs=["AttnOnly"], seeds=[42, 7])
    assert {(e.config_name, e.seed) for e in exps} == {("AttnOnly", 42), ("AttnOnly", 7)}
    with pytest.raises(ConfigError, match="no seed 99; valid: 0, 1, 2, 3, 7, 42, 123, 1337"):
        plans.resolve("10m_asymmetry", seeds=[99])
    # a plan of both implementations narrowed to one; a plan of one refuses the other, naming it
    whole = plans.resolve("10m_whole", configs=["AttnOnly"], impls=["residualgpt"])
    assert [(e.impl, e.config_name) for e in whole] == [("residualgpt", "AttnOnly")]
    with pytest.raises(ConfigError, match="no implementation nanogpt; valid: residualgpt"):
        plans.resolve("10m_schedule_seeds", impls=["nanogpt"])
    # after --configs, the valid implementations are those of the runs it
    # selected, and the message says so
    with pytest.raises(
        ConfigError,
        match=(
            "no implementation residualgpt among the runs the other options select; valid: nanogpt"
        ),
    ):
        plans.resolve("10m_whole", configs=["FullResidual"], impls=["residualgpt"])


def test_the_cli_sweep_honours_scale_configs_seeds_and_impl(capsys):
    from lib.cli import main

    assert (
        main(["sweep", "--plan", "124m_sweep", "--scale", "124M", "--seeds", "7", "--dry-run"]) == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all("/124M/" in ln and ln.endswith("seed7") for ln in lines)
    assert main(["sweep", "--plan", "release", "--scale", "124M", "--dry-run"]) == 2
    assert "fixed scale" in capsys.readouterr().err
    # --impl narrows a plan; without it a plan of both implementations lists
    # both (it has no default there)
    assert main(["sweep", "--plan", "10m_whole", "--configs", "AttnOnly", "--dry-run"]) == 0
    assert ["/nanogpt/" in ln for ln in capsys.readouterr().out.splitlines()] == [True, False]
    assert (
        main(
            [
                "sweep",
                "--plan",
                "10m_whole",
                "--impl",
                "residualgpt",
                "--configs",
                "AttnOnly",
                "--dry-run",
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "/residualgpt/AttnOnly/" in lines[0]
    # without a plan the implementation is still ResidualGPT's by default
    assert main(["sweep", "--scale", "10M", "--configs", "AttnOnly", "--dry-run"]) == 0
    assert "/10M/residualgpt/AttnOnly/seed1337" in capsys.readouterr().out


def test_the_mechanism_plan_is_its_parts_each_run_once_mixer_at_seed_1337_first():
    mech = plans.mechanism()
    assert len(_keys(mech)) == len(set(_keys(mech)))
    parts = (
        _keys(plans.mixer_test())
        + _keys(plans.probe_during())
        + _keys(plans.bundle())
        + _keys(plans.rounding_twins())
        + _keys(plans.escape_map())
        + _keys(plans.escape_long_budget())
    )
    assert set(_keys(mech)) == set(parts)
    assert [(e.config_name, e.model.mixer, e.seed) for e in mech[:3]] == [
        ("AttnOnly", "local", 1337),
        ("FullResidual", "local", 1337),
        ("FFNOnly", "local", 1337),
    ]


def test_each_bundle_factor_switches_only_its_own_fields_to_residualgpts_values():
    from lib.engine.config import get_preset, off_preset_fields

    factors = plans.bundle_factors()
    assert off_preset_fields(factors["none"]) == {}
    res = get_preset("cpu", "residualgpt", "AttnOnly")
    for name, exp in factors.items():
        changed = off_preset_fields(exp)
        assert (name == "none") == (not changed), name
        for key, value in changed.items():
            if key in (
                "min_lr",
                "lr",
                "tie_weights",
                "scaled_init",
                "bias",
                "head_bias",
                "attn_kernel",
            ):
                # the learning rates are checked below; the model fields against the recipe
                continue
            assert value == getattr(res.train, key), (name, key)
        for key, value in exp.model.departures.items():
            assert value == getattr(res.model, key), (name, key)
    assert off_preset_fields(factors["peak learning rate"]) == {"lr": res.train.lr}
    cosine = factors["warm-up + cosine"].train
    assert (
        cosine.lr / cosine.min_lr == pytest.approx(res.train.lr / res.train.min_lr)
        and cosine.lr == 3e-4
    )
    assert len({str(run_path(e, "r")) for e in factors.values()}) == len(factors)


def test_the_escape_map_is_depth_by_gain_for_attnonly_plus_an_ffnonly_row():
    grid = plans.escape_map()
    attn = {(e.model.n_layer, e.gain) for e in grid if e.config_name == "AttnOnly"}
    assert attn == {(d, float(g)) for d in plans.ESCAPE_DEPTHS for g in plans.ESCAPE_GAINS}
    assert {(e.model.n_layer, e.gain) for e in grid if e.config_name == "FFNOnly"} == {
        (6, float(g)) for g in plans.ESCAPE_GAINS
    }
    assert all((e.gain_mode is None) == (e.gain == 1.0) for e in grid)
    assert {e.train.eval_interval for e in grid} == {25} and {e.train.max_steps for e in grid} == {
        400
    }


def test_command_for_trains_exactly_the_planned_experiment():
    """The command a chapter prints for a missing run, parsed by the CLI, is that run:
    mixer, gain, steps and every off-preset field (depth, evaluation cadence, a bundle
    factor) survive the round trip."""
    import shlex

    from lib.cli import _experiment, parser

    for exp in plans.mechanism() + plans.release()[:3] + plans.bf16_agreement():
        argv = shlex.split(plans.command_for(exp))[3:]
        args = parser().parse_args(argv)
        assert _experiment(args, args.config, args.seed) == exp, plans.command_for(exp)


def test_the_runs_probed_during_training_share_attnonly_and_ffnonly_with_the_escape_map():
    during, grid = _keys(plans.probe_during()), set(_keys(plans.escape_map()))
    assert len(during) == 4 and sum(k in grid for k in during) == 2


def test_the_recipe_plans_switch_exactly_the_fields_the_issue_names():
    from lib.engine.plans import author_values, recipes, schedule_seeds

    av = author_values()
    assert len(av) == 12 and {e.seed for e in av} == {1337, 42, 123}
    for e in av:
        diff = off_preset_fields(e)
        # plain init, dropout 0.2, peak 3e-4 decayed to 3e-5 after the same warm-up
        if e.impl == "residualgpt":
            assert diff == {"scaled_init": False, "dropout": 0.2, "lr": 3e-4, "min_lr": 3e-5}
            assert e.train.warmup_steps == 100 and e.train.schedule == "cosine"
        else:
            assert (e.config_name, diff) == ("AttnOnly", {"dropout": 0.2})
    ss = schedule_seeds()
    assert len(ss) == 35 and all(
        e.train.eval_interval == 25 and e.config_name == "AttnOnly" for e in ss
    )
    kinds = {}
    for e in ss:
        key = (e.impl, e.train.schedule, e.train.grad_clip, e.model.bias)
        kinds.setdefault(key, []).append(e.seed)
    assert kinds == {
        ("nanogpt", "constant", 0.0, True): [1337, 42, 123, 0, 7],
        ("nanogpt", "cosine", 0.0, True): [1337, 42, 123, 0, 7],
        ("residualgpt", "cosine", 1.0, False): [1337, 42, 123, 0, 7],
        ("residualgpt", "constant", 1.0, False): [1337, 42, 123, 0, 7] * 2,
        ("nanogpt", "constant", 1.0, True): [1337, 42, 123, 0, 7],
        ("nanogpt", "constant", 0.0, False): [1337, 42, 123, 0, 7],
    }
    # ResidualGPT at a constant rate twice: its own peak 1e-3 and Phase 2's 3e-4, each from step 0
    consts = sorted(
        (e.train.lr, e.train.min_lr, e.train.warmup_steps)
        for e in ss
        if e.impl == "residualgpt" and e.train.schedule == "constant" and e.seed == 1337
    )
    assert consts == [(3e-4, 3e-4, 0), (1e-3, 1e-3, 0)]
    constant = next(e for e in ss if e.impl == "residualgpt" and e.train.schedule == "constant")
    assert (constant.train.lr, constant.train.min_lr, constant.train.warmup_steps) == (
        1e-3,
        1e-3,
        0,
    )
    cosine = next(e for e in ss if e.impl == "nanogpt" and e.train.schedule == "cosine")
    assert (cosine.train.lr, cosine.train.min_lr, cosine.train.warmup_steps) == (3e-4, 3e-5, 100)
    assert len(recipes()) == 47 and [e.seed for e in recipes()[:10]] == [1337] * 10


def test_the_schedule_stop_rule_reads_a_damaged_summary_as_no_progress():
    # a summary that is no JSON object (or whose numbers are not numbers) must not crash the stop
    # rule: the sweep refuses the damaged run by name afterwards (RunDir.refuse_damaged)
    const = [e for e in plans.paper_10m_schedule_seeds() if e.train.schedule == "constant"][0]
    first = plans.schedule_10m_until(const, None)
    for damaged in ([1, 2], 5, {"steps": "x", "escape_step": "y"}):
        assert plans.schedule_10m_until(const, damaged) == first


def test_the_schedule_stop_rule_gives_both_schedules_one_budget():
    # 100 steps past the escape under either schedule; a warm-up run at least past its warm-up (step
    # 200); a run of either schedule still on the floor trains on to 600, so that "never" in the
    # rank rule means the same for both
    warm, const = plans.paper_10m_schedule_seeds(seeds=[0])

    def stop(exp, steps, escape):  # where the run ends if it is resumed until the rule stops moving
        at = plans.schedule_10m_until(exp, {"steps": steps, "escape_step": escape})
        return at if at == steps else stop(exp, at, escape)

    assert (stop(warm, 0, 50), stop(warm, 0, 150), stop(warm, 0, None)) == (200, 250, 600)
    assert (stop(const, 0, 50), stop(const, 0, 250), stop(const, 0, 550), stop(const, 0, None)) == (
        150,
        350,
        600,
        600,
    )
    # one segment at a time: the first stop of a fresh run is the first segment's end, not the run's
    assert plans.schedule_10m_until(warm, None) == plans.schedule_10m_until(const, None) == 100


def test_a_plan_with_its_own_stops_is_looked_up_not_named_by_the_cli():
    import inspect

    from lib import cli

    src = inspect.getsource(cli)
    stopping = [name for name, plan in plans.PLANS.items() if plan.stop is not None]
    assert len(stopping) == 3
    assert all(
        f'"{name}"' not in src.split("PLAN_NAMES = (")[1].split(")\n", 1)[1] for name in stopping
    )
    prefix = plans.PLANS["10m_prefix"].stop
    control = next(
        e for e in plans.paper_10m_prefix() if plans.prefix_steps(e) < plans.PREFIX_STEPS
    )
    other = next(e for e in plans.paper_10m_prefix() if plans.prefix_steps(e) == plans.PREFIX_STEPS)
    assert (
        prefix(control, None, 600) == plans.PREFIX_CONTROL_STEPS and prefix(other, None, 600) == 600
    )
    assert prefix(other, None, None) is None  # no --until: the budget
    probe = plans.search_probe("124M warm-up slope")
    e = plans.probe_runs(probe)["AttnOnly", 1337]
    assert plans.PLANS["124m_search"].stop(e, None, None) == probe.stop
    assert plans.PLANS["124m_search"].stop(e, None, 100) == 100


def test_a_plan_carries_its_scales_options_and_stopping_rule():
    # what the CLI and the retrain commands read from the plan itself, never
    # from a table keyed by its name
    prefix = plans.PLANS["10m_prefix"]
    assert prefix.options == (f"--until {plans.PREFIX_STEPS}", "--micro-batch 8", "--fast-dropout")
    assert prefix.stop is not None and prefix.scales == () and prefix() == plans.paper_10m_prefix()
    assert plans.PLANS["124m_sweep"].scales[0] == "cpu-bpe" and plans.PLANS["release"].stop is None
    for plan in plans.PLANS.values():  # each scale a plan names resolves to runs at that scale
        for scale in plan.scales:
            assert {e.scale for e in plan(scale)} == {scale}, (plan.name, scale)
