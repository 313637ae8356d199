"""Every bad input on the command line and at the loaders is refused in one line, before anything is written
(issue 25: one test per item, each of which failed before)."""
import pytest
import torch

from lib import cli
from lib.config import get_preset

TINY = ["--set", "n_layer=1", "--set", "n_embd=16", "--set", "n_head=2", "--set", "block_size=16",
        "--set", "batch_size=2", "--set", "eval_batches=1", "--set", "train_eval_batches=1"]


def train(tmp_path, *extra, config="AttnOnly", steps="2"):
    return ["train", "--scale", "cpu", "--config", config, "--steps", steps, "--quiet", "--runs-dir", str(tmp_path),
            *extra]


def refused(argv, capsys, *expected):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err  # one line, no traceback
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("extra, expected", [
    (["--set", "scale=10M"], "given by --scale"),            # 1: would train the stand-in labelled 10M
    (["--set", "dataset=openwebtext"], "given by --scale"),
    (["--seed", "1", "--set", "seed=5"], "given by --seed"),  # 1: conflicts, never resolved silently
    (["--set", "max_steps=7"], "given by --steps"),
    (["--set", "impl=nanogpt"], "given by --impl"),
    (["--set", "attn_res=false"], "given by --config"),
    (["--set", "mixer=local"], "given by --mixer"),          # 2: was a TypeError
    (["--set", "precision=bf16"], "given by --precision"),
    (["--eval-every", "5", "--set", "eval_interval=10"], "both given"),
])
def test_a_field_with_its_own_flag_is_no_set_key(tmp_path, capsys, extra, expected):
    refused(train(tmp_path, *extra), capsys, expected)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("extra, expected", [
    (["--set", "block_size=0"], "block_size must be >= 1"),  # 2: was an IndexError after files were written
    (["--set", "n_layer=0"], "n_layer must be >= 1"),
    (["--set", "dropout=2"], "dropout must be in [0, 1)"),   # 4: left a directory with run.lock
    (["--set", "lr=-1"], "lr must be > 0"),
    (["--set", "min_lr=-1"], "min_lr must be >= 0"),
    (["--set", "beta2=1.5"], "beta2 must be in [0, 1)"),
    (["--set", "attn_kernel=flash"], "valid: sdpa, manual"),
    (["--until", "15", "--eval-every", "10"], "positive multiple of the evaluation interval"),  # 4
    (["--micro-batch", "3"], "must divide the batch size 32"),
    (["--seed", "-1"], "seed must be a non-negative integer"),  # 8: the chapters' rule
])
def test_bad_values_are_refused_before_anything_is_written(tmp_path, capsys, extra, expected):
    refused(train(tmp_path, *extra, steps="20"), capsys, expected)
    assert not any(tmp_path.iterdir())


def test_impl_override_in_replace_names_the_valid_implementations():
    from lib.config import ConfigError, replace
    with pytest.raises(ConfigError, match="valid: residualgpt, nanogpt"):  # 2: was a KeyError
        replace(get_preset("cpu"), impl="bogus")


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_cuda_on_a_machine_without_it_is_one_line(tmp_path, capsys):
    refused(train(tmp_path, "--device", "cuda"), capsys, "no CUDA device", "valid here: auto, cpu")  # 3
    assert not any(tmp_path.iterdir())


def test_report_on_a_missing_directory_is_an_error(tmp_path, capsys):
    refused(["report", "--runs-dir", str(tmp_path / "nonexistent")], capsys, "no such directory")  # 7


def test_a_complete_run_with_a_truncated_history_is_named_not_called_complete(tmp_path, capsys):
    argv = train(tmp_path, *TINY, "--set", "eval_interval=1")
    assert cli.main(argv) == 0  # 6
    capsys.readouterr()
    hist = next(tmp_path.rglob("history.jsonl"))
    hist.write_text(hist.read_text().splitlines(True)[0])
    refused(argv, capsys, "complete but damaged", "history.jsonl ends at step 0")


def test_a_damaged_weights_file_is_the_projects_run_error_naming_it(tmp_path):
    from lib.files import RunError
    from lib.results import load_model
    from lib.runs import RunDir
    rd = RunDir(tmp_path)
    (tmp_path / "weights.pt").write_bytes(b"PK\x03\x04 not a zip archive")  # 5
    with pytest.raises(RunError) as e:
        load_model(rd)
    assert str(tmp_path / "weights.pt") in str(e.value) and "weights_only" not in str(e.value)
