"""Every bad input on the command line and at the loaders is refused in one line, before anything is
written (issue 25: one test per item, each of which failed before)."""

import pytest
import torch

from lib import cli
from lib.engine.config import get_preset

TINY = [
    "--set",
    "n_layer=1",
    "--set",
    "n_embd=16",
    "--set",
    "n_head=2",
    "--set",
    "block_size=16",
    "--set",
    "batch_size=2",
    "--set",
    "eval_batches=1",
    "--set",
    "train_eval_batches=1",
]


def train(tmp_path, *extra, config="AttnOnly", steps="2"):
    return [
        "train",
        "--scale",
        "cpu",
        "--config",
        config,
        "--steps",
        steps,
        "--quiet",
        "--runs-dir",
        str(tmp_path),
        *extra,
    ]


def refused(argv, capsys, *expected):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err  # one line, no traceback
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "extra, expected",
    [
        # 1: would train the stand-in labelled 10M
        (["--set", "scale=10M"], "given by --scale"),
        (["--set", "dataset=openwebtext"], "given by --scale"),
        # 1: conflicts, never resolved silently
        (["--seed", "1", "--set", "seed=5"], "given by --seed"),
        (["--set", "max_steps=7"], "given by --steps"),
        (["--set", "impl=nanogpt"], "given by --impl"),
        (["--set", "attn_res=false"], "given by --config"),
        (["--set", "mixer=local"], "given by --mixer"),  # 2: was a TypeError
        (["--set", "precision=bf16"], "given by --precision"),
        (["--eval-every", "5", "--set", "eval_interval=10"], "both given"),
    ],
)
def test_a_field_with_its_own_flag_is_no_set_key(tmp_path, capsys, extra, expected):
    refused(train(tmp_path, *extra), capsys, expected)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "extra, expected",
    [
        # 2: was an IndexError after files were written
        (["--set", "block_size=0"], "block_size must be >= 1"),
        (["--set", "n_layer=0"], "n_layer must be >= 1"),
        (["--set", "dropout=2"], "dropout must be in [0, 1)"),  # 4: left a directory with run.lock
        (["--set", "lr=-1"], "lr must be > 0"),
        (["--set", "min_lr=-1"], "min_lr must be >= 0"),
        (["--set", "beta2=1.5"], "beta2 must be in [0, 1)"),
        (["--set", "attn_kernel=flash"], "valid: sdpa, manual"),
        # 4
        (
            ["--until", "15", "--eval-every", "10"],
            "positive multiple of the evaluation interval",
        ),
        (["--micro-batch", "3"], "must divide the batch size 32"),
        (["--seed", "-1"], "seed must be a non-negative integer"),  # 8: the chapters' rule
    ],
)
def test_bad_values_are_refused_before_anything_is_written(tmp_path, capsys, extra, expected):
    refused(train(tmp_path, *extra, steps="20"), capsys, expected)
    assert not any(tmp_path.iterdir())


def test_impl_override_in_replace_names_the_valid_implementations():
    from lib.engine.config import ConfigError, replace

    with pytest.raises(ConfigError, match="valid: residualgpt, nanogpt"):  # 2: was a KeyError
        replace(get_preset("cpu"), impl="bogus")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_on_a_machine_without_it_is_one_line(tmp_path, capsys):
    # 3
    refused(train(tmp_path, "--device", "cuda"), capsys, "no CUDA device", "valid here: auto, cpu")
    assert not any(tmp_path.iterdir())


def test_report_on_a_missing_directory_is_an_error(tmp_path, capsys):
    # 7
    refused(["report", "--runs-dir", str(tmp_path / "nonexistent")], capsys, "no such directory")


def test_a_complete_run_with_a_truncated_history_is_named_not_called_complete(tmp_path, capsys):
    argv = train(tmp_path, *TINY, "--set", "eval_interval=1")
    assert cli.main(argv) == 0  # 6
    capsys.readouterr()
    hist = next(tmp_path.rglob("history.jsonl"))
    hist.write_text(hist.read_text().splitlines(True)[0])
    refused(argv, capsys, "complete but damaged", "history.jsonl ends at step 0")


