"""Nothing lost, nothing wrong in silence: diverged runs, run files that do not match their
directory, weights of the wrong step, leftover temporary files, file modes, a full disk."""

import errno
import json
import math
import os

import pandas as pd
import pytest
import torch

from lib import book
from lib.claims import asymmetry, bundle, escape_map
from lib.engine import plans, results
from lib.engine.experiment import recover_weights, run
from lib.engine.files import RunError, write_json_atomic
from lib.engine.runs import RunDir, export_weights, run_path
from lib.engine.train import Trainer


def nan_at_evaluation(monkeypatch, n: int):
    """Make the ``n``-th evaluation's validation loss NaN, as a model that
    diverged between two evaluations."""
    calls = {"n": 0}
    real = Trainer.batch_losses

    def batch_losses(self, batches):
        out = real(self, batches)
        if batches is self.batches.fixed_val:
            calls["n"] += 1
            if calls["n"] == n:
                return torch.full_like(out, math.nan)
        return out

    monkeypatch.setattr(Trainer, "batch_losses", batch_losses)


def test_a_nan_validation_loss_makes_the_run_diverged_with_its_step_and_reason(
    tiny, tmp_path, monkeypatch
):
    exp = tiny()
    nan_at_evaluation(monkeypatch, 3)  # steps 0, 5, then NaN at step 10
    s = run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    assert s["status"] == "diverged" and s["steps"] == 10 and s["diverged_step"] == 10
    assert "non-finite validation loss" in s["diverged_reason"]
    assert s["best_val_loss"] is None and s["best_val_loss_before_divergence"] is not None
    for name in ("summary.json", "history.jsonl"):  # valid JSON: no NaN, no Infinity
        text = (rd.path / name).read_text()
        assert "NaN" not in text and "Infinity" not in text
        [json.loads(line) for line in text.splitlines()] if name.endswith("l") else json.loads(text)
    assert rd.history()[-1]["val_loss"] is None and rd.history()[-1]["diverged"] is True
    assert run(exp, runs_dir=tmp_path, progress=False) == s  # finished: never trained again


def test_a_diverged_run_is_drawn_and_named_but_never_pooled(
    tmp_path, fake_run, monkeypatch, capsys
):
    from lib.engine.config import get_preset

    monkeypatch.setattr(book.chapter, "RUNS_DIR", tmp_path)
    for seed, best in [(1337, 1.95), (42, 1.96)]:
        fake_run(get_preset("cpu", "residualgpt", "AttnOnly", seed), tmp_path, best, escape=100)
    fake_run(
        get_preset("cpu", "residualgpt", "AttnOnly", 123),
        tmp_path,
        3.35,
        status="diverged",
        steps=20,
    )
    ch = book.Chapter.open(
        "10m_asymmetry",
        {
            "scale": "cpu",
            "seed": None,
            "steps": None,
            "runs_dir": None,
            "device": "cpu",
            "compile": False,
        },
        announce=False,
    )
    summ = ch.summaries()
    # the diverged seed is not a result
    assert sorted(summ[summ.config == "AttnOnly"].seed) == [42, 1337]
    table = book.seed_table(results.summaries_of(ch._table_runs()))
    attn = table[table.config == "AttnOnly"].iloc[0]
    assert (
        attn.n == 2
        and attn["mean"] == pytest.approx(1.955)
        and attn["left out"] == "seed 123 (diverged)"
    )
    hist = ch.histories()
    assert set(hist[hist.seed == 123].status) == {"diverged"}  # drawn, as diverged
    ch.report_missing()
    out = capsys.readouterr().out
    assert "AttnOnly/seed123: diverged at step 20 (non-finite training loss (nan))" in out
    assert "left out of every mean and verdict" in out


def test_a_verdict_refuses_a_loss_that_is_not_finite():
    s = pd.DataFrame(
        {
            "config": ["AttnOnly", "FFNOnly"],
            "best_val_loss": [float("nan"), 3.3],
            "escape_step": [None, None],
            "status": ["complete", "complete"],
        }
    )
    with pytest.raises(ValueError, match="pooled"):
        results.on_floor(s, 3.35, 0.1)
    # through a claim the NaN seed is left out, not counted "below the floor"
    c = asymmetry.claim_asymmetry(s.assign(config=["AttnOnly", "FFNOnly"]), 3.35)
    assert c.verdict == "NOT TESTED" and "AttnOnly or FFNOnly runs are missing" in c.why


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda d, exp: write_json_atomic(
                d / "config.json", {**exp.to_dict(), "train": {**exp.to_dict()["train"], "lr": 0.1}}
            ),
            "config.json describes another experiment than its directory: train.lr=0.1",
        ),
        (
            lambda d, exp: (d / "history.jsonl").write_text(
                "".join(line + "\n" for line in (d / "history.jsonl").read_text().splitlines()[:-1])
            ),
            "history.jsonl ends at step 0, ",
        ),
        (lambda d, exp: (d / "config.json").unlink(), "config.json is missing"),
        (lambda d, exp: (d / "summary.json").write_text("{"), "summary.json is not readable JSON"),
        (
            lambda d, exp: (d / "history.jsonl").write_text('{"step": 0}\n{"step": 1'),
            "history.jsonl line 2 is not JSON",
        ),
    ],
)
def test_a_run_whose_files_do_not_match_is_left_out_and_named(tmp_path, fake_run, edit, expected):
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    # evaluations at 0 and 1500 only (an escape at 100 would add one there)
    d = fake_run(exp, tmp_path, 1.95)
    located = [(exp, RunDir(d), "released")]
    assert len(results.summaries_of(located)) == 1 and results.left_out(located) == []
    edit(d, exp)
    assert results.summaries_of(located).empty and results.histories_of(located).empty
    out = results.left_out(located)
    assert out and any(expected in line for line in out) and all(str(d) in line for line in out), (
        out
    )


