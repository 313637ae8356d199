"""The release plan is exactly the union of the chapters' plans, each run once, seed 1337 first."""
from lib import plans


def _keys(exps):
    return [e.to_json() for e in exps]


def test_release_is_the_union_of_the_chapter_plans_without_duplicates():
    release = _keys(plans.release())
    assert len(release) == len(set(release))
    chapters = set()
    for name, plan in plans.PLANS.items():
        # The prefix plans are trained with --until (partial by design); release trains runs to the end.
        if name not in ("release", *plans.PREFIX_PLANS):
            chapters |= set(_keys(plan()))
    chapters |= set(_keys(plans.joint_collapse(seeds=(42,))))  # the "and 42 if time allows"
    assert set(release) == chapters


def test_every_chapter_gets_its_seed_1337_runs_before_any_third_seed():
    probe, extra = _keys(plans.longer_budget_124m()), _keys(plans.joint_collapse(seeds=(42,)))
    release = plans.release()
    assert _keys(release[-len(probe) - len(extra):]) == probe + extra  # the long probe, then "if time allows"
    release = release[:-len(probe) - len(extra)]
    first_third_seed = min(i for i, e in enumerate(release) if e.seed not in (1337, 42))
    seed_1337 = [i for i, e in enumerate(release) if e.seed == 1337]
    assert max(seed_1337) < first_third_seed
    assert {e.scale for e in release[:first_third_seed]} == {"cpu", "cpu-bpe"}


def test_the_cli_offers_exactly_the_plans():
    from lib.cli import PLAN_NAMES
    assert set(PLAN_NAMES) == set(plans.PLANS)


def test_a_shortened_release_trains_each_run_once():
    short = plans.with_steps(plans.release(), 5)  # the probe becomes the plain AttnOnly/FFNOnly seed 1337
    assert len(_keys(short)) == len(set(_keys(short))) == len(plans.release()) - len(plans.longer_budget_124m())


def test_a_plan_resolves_at_the_scale_asked_for_or_refuses():
    import pytest

    from lib.config import ConfigError
    assert {e.scale for e in plans.resolve("124m_sweep", "124M")} == {"124M"}
    assert {e.scale for e in plans.resolve("124m_sweep")} == {"cpu-bpe"}
    with pytest.raises(ConfigError, match="fixed scale"):
        plans.resolve("release", "124M")
    with pytest.raises(ConfigError, match="valid: cpu, 10M"):
        plans.resolve("joint_collapse", "124M")


def test_configs_and_seeds_narrow_a_plan_or_are_refused():
    import pytest

    from lib.config import ConfigError
    exps = plans.resolve("10m_asymmetry", configs=["AttnOnly"], seeds=[42, 7])
    assert {(e.config_name, e.seed) for e in exps} == {("AttnOnly", 42), ("AttnOnly", 7)}
    with pytest.raises(ConfigError, match="no seed 99; valid: 0, 1, 2, 3, 7, 42, 123, 1337"):
        plans.resolve("10m_asymmetry", seeds=[99])


def test_the_cli_sweep_honours_scale_configs_and_seeds(capsys):
    from lib.cli import main
    assert main(["sweep", "--plan", "124m_sweep", "--scale", "124M", "--seeds", "7", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and all("/124M/" in ln and ln.endswith("seed7") for ln in lines)
    assert main(["sweep", "--plan", "release", "--scale", "124M", "--dry-run"]) == 2
    assert "fixed scale" in capsys.readouterr().err
