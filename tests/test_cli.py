"""``python -m lib``: bad input exits 2 naming the valid values; describe prints the counts."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import cli

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ["FullResidual", "AttnOnly", "FFNOnly", "NoResidual"]


def cli_process(*args, tmp_path=None):
    extra = ["--runs-dir", str(tmp_path)] if tmp_path is not None else []
    return subprocess.run(
        [sys.executable, "-m", "lib", *args, *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


TRAIN = ["train", "--scale", "cpu", "--config", "AttnOnly", "--steps", "1"]


def with_option(option, value):
    args = list(TRAIN)
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    return args


@pytest.mark.parametrize(
    "option, value, valid",
    [
        ("--scale", "1M", ["cpu", "cpu-bpe", "10M", "124M"]),
        ("--impl", "minGPT", ["residualgpt", "nanogpt"]),
        ("--config", "Full", CONFIGS),
        ("--gain-mode", "init", ["runtime", "weight"]),
    ],
)
def test_bad_choice_exits_2_naming_valid_values(option, value, valid, tmp_path):
    r = cli(*with_option(option, value), tmp_path=tmp_path)
    assert r.returncode == 2 and value in r.stderr
    assert all(v in r.stderr for v in valid)
    assert not any(tmp_path.iterdir())  # nothing was trained


def test_gain_without_mode_exits_2(tmp_path):
    r = cli(*TRAIN, "--gain", "2", tmp_path=tmp_path)
    assert r.returncode == 2 and "--gain-mode" in r.stderr and "runtime, weight" in r.stderr
    assert not any(tmp_path.iterdir())


# LIB BUG (lib/cli.py, main): an unknown option after a subcommand is reported by the top-level
# parser, whose usage line lists only the subcommands ("usage: python -m lib [-h]
# {train,sweep,describe,prepare} ..."), not the options that `train` accepts. Fix: parse_known_args
# and report leftovers with the subparser's .error().
# Issue 57: argparse's own 13-line usage block came before that line; the refusal is now one line,
# as every other refusal of the command line, and it names the valid options itself.
def test_unknown_option_exits_2_in_one_line_listing_the_options(tmp_path):
    # through the real entry point, its exit code
    r = cli_process(*TRAIN, "--bogus", tmp_path=tmp_path)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "--bogus" in lines[0], r.stderr
    assert all(opt in lines[0] for opt in ("--scale", "--config", "--seed", "--gain-mode"))


def test_argparse_refusals_are_one_line_naming_the_valid_choices():
    r = cli("train", "--scale", "cpu")  # --config missing
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert (
        r.returncode == 2 and len(lines) == 1 and "--config" in lines[0] and "--scale" in lines[0]
    ), r.stderr
    r = cli()  # no command
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "train, sweep" in lines[0], r.stderr


def test_describe_prints_the_four_configs_and_their_counts():
    r = cli("describe", "--scale", "10M")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert list(out) == CONFIGS
    assert {c: out[c]["n_params"] for c in CONFIGS} == dict.fromkeys(CONFIGS, 10_750_080)
    assert out["AttnOnly"]["experiment"]["model"]["ffn_res"] is False
    assert out["FFNOnly"]["experiment"]["model"]["attn_res"] is False


def test_report_groups_finished_runs_and_lists_the_rest(tmp_path, fake_run):
    from lib.engine.config import get_preset, replace
    from lib.engine.plans import release
    from lib.engine.runs import run_path

    exp = lambda c, s: get_preset("cpu", "nanogpt", c, s)  # noqa: E731
    fake_run(exp("AttnOnly", 1337), tmp_path, best=2.0)
    fake_run(exp("AttnOnly", 42), tmp_path, best=2.2, escape=None, status="diverged", steps=37)
    fake_run(exp("FullResidual", 1337), tmp_path, best=1.9)
    # an edited config.json: another learning rate
    fake_run(
        exp("FullResidual", 42),
        tmp_path,
        best=1.0,
        config=replace(exp("FullResidual", 42), lr=0.1).to_dict(),
    )
    bad = fake_run(exp("FFNOnly", 1337), tmp_path)
    (bad / "summary.json").write_text('{"status": "complete", "best_val_loss": NaN')  # cut short
    r = cli("report", "--plan", "release", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr  # goes on past the bad runs
    # the diverged seed is not pooled: AttnOnly is seed 1337 alone
    assert "| cpu     | nanogpt | plain     | AttnOnly     | 2.0000 (n=1)" in r.stdout, r.stdout
    assert "| cpu     | nanogpt | plain     | FullResidual | 1.9000 (n=1)" in r.stdout, r.stdout
    assert "seed 42 (diverged)" in r.stdout
    assert (
        f"2 of {len(release())} runs finished" not in r.stdout
        and f"3 of {len(release())} runs finished" in r.stdout
    )
    assert "diverged: ['cpu nanogpt plain AttnOnly seed 42 (at step 37)']" in r.stdout
    assert (
        "FullResidual/seed42/config.json describes another experiment than its directory: "
        "train.lr=0.1"
    ) in r.stdout
    assert "FFNOnly/seed1337/summary.json is not readable JSON" in r.stdout
    missing = [
        str(run_path(e, tmp_path))
        for e in release()
        if not (e.impl == "nanogpt" and e.config_name in ("AttnOnly", "FullResidual", "FFNOnly"))
    ]
    assert all(f"not finished: {m}" in r.stdout for m in missing)


@pytest.mark.parametrize(
    "args, expected",
    [
        (("--set", "n_layers=2"), ["unknown config key 'n_layers'", "n_layer", "beta2"]),
        (("--set", "n_layer=two"), ["n_layer must be int", "'two'"]),
        (("--set", "n_layer"), ["--set needs KEY=VALUE"]),
        (("--mixer", "conv"), ["attention", "local"]),
    ],
)
def test_bad_set_or_mixer_exits_2_naming_what_is_valid(args, expected, tmp_path):
    r = cli(*TRAIN, *args, tmp_path=tmp_path)
    assert r.returncode == 2 and all(e in r.stderr for e in expected), r.stderr
    assert not any(tmp_path.iterdir())


def test_a_plan_refuses_set_and_mixer(tmp_path):
    r = cli(
        "sweep",
        "--plan",
        "mixer_test",
        "--set",
        "n_layer=2",
        "--dry-run",
        "--runs-dir",
        str(tmp_path),
    )
    assert r.returncode == 2 and "a plan names its own experiments" in r.stderr


def test_set_reads_booleans_in_json_and_python_spelling():
    from lib.cli import parse_sets

    assert parse_sets(
        ["tie_weights=True", "bias=false", "n_layer=2", "val_mode=fixed", "lr=3e-4"]
    ) == {"tie_weights": True, "bias": False, "n_layer": 2, "val_mode": "fixed", "lr": 3e-4}


def test_bench_step_cost_only_prints_only_that_table_and_bad_combinations_are_refused(monkeypatch):
    from lib.engine import bench

    called = []
    monkeypatch.setattr(
        bench,
        "step_cost",
        lambda scale, **kw: (
            called.append(("step_cost", scale, kw["rounds"])) or pd.DataFrame({"loop": ["plain"]})
        ),
    )
    monkeypatch.setattr(
        bench, "bench", lambda *a, **kw: called.append(("bench", a[0])) or pd.DataFrame({"x": [1]})
    )
    assert cli("bench", "--step-cost-only", "--rounds", "3").returncode == 0
    assert called == [("step_cost", "10M", 3)]  # the throughput table is skipped
    called.clear()
    assert cli("bench").returncode == 0 and called == [
        ("step_cost", "10M", 1),
        ("bench", ["10M", "cpu"]),
    ]
    called.clear()
    # a stand-in's bench row (issue 60): its own preset's step, nothing at 10M
    assert cli("bench", "--step-cost-only", "--scales", "cpu-bpe-ramp").returncode == 0
    assert called == [("step_cost", "cpu-bpe-ramp", 1)]
    called.clear()
    for args, said in (
        (("--step-cost-only", "--batch-size", "8"), "drop --batch-size"),
        (
            ("--step-cost-only", "--scales", "cpu-bpe-ramp", "--micro-batches", "3"),
            "must divide the batch size 8",
        ),
        (("--scales", "cpu", "--rounds", "3"), "--rounds applies to the step-cost table"),
        # the table's own options are refused where no table is timed, not dropped
        (("--scales", "cpu", "--micro-batches", "4"), "--micro-batches applies to the step-cost"),
        (
            ("--scales", "cpu", "--impl", "nanogpt", "--rounds", "2"),
            "--rounds and --impl apply to the step-cost table",
        ),
        # 124M trains in bf16: its step against an fp32 matmul rate would be no utilisation
        (("--step-cost-only", "--scales", "124M"), "124M trains in bf16; valid: cpu, cpu-bpe"),
    ):
        r = cli("bench", *args)
        assert r.returncode == 2 and said in r.stderr
    assert called == []  # refused before anything is timed
    monkeypatch.undo()  # the real step_cost refuses zero rounds before it builds a model
    r = cli("bench", "--step-cost-only", "--rounds", "0")
    assert r.returncode == 2 and "rounds must be at least 1, not 0" in r.stderr


@pytest.mark.parametrize("steps", ["0", "-3"])
def test_bench_refuses_steps_below_one_before_timing_anything(steps, monkeypatch):
    from lib.engine import bench

    monkeypatch.setattr(bench, "bench", lambda *a, **kw: pytest.fail("timed"))
    # issue 39 item 6: was an UnboundLocalError
    r = cli("bench", "--scales", "cpu", "--steps", steps)
    assert (
        r.returncode == 2
        and f"--steps {steps}: must be at least 1" in r.stderr
        and "Traceback" not in r.stderr
    )


def test_a_closed_pipe_ends_describe_quietly():
    # `describe | head -1`: the reader is gone before describe writes (issue 39
    # item 11); no error, no traceback
    p = subprocess.Popen(
        [sys.executable, "-m", "lib", "describe", "--scale", "cpu"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()
    err = p.stderr.read().decode()
    # 128 + SIGPIPE, as `seq 1e6 | head -1` ends
    assert p.wait(timeout=120) == 141 and err == "", err