def test_a_complete_summary_must_reach_the_budget(tmp_path, fake_run):
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, steps=700)  # a history and summary cut at step 700 of 1,500
    assert any(
        "says complete at step 700 of a 1500-step budget" in p for p in RunDir(d).problems(exp)
    )


def test_weights_are_recovered_for_a_finished_run_and_checked_against_its_history(
    tiny, tmp_path, capsys
):
    exp = tiny(max_steps=10)
    run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    files = {
        p.name: p.read_bytes() for p in rd.path.iterdir() if p.is_file() and p.name != "run.lock"
    }
    assert not rd.ckpt.exists() and not (rd.path / "weights.pt").exists()
    recover_weights(rd, exp, progress=False)  # what `export-weights` and `train --keep-weights` do
    # nothing rewritten
    assert {p.name: p.read_bytes() for p in rd.path.iterdir() if p.name in files} == files
    model, _ = results.load_model(rd)
    last = rd.history()[-1]["val_loss"]
    fixed = results.per_batch_val_losses(model, exp, exp.train.eval_batches, "fixed")
    assert fixed.mean() == pytest.approx(last, abs=2e-3)  # fp16 weights
    assert (
        "largest validation-loss difference from the released history 0.00e+00"
        in capsys.readouterr().err
    )


def test_recovered_weights_are_refused_when_the_retrain_does_not_reproduce_the_run(tiny, tmp_path):
    exp = tiny(max_steps=10)
    run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    hist = rd.history()
    hist[-1]["val_loss"] += 0.01  # the released history is not what this code reproduces
    (rd.path / "history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in hist))
    with pytest.raises(RunError, match="does not reproduce the released history"):
        recover_weights(rd, exp, progress=False)
    assert not (rd.path / "weights.pt").exists()


def test_weights_of_another_step_are_refused(tiny, tmp_path):
    exp = tiny(max_steps=10)
    run(exp, runs_dir=tmp_path, until=5, progress=False)  # a prefix: its checkpoint is step 5
    rd = RunDir(run_path(exp, tmp_path))
    with pytest.raises(RunError, match="step 5 of 10"):
        export_weights(rd)
    run(exp, runs_dir=tmp_path, progress=False, keep_weights=True)
    blob = torch.load(rd.path / "weights.pt", weights_only=True)
    blob["step"] = 5  # weights exported mid-run, left in what became a complete run
    torch.save(blob, rd.path / "weights.pt")
    with pytest.raises(RunError, match="holds step 5"):
        results.load_model(rd)


def test_printed_commands_keep_the_weights_the_chapters_load():
    from lib.engine.config import get_preset

    assert plans.command_for(get_preset("cpu", "residualgpt", "FFNOnly", 1337)).endswith(
        "--keep-weights"
    )
    assert "--keep-weights" not in plans.command_for(
        get_preset("cpu", "residualgpt", "FFNOnly", 42)
    )


def test_files_honour_the_umask_and_no_tmp_is_left_in_a_finished_run(tiny, tmp_path):
    exp = tiny(max_steps=10)
    old = os.umask(0o022)
    try:
        run(exp, runs_dir=tmp_path, until=5, progress=False)
        rd = RunDir(run_path(exp, tmp_path))
        (rd.path / ".history.jsonl.abc123.tmp").write_text("half a file a killed writer left")
        run(exp, runs_dir=tmp_path, progress=False)
    finally:
        os.umask(old)
    assert not list(rd.path.rglob("*.tmp"))
    for name in ("config.json", "env.json", "history.jsonl", "summary.json"):
        assert (rd.path / name).stat().st_mode & 0o777 == 0o644, name


def test_a_full_disk_is_named_with_the_file(tmp_path, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(RunError, match=r"disk full: could not write .*summary\.json"):
        write_json_atomic(tmp_path / "summary.json", {"a": 1})
    assert not list(tmp_path.iterdir())  # no half file, no .tmp


def test_only_a_plans_consistent_finished_runs_are_releasable(tmp_path, fake_run):
    from lib.engine.config import get_preset, replace
    from lib.engine.sweep import releasable

    plain = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    good = fake_run(plain, tmp_path, 1.95, escape=100)
    smoke = fake_run(replace(plain, max_steps=2), tmp_path, 3.3)
    running = fake_run(
        get_preset("cpu", "residualgpt", "FFNOnly", 1337),
        tmp_path,
        3.3,
        status="running",
        steps=500,
    )
    aside = fake_run(get_preset("cpu", "residualgpt", "FFNOnly", 42), tmp_path, 3.3)
    aside.rename(aside.with_name(aside.name + ".replaced-20261130"))
    edited = fake_run(
        get_preset("cpu", "residualgpt", "NoResidual", 1337),
        tmp_path,
        3.3,
        config=replace(get_preset("cpu", "residualgpt", "NoResidual", 1337), lr=0.1).to_dict(),
    )
    ok, skipped = releasable(tmp_path)
    assert ok == [good]
    why = "\n".join(skipped)
    for d, reason in [
        (smoke, "in no plan"),
        (running, "status running"),
        (edited, "describes another experiment"),
        (aside.with_name(aside.name + ".replaced-20261130"), "kept aside by --force"),
    ]:
        assert f"{d}: " in why and reason in why.split(f"{d}: ")[1].splitlines()[0], (d, why)


@pytest.mark.parametrize(
    "args, expected",
    [
        (("--steps", "2"), "is in no plan, so it does not belong in the released"),
        (("--force",), "--force in the released"),
        (("--set", "lr=0.1"), "is in no plan, so it does not belong in the released"),
        (("SWEEP", "--steps", "2"), "is in no plan, so it does not belong in the released"),
        (("SWEEP", "--force"), "--force in the released"),
    ],
)
def test_the_cli_refuses_to_retrain_into_the_released_runs(
    args, expected, tmp_path, monkeypatch, capsys
):
    # In-process, with a stand-in for the released runs/ and a trainer that must never be reached: a
    # broken guard fails this test without training anything anywhere.
    import lib.engine.experiment
    from lib import cli

    def never(*a, **k):
        raise AssertionError("trained into the released runs/")

    monkeypatch.setattr(cli, "RUNS_DIR", tmp_path)
    monkeypatch.setattr(lib.engine.experiment, "run", never)
    if args[0] == "SWEEP":
        import lib.engine.sweep

        monkeypatch.setattr(lib.engine.sweep, "train_queue", never)
        base, args = (
            ["sweep", "--plan", "joint_collapse", "--quiet", "--runs-dir", str(tmp_path)],
            args[1:],
        )
    else:
        base = [
            "train",
            "--scale",
            "cpu",
            "--config",
            "AttnOnly",
            "--quiet",
            "--runs-dir",
            str(tmp_path),
        ]
    assert cli.main([*base, *args]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err, err
    with pytest.raises(AssertionError, match="trained into"):  # the explicit flag lets it through
        cli.main([*base, *args, "--into-released"])


@pytest.mark.parametrize("runs_dir", ["runs", "runs/mine", "RUNS_ABS"])
def test_a_chapter_never_writes_into_the_released_runs(runs_dir, monkeypatch):
    from lib.engine.host import ROOT
    from lib.engine.runs import RUNS_DIR

    monkeypatch.chdir(ROOT)
    runs_dir = str(RUNS_DIR) if runs_dir == "RUNS_ABS" else runs_dir
    with pytest.raises(book.ParameterError, match="released runs/"):
        book.Chapter.open("joint_collapse", {"seed": 7, "runs_dir": runs_dir}, announce=False)


def test_a_retrained_seed_of_the_same_budget_replaces_the_released_one_never_counts_twice(
    tmp_path, fake_run, monkeypatch
):
    from lib.engine.config import get_preset

    released, retrained = tmp_path / "runs", tmp_path / "mine"
    monkeypatch.setattr(book.chapter, "RUNS_DIR", released)
    for seed, best in [(1337, 1.95), (42, 1.96), (123, 1.97)]:
        fake_run(get_preset("cpu", "residualgpt", "AttnOnly", seed), released, best, escape=100)
    # same budget
    fake_run(get_preset("cpu", "residualgpt", "AttnOnly", 42), retrained, 1.90, escape=100)
    ch = book.Chapter.open(
        "10m_asymmetry",
        {"scale": "cpu", "seed": 42, "runs_dir": str(retrained), "device": "cpu"},
        announce=False,
    )
    attn = ch.summaries()[lambda s: s.config == "AttnOnly"].sort_values("seed")
    assert list(attn.seed) == [42, 123, 1337]  # three seeds, not four
    assert (
        list(attn.source) == ["retrained", "released", "released"]
        and attn.best_val_loss.iloc[0] == 1.90
    )
    assert book.seed_table(ch.summaries()).set_index("config").loc["AttnOnly", "n"] == 3


def test_a_stalled_tiktoken_download_fails_with_a_clear_message(monkeypatch):
    import time

    import tiktoken

    from lib.engine import data

    # a network that never answers
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: time.sleep(30))
    t0 = time.perf_counter()
    with pytest.raises(data.DataError, match="did not download within 1 s"):
        data.gpt2_encoding(timeout_s=1)
    assert time.perf_counter() - t0 < 10

    def offline(name):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    with pytest.raises(data.DataError, match="no route to host.*put its files in"):
        data.gpt2_encoding()


def test_a_crafted_weights_file_runs_nothing_when_a_chapter_loads_it(tmp_path, fake_run):
    import pickle

    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    torch.save(
        {"experiment": exp.to_dict(), "model": Payload(), "step": exp.train.max_steps},
        d / "weights.pt",
        pickle_module=pickle,
    )
    # weights_only=True refuses the unknown global; the chapter sees the
    # project's run error naming the file
    with pytest.raises(
        RunError, match="weights.pt is truncated, damaged or not a file this project wrote"
    ):
        results.load_model(RunDir(d))
    assert not marker.exists()


def test_a_diverged_run_is_drawn_dotted_and_labelled_as_diverged():
    from lib.book import plots

    hist = pd.DataFrame(
        {
            "step": [0, 5, 10, 0, 5],
            "val_loss": [4.2, 3.0, 2.5, 4.2, 3.9],
            "config": ["AttnOnly"] * 5,
            "seed": [1, 1, 1, 2, 2],
            "source": ["released"] * 5,
            "status": ["complete"] * 3 + ["diverged"] * 2,
        }
    )
    ax = plots.val_curves(hist, 3.35, "t")
    styles = {line.get_label(): line.get_linestyle() for line in ax.lines}
    assert ":" in styles.values() and "-" in styles.values()
    assert "AttnOnly seed 2 diverged at step 5" in styles
    curves = pd.DataFrame(
        {
            "mode": ["runtime"] * 4,
            "gain": [2.0, 2.0, 4.0, 4.0],
            "step": [0, 5, 0, 5],
            "val_loss": [4.2, 3.0, 4.2, 3.9],
            "status": ["complete"] * 2 + ["diverged"] * 2,
        }
    )
    lines = {
        line.get_label(): line.get_linestyle()
        for line in plots.gain_figure(curves, "t").axes[0].lines
    }
    assert lines == {"g = 2": "-", "g = 4 (diverged after step 5)": ":"}


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["export-weights", "NOWHERE"], "config.json is missing: not a run directory"),
        # not an empty report
        (["report", "--plan", "release", "--runs-dir", "NOWHERE/x"], "no such directory"),
    ],
)
def test_cli_input_errors_are_one_line_and_exit_2(argv, expected, tmp_path, capsys):
    from lib import cli

    argv = [a.replace("NOWHERE", str(tmp_path / "nowhere")) for a in argv]
    rc = cli.main(argv)
    out = capsys.readouterr()
    assert expected in out.err + out.out and "Traceback" not in out.err
    assert rc == 2