def test_a_damaged_weights_file_is_the_projects_run_error_naming_it(tmp_path):
    from lib.engine.files import RunError
    from lib.engine.results import load_model
    from lib.engine.runs import RunDir

    rd = RunDir(tmp_path)
    (tmp_path / "weights.pt").write_bytes(b"PK\x03\x04 not a zip archive")  # 5
    with pytest.raises(RunError) as e:
        load_model(rd)
    assert str(tmp_path / "weights.pt") in str(e.value) and "weights_only" not in str(e.value)


# Issue 39: a refusal leaves the file system exactly as it was; a damaged
# run is left out, never pooled.


def listing(root):
    """Every path under ``root`` (files and folders), to compare
    before and after a refused command."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def no_training(monkeypatch):
    """A trainer that must never be reached: a refusal that fails fails the test without training
    anything (a block_size of 100,000 would take the machine's memory)."""
    from lib.engine.train import Trainer

    def never(*a, **k):
        raise AssertionError("trained: the command was not refused")

    monkeypatch.setattr(Trainer, "fit", never)


@pytest.mark.parametrize("how", ["inside", "symlink", "dotdot"])
def test_a_folder_inside_the_released_runs_is_refused_naming_runs_itself(
    tmp_path, monkeypatch, capsys, how, no_training
):
    released = tmp_path / "runs"
    (released / "cpu").mkdir(parents=True)
    (tmp_path / "link").symlink_to(released / "cpu")
    # a stand-in for the released runs/: the real one is never read
    monkeypatch.setattr(cli, "RUNS_DIR", released)
    where = {
        "inside": released / "cpu",
        "symlink": tmp_path / "link",
        "dotdot": released / "cpu" / ".." / "cpu",
    }[how]
    before = listing(tmp_path)
    # 1
    for argv in (
        ["train", "--scale", "cpu", "--config", "AttnOnly", "--until", "100", "--quiet"],
        ["sweep", "--plan", "release", "--dry-run"],
        ["report"],
    ):
        refused(
            [*argv, "--runs-dir", str(where)],
            capsys,
            "inside the released",
            f"--runs-dir {released}",
        )
    assert listing(tmp_path) == before


@pytest.mark.parametrize("value", ["1e400", "inf", "-inf", "nan", "NaN", "Infinity"])
@pytest.mark.parametrize("key", ["lr", "min_lr", "weight_decay", "dropout"])
def test_every_float_field_refuses_a_value_that_is_not_finite(
    tmp_path, capsys, key, value, no_training
):
    # 7
    refused(train(tmp_path, "--set", f"{key}={value}"), capsys, f"{key} must be a finite number")
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    "gpus, available, count, expected",
    [
        ("0,1", False, 0, "no CUDA device"),  # 8: trained on the CPU, each worker a "GPU"
        ("0,1", True, 1, "has 1 CUDA device"),
    ],
)
def test_gpus_are_refused_where_the_machine_does_not_have_them(
    tmp_path, monkeypatch, capsys, gpus, available, count, expected
):
    import subprocess

    import lib.engine.sweep

    def never(*a, **k):
        raise AssertionError("a worker was started")

    monkeypatch.setattr(lib.engine.sweep.subprocess, "Popen", never)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: available)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    assert lib.engine.sweep.subprocess is subprocess
    refused(
        ["sweep", "--scale", "cpu", "--gpus", gpus, "--quiet", "--runs-dir", str(tmp_path)],
        capsys,
        expected,
        f"--gpus {gpus}",
    )
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--set", "vocab_size=10"], "vocabulary 65 but the model expects 10"),  # 9: left run.lock
        # 9: torch's overflow
        (["--seed", "99999999999999999999"], "seed must be a non-negative integer up to 9,223"),
        # 10: longer than the val split
        (["--set", "block_size=200000"], "block_size=200000 does not fit"),
    ],
)
def test_refusals_at_the_data_write_nothing(tmp_path, capsys, extra, expected, no_training):
    refused(train(tmp_path, *extra), capsys, expected)
    assert listing(tmp_path) == []


def test_a_block_size_whose_step_cannot_fit_in_memory_is_refused(
    tmp_path, capsys, monkeypatch, no_training
):
    import lib.engine.experiment

    # 8 GiB, so the test says the same on any machine; block_size=100000 reached 9.6
    # GB before anything refused it
    monkeypatch.setattr(lib.engine.experiment, "memory_bytes", lambda device: 8 * 2**30)
    # 10
    line = refused(
        train(tmp_path, "--set", "block_size=100000"), capsys, "block_size=100000", "memory"
    )
    assert "8.0 GiB" in line
    assert listing(tmp_path) == []
    # the preset's own shape fits in the same 8 GiB
    from lib.engine.experiment import check_fits

    check_fits(get_preset("cpu"), "cpu")


