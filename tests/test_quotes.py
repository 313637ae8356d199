"""Every epigraph the book attributes to the paper is the paper's own text: a reader takes a quotation as the
author's words, so one the paper does not contain (or a paraphrase in quotation marks) is an error, not a style
choice. Checked against the paper's text in ../shared/paper (beside the project in CI and here)."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "paper" / "partial-residual-ablations-2608.14689.md"
# The paper's markdown spells symbols in LaTeX, often beside their rendered character (``±\pm``); the book prints
# the character. Quotation marks and dashes differ in typography only.
LATEX = {r"\approx": "≈", r"\times": "×", r"\in": "∈", r"\pm": "±", r"\sim": "∼", "&amp;": "&", r"\%": "%"}


def normalise(text: str) -> str:
    for tex, char in LATEX.items():
        text = text.replace(char + tex, char).replace(tex, char)
    text = re.sub(r"[$\"“”‘’'*]", "", text).replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", text).strip().lower()


def pieces(quote: str) -> list[str]:
    """The quoted runs of text: an ellipsis or a bracketed insertion [...] is where the book left words out."""
    return [p.strip(" .,;:") for p in re.split(r"\.\.\.|…|\[[^\]]*\]", normalise(quote)) if len(p.strip(" .,;:")) > 3]


def epigraphs():
    """(page, attribution, quote) for every ``{epigraph}`` of the book that names the paper."""
    for f in sorted((ROOT / "book").glob("*")):
        if f.suffix == ".ipynb":
            text = "\n\n".join("".join(c["source"]) for c in json.loads(f.read_text())["cells"]
                               if c["cell_type"] == "markdown")
        elif f.suffix == ".md":
            text = f.read_text()
        else:
            continue
        for m in re.finditer(r":::\{epigraph\}(.*?)\n:::", text, re.S):
            quote, _, attribution = m.group(1).strip().rpartition("\n\n")
            if "the paper" in attribution:
                yield f.name, attribution.strip(), quote


def test_the_book_quotes_the_paper_in_epigraphs():
    assert len(list(epigraphs())) >= 10  # the pattern finds the book's epigraphs; a test over none checks nothing


@pytest.mark.skipif(not PAPER.exists(), reason=f"the paper's text is not at {PAPER}")
def test_every_epigraph_from_the_paper_is_in_the_paper():
    paper = normalise(PAPER.read_text())
    wrong = [(page, who, p[:80]) for page, who, quote in epigraphs() for p in pieces(quote) if p not in paper]
    assert wrong == []


def test_a_quotation_not_in_the_text_is_caught():
    text = normalise("Removing the skip gives a 2.27$\\times$ degradation, $\\approx$3.35 (±\\pm 0.002).")
    assert all(p in text for p in pieces('"Removing the skip gives a 2.27× degradation, ≈3.35 (± 0.002)."'))
    assert all(p in text for p in pieces('"Removing the skip ... ≈3.35"'))
    assert not all(p in text for p in pieces('"Removing the skip gives a 3× degradation"'))
