"""The chapters' prose is written for a researcher (issue 37 item 5): code names stay
in code cells and in the reproducibility chapter, and the book states spread one
way, where a reader looks for it."""

import re
from pathlib import Path

import nbformat

BOOK = Path(__file__).parents[1] / "book"
CHAPTERS = (
    "joint_collapse",
    "gain_confound",
    "fixed_val_batches",
    "10m_asymmetry",
    "124m_sweep",
    "mechanism",
    "escape_and_bundle",
    "what_holds",
)
# A plan command, a dotted library name (lib.engine.plans.X, plans.AUTHOR_VALUES) or a snake_case
# name in backticks; file paths (lib/engine/gain.py, the author's notebooks) and the preset names
# (`cpu`, `cpu-bpe`) are not code names.
CODE = re.compile(r"--plan \w+|`(?:lib|plans|plots)\.\w+|`[a-z][a-z0-9]*(?:_[a-z0-9]+)+`")
# The author's code, quoted as evidence where the book audits it (the 124M
# split), is the paper's, not ours.
AUTHORS = {"`train_count`"}
# included code and cross-references
SKIP = re.compile(r"```.*?```|\{doc\}`[^`]*`|\{numref\}`[^`]*`", re.S)


def _prose(name: str) -> list[tuple[int, str]]:
    nb = nbformat.read(BOOK / f"{name}.ipynb", as_version=4)
    return [
        (i, SKIP.sub("", c.source)) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
    ]


def test_no_chapter_prose_names_a_plan_function_or_field():
    found = [
        (name, i, m.group(0))
        for name in CHAPTERS
        for i, text in _prose(name)
        for m in CODE.finditer(text)
        if m.group(0) not in AUTHORS
    ]
    assert not found, found
    # the check can fail
    assert CODE.search("trained by `python -m lib sweep --plan author_values`")
    assert CODE.search("(`plans.AUTHOR_VALUES`)") and CODE.search("`max_spread_from_step_200` is")
    assert not CODE.search("(`lib/engine/gain.py`)") and not CODE.search("the `cpu-bpe` stand-in")


def test_each_chapter_opens_in_plain_words_before_the_papers_quote():
    for name in CHAPTERS[:-1]:
        first = _prose(name)[0][1].split(":::{epigraph}")[0]
        opening = first.split("\n", 1)[1].strip()  # below the title
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", opening) if s]
        assert 3 <= len(sentences) <= 6, (name, len(sentences))
        # its claim; our runs
        assert "the paper" in opening.lower() and re.search(r"\bwe\b", opening, re.I), name


def test_the_uncertainty_convention_is_stated_where_a_reader_looks():
    repro = " ".join((BOOK / "reproducibility.md").read_text().split())
    assert "## How this book states uncertainty" in repro
    assert '"lowest-highest (n=N)"' in repro and "standard error" in repro
    intro = " ".join((BOOK / "intro.md").read_text().split())
    assert (
        "Spread is stated one way throughout" in intro
        and "{doc}`reproducibility` says why" in intro
    )