def test_torchs_own_full_disk_error_is_named_too(tmp_path, monkeypatch):
    import lib.engine.files
    from lib.engine.files import save_torch_atomic

    def unexpected_pos(*a, **k):
        raise RuntimeError("[enforce fail at inline_container.cc:603] . unexpected pos 64 vs 0")

    monkeypatch.setattr(torch, "save", unexpected_pos)
    # what shutil.disk_usage says when full
    monkeypatch.setattr(lib.engine.files, "_disk_full", lambda folder: True)
    with pytest.raises(RunError, match=r"disk full: could not write .*latest\.pt"):
        save_torch_atomic(tmp_path / "latest.pt", {"a": 1})
    # another torch error stays itself
    monkeypatch.setattr(lib.engine.files, "_disk_full", lambda folder: False)
    with pytest.raises(RuntimeError, match="unexpected pos"):
        save_torch_atomic(tmp_path / "latest.pt", {"a": 1})
    assert not list(tmp_path.iterdir())


def test_an_unreadable_summary_is_named_never_trained_over(tmp_path, fake_run, monkeypatch, capsys):
    from lib.engine.config import get_preset
    from lib.engine.experiment import run

    monkeypatch.setattr(book.chapter, "RUNS_DIR", tmp_path)
    exp = get_preset("cpu", "residualgpt", "AttnOnly", 42)
    d = fake_run(exp, tmp_path, 1.95, escape=100)
    (d / "summary.json").write_text("{")
    ch = book.Chapter.open("10m_asymmetry", {"scale": "cpu", "device": "cpu"}, announce=False)
    ch.report_missing()  # no exception: the run is named and left out, not listed as missing
    out = capsys.readouterr().out
    assert (
        f"{d / 'summary.json'} is not readable JSON" in out
        and "--seed 42" not in out.split("left out")[0]
    )
    assert 42 not in set(ch.summaries().seed)
    with pytest.raises(RunError, match="cannot be read; move the run away"):
        run(exp, runs_dir=tmp_path, progress=False)
    assert (d / "summary.json").read_text() == "{"