@pytest.mark.parametrize(
    "scale, how, expected",
    [
        ("cpu", "missing", "TinyShakespeare not found"),
        # 9: created data/tinyshakespeare/
        (
            "cpu",
            "empty",
            "TINYSHAKESPEARE_PATH is set but empty",
        ),
        ("cpu-bpe", "tokenizer", "tiktoken"),
    ],
)
def test_a_data_or_tokenizer_error_leaves_nothing_behind(
    tmp_path, capsys, monkeypatch, no_training, scale, how, expected
):
    import urllib.request

    from lib.engine import data

    def offline(*a, **k):  # no download is tried from a test
        raise OSError("no network in the tests")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    monkeypatch.setattr(data, "_CACHE", {})
    monkeypatch.setattr(data, "DATA_DIR", tmp_path / "data")
    runs = tmp_path / "runs"
    runs.mkdir()
    if how == "missing":
        monkeypatch.setenv("TINYSHAKESPEARE_PATH", str(tmp_path / "nowhere.txt"))
    elif how == "empty":
        monkeypatch.setenv("TINYSHAKESPEARE_PATH", "")
    else:

        def offline(timeout_s=None):
            raise data.DataError("could not load tiktoken's gpt2 encoding (offline)")

        monkeypatch.setattr(data, "gpt2_encoding", offline)
    before = listing(tmp_path)
    refused(
        [
            "train",
            "--scale",
            scale,
            "--config",
            "AttnOnly",
            "--steps",
            "2",
            "--quiet",
            "--runs-dir",
            str(runs),
        ],
        capsys,
        expected,
    )
    assert listing(tmp_path) == before


def test_a_failed_download_leaves_no_data_folder(tmp_path, monkeypatch):
    import urllib.request

    from lib.engine import data

    monkeypatch.delenv("TINYSHAKESPEARE_PATH", raising=False)
    monkeypatch.setattr(data, "DATA_DIR", tmp_path / "data")

    def offline(*a, **k):
        raise OSError("no route to host")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(data.DataError, match="could not download"):
        data.shakespeare_path()
    assert listing(tmp_path) == []


def test_a_path_component_too_long_for_the_file_system_writes_nothing(
    tmp_path, capsys, no_training
):
    runs = tmp_path / "new" / ("x" * 300)
    refused(train(runs), capsys, "longer than", "x" * 20)  # 9: left its parent directory
    assert listing(tmp_path) == []


@pytest.mark.parametrize(
    "command",
    [
        ["report"],
        ["train", "--scale", "cpu", "--config", "AttnOnly"],
        ["sweep", "--plan", "release", "--dry-run"],
    ],
)
def test_an_empty_runs_dir_is_refused_not_read_as_the_current_directory(
    tmp_path, capsys, monkeypatch, command, no_training
):
    monkeypatch.chdir(tmp_path)
    # 9: report read the current directory
    refused([*command, "--runs-dir", ""], capsys, "--runs-dir is empty")
    assert listing(tmp_path) == []


def test_the_message_for_a_damaged_run_names_what_lists_it(tmp_path, capsys):
    # an off-plan run: no plan's report walks it
    argv = train(tmp_path, *TINY, "--set", "eval_interval=1")
    assert cli.main(argv) == 0
    capsys.readouterr()
    hist = next(tmp_path.rglob("history.jsonl"))
    hist.write_text(hist.read_text().splitlines(True)[0])
    line = refused(argv, capsys, "complete but damaged", "history.jsonl ends at step 0")  # 11
    # whatever the message points to must list the run: `report` walks a plan's runs, not this one
    assert "report lists it" not in line
    assert str(hist.parent) in line