def test_a_mechanism_table_keeps_each_runs_own_label_when_one_run_is_bad(
    tmp_path, fake_run, capsys
):
    from lib.engine.config import replace

    factors = plans.bundle_factors()
    names = list(factors)
    fake_run(
        factors[names[1]],
        tmp_path,
        2.5,
        escape=300,  # an edited config.json: left out, named
        config=replace(factors[names[1]], lr=0.1).to_dict(),
    )
    fake_run(factors[names[2]], tmp_path, 2.0, escape=100)
    t = bundle.bundle_runs(tmp_path).table.set_index("factor")
    assert t.loc[names[2], "best_val_loss"] == 2.0 and t.loc[names[2], "escape_step"] == 100
    assert t.loc[names[1], "status"] == "not trained" and pd.isna(t.loc[names[1], "best_val_loss"])
    assert "describes another experiment than its directory" in capsys.readouterr().out


def test_diverged_runs_are_named_apart_in_the_escape_map_and_the_bundle():
    grid = pd.DataFrame(
        {
            "config": ["AttnOnly", "AttnOnly"],
            "depth": [6, 12],
            "gain": [1.0, 4.0],
            "escape_step": [50, None],
            "best_val_loss": [2.3, None],
            "status": ["complete", "diverged"],
        }
    )
    text = escape_map.escape_map_reading(grid, 30, 25)
    assert (
        "0 of 1 did not leave the floor" in text and "Diverged: AttnOnly depth 12 gain 4." in text
    )
    t = pd.DataFrame(
        {
            "factor": ["none", "a", "b"],
            "escape_step": [800, None, 100],
            "best_val_loss": [2.6, None, 2.0],
            "status": ["complete", "diverged", "complete"],
        }
    )
    c = bundle.claim_bundle(t, 100)
    assert (
        c.facts["diverged"] == ["a"]
        and c.facts["later"] == []
        and "diverged (no outcome): a" in c.text
    )


def test_a_chapter_recomputes_each_escape_step_against_the_floor_its_verdicts_use(tmp_path):
    # A run records its escape against the whole split's floor; a chapter reads it against its
    # own: the step in its tables and the floor of its verdicts follow one definition (the
    # recorded step is kept beside it).
    from conftest import write_fake_run

    from lib.engine.config import get_preset
    from lib.engine.runs import RunDir

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    located = [
        (exp, RunDir(write_fake_run(exp, tmp_path, best=3.2, escape=100, n_evals=4)), "released")
    ]
    # history: 4.2 at step 0, 3.225 at 100 and 1000 (below its floor 3.35 -
    # 0.1 from step 100), 3.2 at 1500
    recorded = results.summaries_of(located).iloc[0]
    assert recorded.escape_step == recorded.escape_step_recorded == 100
    # escapes at a loss <= 3.21: step 1500
    reread = results.summaries_of(located, floor=3.31).iloc[0]
    assert (reread.escape_step, reread.escape_step_recorded) == (1500, 100)
    # 3.2 > 3.15: never
    assert pd.isna(results.summaries_of(located, floor=3.25).iloc[0].escape_step)


def test_weights_recovery_follows_the_runs_segments_and_refuses_two_dropout_streams(tiny, tmp_path):
    """env.json's segments decide how the retrain is executed: without dropout --fast-dropout
    draws nothing, so a run resumed with it switched is still one run; with dropout the
    two segments drew two streams."""
    exp = tiny(max_steps=10)  # the stand-in's dropout 0
    run(exp, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(exp, tmp_path))
    env = json.loads((rd.path / "env.json").read_text())
    (rd.path / "env.json").write_text(
        json.dumps({**env, "resumed": [{"step": 5, "micro_batch": None, "fast_dropout": True}]})
    )
    assert [s["fast_dropout"] for s in rd.segments()] == [False, True]
    recover_weights(rd, exp, progress=False)
    assert (rd.path / "weights.pt").exists()
    dropped = tiny(max_steps=10, dropout=0.2)
    run(dropped, runs_dir=tmp_path, progress=False)
    rd = RunDir(run_path(dropped, tmp_path))
    env = json.loads((rd.path / "env.json").read_text())
    (rd.path / "env.json").write_text(
        json.dumps({**env, "resumed": [{"step": 5, "micro_batch": None, "fast_dropout": True}]})
    )
    with pytest.raises(
        RunError, match="trained in segments with different --micro-batch or --fast-dropout"
    ):
        recover_weights(rd, dropped, progress=False)
    (rd.path / "env.json").unlink()  # how it was executed is not recorded: refused, not assumed
    with pytest.raises(RunError, match="has no env.json"):
        recover_weights(rd, dropped, progress=False)
    assert not (rd.path / "weights.pt").exists()


# Issue 39, items 2 to 4: a damaged run is left out and named, never pooled, never a crash.


def test_a_config_json_of_the_wrong_type_is_left_out_and_named(tmp_path, fake_run, capsys):
    from conftest import cli

    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100, config=[1, 2])  # valid JSON, no experiment
    located = [(exp, RunDir(d), "released")]
    # was AttributeError: 'list' object has no attribute 'items'
    assert results.summaries_of(located).empty
    assert any(
        f"{d / 'config.json'} describes another experiment" in line
        for line in results.left_out(located)
    )
    r = cli("report", tmp_path=tmp_path)
    assert r.returncode == 0 and f"left out: {d / 'config.json'}" in r.stdout, r.stderr
    r = cli("train", "--scale", "cpu", "--config", "AttnOnly", "--quiet", tmp_path=tmp_path)
    assert (
        r.returncode == 2 and str(d / "config.json") in r.stderr and "Traceback" not in r.stderr
    ), r.stderr