def test_ctrl_c_during_training_is_one_line_saying_where_the_run_stands(
    tmp_path, capsys, monkeypatch
):
    from lib.engine.train import Trainer

    real, calls = Trainer.train_step, {"n": 0}

    def interrupted(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self)

    monkeypatch.setattr(Trainer, "train_step", interrupted)
    argv = train(tmp_path, *TINY, "--set", "eval_interval=1", steps="4")
    rc = cli.main(argv)  # 11: was a KeyboardInterrupt traceback
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 130 and len(lines) == 1 and "Traceback" not in err, err
    assert (
        "interrupted" in lines[0]
        and "at step 2 (partial)" in lines[0]
        and "run the same command again" in lines[0]
    )
    monkeypatch.setattr(Trainer, "train_step", real)
    assert cli.main(argv) == 0  # and it resumes


@pytest.mark.parametrize("dirty", [True, False])
def test_training_into_the_released_runs_from_uncommitted_lib_is_refused(
    tmp_path, monkeypatch, capsys, dirty, no_training
):
    # a run trained from a dirty lib/ can never be released (tests/test_released.py):
    # refused before it costs hours
    import lib.engine.host

    released = tmp_path / "runs"
    released.mkdir()
    # a stand-in for the released runs/: the real one is never read
    monkeypatch.setattr(cli, "RUNS_DIR", released)
    monkeypatch.setattr(
        lib.engine.host, "git_state", lambda: {"git_commit": "0" * 40, "git_dirty_lib": dirty}
    )
    argv = [
        "train",
        "--scale",
        "cpu",
        "--config",
        "AttnOnly",
        "--until",
        "100",
        "--quiet",
        "--runs-dir",
        str(released),
    ]
    if dirty:
        refused(argv, capsys, "lib/ has uncommitted changes")
        assert listing(tmp_path) == ["runs"]  # the stand-in's own folder, and nothing written in it
    else:  # clean: the guard lets it through, to the trainer (which no_training stops)
        with pytest.raises(AssertionError, match="not refused"):
            cli.main(argv)


@pytest.mark.parametrize("text", ["{", "[1, 2]", '{"status": "bogus"}'])
@pytest.mark.parametrize("force", [False, True])
def test_train_over_an_unreadable_summary_is_refused_before_anything_is_written(
    tmp_path, capsys, fake_run, no_training, text, force
):
    # issue 39, the review's gap G: the refusal came from inside the run
    # lock, after run.lock was created
    d = fake_run(get_preset("cpu", "residualgpt", "AttnOnly", 1337), tmp_path, 1.95, escape=100)
    (d / "summary.json").write_text(text)
    before = listing(tmp_path)
    refused(
        [
            "train",
            "--scale",
            "cpu",
            "--config",
            "AttnOnly",
            "--quiet",
            "--runs-dir",
            str(tmp_path),
            *(["--force"] if force else []),
        ],
        capsys,
        "summary.json cannot be read",
    )
    assert listing(tmp_path) == before and (d / "summary.json").read_text() == text


@pytest.mark.parametrize(
    "gib, extra, expected",
    [
        (
            24,
            ["--impl", "nanogpt", "--set", "block_size=20000"],
            "4 heads' 20000 x 20000 attention scores",
        ),
        (
            8,
            ["--impl", "nanogpt", "--set", "block_size=2000"],
            "4 heads' 2000 x 2000 attention scores",
        ),
        (
            8,
            ["--set", "dropout=0.1", "--fast-dropout", "--set", "block_size=2000"],
            "2000 x 2000 attention scores",
        ),
    ],
)
def test_the_attention_scores_of_a_kernel_that_writes_them_out_count_against_memory(
    tmp_path, capsys, monkeypatch, no_training, gib, extra, expected
):
    # issue 39, the review's gap D: check_fits counted only the FFN's activations, and nanoGPT's
    # manual kernel (and sdpa_math under --fast-dropout) keeps a (batch, n_head, T, T) tensor per
    # layer: 1,144 GiB at block_size=20000
    import lib.engine.experiment

    monkeypatch.setattr(lib.engine.experiment, "memory_bytes", lambda device: gib * 2**30)
    line = refused(train(tmp_path, *extra), capsys, "memory", expected)
    assert f"{gib}.0 GiB" in line
    assert listing(tmp_path) == []
    # the fused kernel at the same shape, and each implementation's preset
    # shape, fit in the same memory
    from lib.engine.config import replace
    from lib.engine.experiment import check_fits

    check_fits(replace(get_preset("cpu"), block_size=2000), "cpu")
    check_fits(get_preset("cpu", "nanogpt"), "cpu")
    check_fits(replace(get_preset("cpu"), dropout=0.1), "cpu", fast_dropout=True)