def write_weights(exp, d, edit=lambda w: w):
    """A weights.pt as ``export_weights`` writes it, from the seeded
    initial model, after ``edit``."""
    from lib.engine.experiment import build_model

    weights = {
        k: v.half() if v.is_floating_point() else v
        for k, v in build_model(exp).state_dict().items()
    }
    torch.save(
        {"experiment": exp.to_dict(), "model": edit(weights), "step": exp.train.max_steps},
        d / "weights.pt",
    )


def _reshaped(w):
    return {**w, "transformer.wpe.weight": w["transformer.wpe.weight"][:-1]}


def _without_a_key(w):
    return {k: v for k, v in w.items() if k != "transformer.wpe.weight"}


def _nan(w):
    return {**w, "transformer.wpe.weight": torch.full_like(w["transformer.wpe.weight"], math.nan)}


@pytest.mark.parametrize(
    "edit, expected",
    [
        (_reshaped, "does not fit the model"),
        (_without_a_key, "does not fit the model"),
        (_nan, "non-finite values in transformer.wpe.weight"),
    ],
)
def test_damaged_weights_are_named_and_the_fixed_batch_chapter_leaves_the_run_out(
    tmp_path, fake_run, capsys, edit, expected
):
    from lib.claims import fixed_val_batches
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100)
    write_weights(exp, d)
    results.load_model(RunDir(d))  # the file as lib writes it loads
    write_weights(exp, d, edit)
    # item 3: torch's raw RuntimeError, or NaN weights loaded in silence
    with pytest.raises(RunError) as e:
        results.load_model(RunDir(d))
    assert str(d / "weights.pt") in str(e.value) and expected in str(e.value), e.value
    (d / "weights.pt").write_bytes(b"PK\x03\x04 not a zip archive")
    for damaged in (edit, None):  # the chapter goes on past a damaged file of either kind
        if damaged is not None:
            write_weights(exp, d, damaged)
        noise = fixed_val_batches.val_noise([(exp, RunDir(d), "released")])
        assert noise.empty and f"{d / 'weights.pt'}" in capsys.readouterr().out
        (d / "weights.pt").write_bytes(b"PK\x03\x04 not a zip archive")


def _rows(d):
    return [json.loads(line) for line in (d / "history.jsonl").read_text().splitlines()]


def _write_rows(d, rows):
    (d / "history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _summary(d, **kw):
    write_json_atomic(d / "summary.json", {**json.loads((d / "summary.json").read_text()), **kw})


@pytest.mark.parametrize(
    "edit, expected",
    [
        # a NaN in one row of a complete run: a non-finite loss makes a run diverged, never pooled
        (
            lambda d: _write_rows(
                d, [{**r, "val_loss": math.nan} if i == 1 else r for i, r in enumerate(_rows(d))]
            ),
            "history.jsonl step 100 has val_loss NaN",
        ),
        (
            lambda d: _write_rows(d, [_rows(d)[1], _rows(d)[0], *_rows(d)[2:]]),
            "steps are not increasing (100 then 0)",
        ),
        (lambda d: _summary(d, escape_step=1400), "escape_step 1400 is not the history's (100"),
        (lambda d: _summary(d, best_step=100), "best_step 100 is not the history's (1500)"),
        (
            lambda d: _summary(d, status="partial"),
            "says partial at step 1500, the end of its 1500-step budget",
        ),
        (lambda d: _summary(d, status="diverged"), "history.jsonl is no divergence"),
    ],
)
def test_a_summary_that_contradicts_its_history_is_left_out_never_pooled(
    tmp_path, fake_run, edit, expected
):
    from conftest import cli

    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "FullResidual", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100, n_evals=3)
    located = [(exp, RunDir(d), "released")]
    assert len(results.pooled(results.summaries_of(located))) == 1 and RunDir(d).problems(exp) == []
    edit(d)
    shown = results.SHOWN_AS_PREFIX  # a prefix too: no reader takes it
    # item 4
    assert results.summaries_of(located, shown).empty and results.histories_of(located, shown).empty
    out = RunDir(d).problems(exp)
    assert any(expected in line and str(d) in line for line in out), out
    if RunDir(d).status == "complete":  # and `train` does not take it for a finished run
        r = cli("train", "--scale", "cpu", "--config", "FullResidual", "--quiet", tmp_path=tmp_path)
        assert r.returncode == 2 and "complete but damaged" in r.stderr and expected in r.stderr, (
            r.stderr
        )


# Issue 39, the review's gap A: JSON of the wrong type in a history row or a summary field is a
# problem named with its file, never an exception in RunDir.problems or in a reader after it.


def _drop(d, key):
    write_json_atomic(
        d / "summary.json",
        {k: v for k, v in json.loads((d / "summary.json").read_text()).items() if k != key},
    )


@pytest.mark.parametrize(
    "edit, expected",
    [
        # was AttributeError at hist[-1].get
        (
            lambda d: (d / "history.jsonl").write_text(
                (d / "history.jsonl").read_text() + "[1, 2]\n"
            ),
            "history.jsonl line 4 is not a JSON object",
        ),
        (
            lambda d: (d / "history.jsonl").write_text((d / "history.jsonl").read_text() + "5\n"),
            "history.jsonl line 4 is not a JSON object",
        ),
        # was TypeError
        (lambda d: _summary(d, best_val_loss="x"), "best_val_loss is 'x', not a finite number"),
        (
            lambda d: _write_rows(
                d, [{**r, "val_loss": "4.2"} if i == 0 else r for i, r in enumerate(_rows(d))]
            ),
            # was TypeError in thresholds.escape_step
            "history.jsonl step 0 has val_loss '4.2', not a number",
        ),
        # passed problems, then KeyError in `report`
        (lambda d: _drop(d, "wall_s"), "wall_s is missing"),
        (lambda d: _drop(d, "unigram_floor"), "unigram_floor is missing"),
        (lambda d: _summary(d, steps="1500"), "steps is '1500', not an integer"),
    ],
)
def test_json_of_the_wrong_type_in_a_run_is_left_out_and_named_never_a_crash(
    tmp_path, fake_run, edit, expected
):
    from conftest import cli

    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100, n_evals=3)
    located = [(exp, RunDir(d), "released")]
    assert RunDir(d).problems(exp) == []
    edit(d)
    out = RunDir(d).problems(exp)
    assert any(expected in line and str(d) in line for line in out), out
    assert results.summaries_of(located).empty and results.histories_of(located).empty
    r = cli("report", tmp_path=tmp_path)
    assert r.returncode == 0 and "left out: " in r.stdout and expected in r.stdout, (
        r.stdout + r.stderr
    )
    r = cli("train", "--scale", "cpu", "--config", "AttnOnly", "--quiet", tmp_path=tmp_path)
    assert r.returncode == 2 and expected in r.stderr and "Traceback" not in r.stderr, r.stderr


# Issue 39, the review's gap C: the mechanism chapter leaves a run with damaged weights out, as the
# fixed-batch chapter does, instead of stopping at load_model's RunError.


@pytest.mark.parametrize("damage", ["not a zip", "reshaped", "nan"])
def test_the_mechanism_chapter_leaves_a_run_with_damaged_weights_out(
    tmp_path, fake_run, capsys, damage
):
    from lib.claims import mechanism

    exps = mechanism.probe_experiments()
    bad, good = exps[0], exps[1]
    for exp in (bad, good):
        write_weights(exp, fake_run(exp, tmp_path, 1.95, escape=100))
    d = run_path(bad, tmp_path)
    if damage == "not a zip":
        (d / "weights.pt").write_bytes(b"PK\x03\x04 not a zip archive")
    else:
        write_weights(bad, d, _reshaped if damage == "reshaped" else _nan)
    table, missing = mechanism.probe_table(tmp_path, n_seqs=2)  # was RunError out of load_model
    assert f"left out: {d / 'weights.pt'}" in capsys.readouterr().out
    # the sound run is probed, the damaged one is not
    assert set(table.model) == {mechanism.model_label(good)}
    # damaged, not missing: its command would not mend it
    assert plans.command_for(bad) not in missing


# Issue 39, the review's gap E: a prefix's best loss is its history's too, and a
# divergence row is only ever the last.


def test_a_prefix_whose_best_loss_is_not_its_historys_is_left_out(tmp_path, fake_run):
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100, status="partial", steps=700, n_evals=3)
    located = [(exp, RunDir(d), "released")]
    assert (
        RunDir(d).problems(exp) == []
        and len(results.summaries_of(located, results.SHOWN_AS_PREFIX)) == 1
    )
    _summary(d, best_val_loss=1.5, final_val_loss=1.5)  # a prefix's table shows this number
    assert any(
        "best_val_loss 1.5 is not the history's best 1.95" in p for p in RunDir(d).problems(exp)
    )
    assert results.summaries_of(located, results.SHOWN_AS_PREFIX).empty


def test_a_divergence_row_before_the_last_row_is_a_problem(tmp_path, fake_run):
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 3.35, status="diverged", steps=20, n_evals=3)
    located = [(exp, RunDir(d), "released")]
    assert RunDir(d).problems(exp) == []
    rows = _rows(d)
    _write_rows(
        d, [rows[0], {**rows[1], "val_loss": None, "diverged": True, "reason": "nan"}, rows[2]]
    )
    assert any(
        "divergence row at step 10, before its last row" in p for p in RunDir(d).problems(exp)
    )
    assert results.summaries_of(located).empty and results.histories_of(located).empty


# Issue 39, the review's gap F: env.json is read by the readers of a run's
# segments, so its shape is checked too.


@pytest.mark.parametrize(
    "text, expected",
    [
        ("{", "env.json is not readable JSON"),
        # was AttributeError in RunDir.segments and lib.book.costs
        ("[1, 2]", "env.json is not a JSON object"),
        (
            '{"device": "cpu", "resumed": 5}',
            "env.json has a 'resumed' that is not a list of objects",
        ),
        ('{"device": "cpu", "resumed": [{"step": "x"}]}', "env.json has a segment whose step"),
    ],
)
def test_an_env_json_of_the_wrong_shape_is_left_out_and_named(tmp_path, fake_run, text, expected):
    from lib.book import costs
    from lib.claims import paper_shape
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100)
    located = [(exp, RunDir(d), "released")]
    assert len(costs.run_costs(tmp_path)) == 1
    (d / "env.json").write_text(text)
    assert any(expected in p and str(d) in p for p in RunDir(d).problems(exp)), RunDir(d).problems(
        exp
    )
    assert results.summaries_of(located).empty
    table = costs.run_costs(tmp_path)  # was a RunError or AttributeError out of the costs table
    assert table.empty and any(expected in line for line in table.attrs["left_out"])
    with pytest.raises(RunError, match="env.json"):  # never an AttributeError or a KeyError
        paper_shape.execution(RunDir(d))


def test_the_paper_shape_chapter_goes_on_past_a_run_whose_env_json_is_damaged(tmp_path, fake_run):
    from lib.claims import paper_shape

    exps = plans.paper_10m_prefix()
    good, bad = exps[0], exps[1]
    for exp in (good, bad):
        _summary(
            fake_run(exp, tmp_path, 3.0, status="partial", steps=100, n_evals=3),
            impl=exp.impl,
            scale=exp.scale,
        )
    (run_path(bad, tmp_path) / "env.json").write_text("[1, 2]")
    prefix = paper_shape.paper_shape_prefix(tmp_path)  # was AttributeError in RunDir.segments
    assert list(prefix.summaries.config) == [good.config_name] and set(
        prefix.summaries.execution
    ) == {"whole batch"}


# Issue 39, the review's gap C: weights.pt is checked by RunDir.problems, the one function every
# reader asks, once per version of the file.


@pytest.mark.parametrize(
    "edit, expected",
    [
        (_reshaped, "transformer.wpe.weight is [127, 128], not [128, 128]"),
        (_without_a_key, "missing transformer.wpe.weight"),
        (_nan, "non-finite values in transformer.wpe.weight"),
        (lambda w: {**w, "extra": torch.zeros(1)}, "unexpected extra"),
        (lambda w: {**w, "transformer.wpe.weight": 5}, "transformer.wpe.weight is no tensor"),
    ],
)
def test_damaged_weights_are_a_problem_of_the_run_for_every_reader(
    tmp_path, fake_run, edit, expected
):
    from conftest import cli

    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100)
    located = [(exp, RunDir(d), "released")]
    write_weights(exp, d)
    assert RunDir(d).problems(exp) == [] and len(results.summaries_of(located)) == 1
    write_weights(exp, d, edit)
    out = RunDir(d).problems(exp)
    # was []: only load_model looked
    assert any(expected in p and str(d / "weights.pt") in p for p in out), out
    assert results.summaries_of(located).empty
    r = cli("report", tmp_path=tmp_path)
    assert (
        r.returncode == 0 and f"left out: {d / 'weights.pt'}" in r.stdout and expected in r.stdout
    ), r.stdout
    r = cli("train", "--scale", "cpu", "--config", "AttnOnly", "--quiet", tmp_path=tmp_path)
    assert r.returncode == 2 and "complete but damaged" in r.stderr and expected in r.stderr, (
        r.stderr
    )


def test_the_weights_check_reads_each_version_of_the_file_once(tmp_path, fake_run, monkeypatch):
    import lib.engine.runs
    from lib.engine.config import get_preset

    exp = get_preset("cpu", "residualgpt", "AttnOnly", 1337)
    d = fake_run(exp, tmp_path, 1.95, escape=100)
    write_weights(exp, d)
    loads, real = [], lib.engine.runs.load_torch_file
    monkeypatch.setattr(lib.engine.runs, "load_torch_file", lambda *a: loads.append(a) or real(*a))
    for _ in range(3):
        assert RunDir(d).problems(exp) == []
    assert len(loads) == 1
    write_weights(exp, d, _reshaped)  # another file: another size, checked again
    assert any("does not fit the model" in p for p in RunDir(d).problems(exp)) and len(loads) == 2
    # the same file against another summary: checked again, as the step differs
    _summary(d, steps=700)
    assert any(
        "holds step 1500, but the run is complete at step 700" in p for p in RunDir(d).problems(exp)
    )


def test_the_paper_shape_chapter_picks_its_run_among_sound_ones_only(tmp_path, fake_run):
    # issue 39, the review's gap A, in the one reader that compared two
    # summaries before asking problems
    from lib.claims import paper_shape

    prefix = plans.paper_10m_prefix()[0]
    whole = next(
        w
        for w in plans.paper_10m_whole(prefix.seed)
        if (w.impl, w.config_name, w.train.schedule)
        == (prefix.impl, prefix.config_name, prefix.train.schedule)
    )
    p = fake_run(prefix, tmp_path, 3.0, status="partial", steps=100, n_evals=3)
    w = fake_run(whole, tmp_path, 2.9, status="partial", steps=200, n_evals=3)
    assert paper_shape.furthest(prefix, tmp_path)[0] == whole  # the whole run has trained further
    _summary(w, steps="200")  # was TypeError: '>' not supported between str and int
    assert paper_shape.furthest(prefix, tmp_path)[0] == prefix
    _summary(w, steps=200)
    # was AttributeError: 'list' object has no attribute 'get'
    (p / "summary.json").write_text("[1, 2]")
    assert paper_shape.furthest(prefix, tmp_path)[0] == whole
