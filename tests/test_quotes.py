"""Every epigraph the book attributes to the paper is the paper's own text: a reader takes a
quotation as the author's words, so one the paper does not contain (or a paraphrase in quotation
marks) is an error, not a style choice. Checked against the paper's text in ../shared/paper
(beside the project in CI and here)."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT.parent / "shared" / "paper" / "partial-residual-ablations-2608.14689.md"
# The paper's markdown spells symbols in LaTeX, often beside their rendered character (``±\pm``);
# the book prints the character. Quotation marks and dashes differ in typography only.
LATEX = {
    r"\approx": "≈",
    r"\times": "×",
    r"\in": "∈",
    r"\pm": "±",
    r"\sim": "∼",
    "&amp;": "&",
    r"\%": "%",
}


def normalise(text: str) -> str:
    for tex, char in LATEX.items():
        text = text.replace(char + tex, char).replace(tex, char)
    text = re.sub(r"[$\"“”‘’'*]", "", text).replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", text).strip().lower()


def pieces(quote: str) -> list[str]:
    """The quoted runs of text: an ellipsis or a bracketed insertion [...] is
    where the book left words out."""
    return [
        p.strip(" .,;:")
        for p in re.split(r"\.\.\.|…|\[[^\]]*\]", normalise(quote))
        if len(p.strip(" .,;:")) > 3
    ]


def epigraphs():
    """(page, attribution, quote) for every ``{epigraph}`` of the book that names the paper."""
    for f in sorted((ROOT / "book").glob("*")):
        if f.suffix == ".ipynb":
            text = "\n\n".join(
                "".join(c["source"])
                for c in json.loads(f.read_text())["cells"]
                if c["cell_type"] == "markdown"
            )
        elif f.suffix == ".md":
            text = f.read_text()
        else:
            continue
        # an epigraph inside a list item is indented with it
        for m in re.finditer(r":::\{epigraph\}(.*?)\n[ \t]*:::", text, re.S):
            body = "\n".join(line.strip() for line in m.group(1).strip().splitlines())
            quote, _, attribution = body.rpartition("\n\n")
            if "the paper" in attribution:
                yield f.name, attribution.strip(), quote


def section(paper: str, attribution: str) -> str:
    """The part of the paper an attribution names first: the abstract, or §N / §N.M / §N.M.K with
    its subsections, up to the next heading of the same or a higher level."""
    m = re.search(r"abstract|§(\d+(?:\.\d+)*)", attribution)
    assert m, f"an epigraph names no section of the paper: {attribution!r}"
    title = r"Abstract" if m.group(0) == "abstract" else re.escape(m.group(1)) + r"\s"
    head = re.search(rf"^(#+) {title}", paper, re.M)
    assert head, f"the paper has no section {m.group(0)!r}"
    level = len(head.group(1))
    nxt = re.compile(rf"^#{{1,{level}}} ", re.M).search(paper, head.end())
    return paper[head.start() : nxt.start() if nxt else len(paper)]


def test_the_book_quotes_the_paper_in_epigraphs():
    # the pattern finds the book's epigraphs; a test over none checks nothing
    assert len(list(epigraphs())) >= 12


@pytest.mark.skipif(not PAPER.exists(), reason=f"the paper's text is not at {PAPER}")
def test_every_epigraph_from_the_paper_is_in_the_section_it_names():
    paper = PAPER.read_text()
    wrong = [
        (page, who, p[:80])
        for page, who, quote in epigraphs()
        for p in pieces(quote)
        if p not in normalise(section(paper, who))
    ]
    assert wrong == []


def test_a_section_runs_to_the_next_heading_of_its_level():
    paper = "## 4 A\nfour\n### 4.1 B\nfour one\n## 5 C\nfive\n"
    assert section(paper, "the paper, §4") == "## 4 A\nfour\n### 4.1 B\nfour one\n"
    assert section(paper, "the paper, §4.1 (Fig. 2)") == "### 4.1 B\nfour one\n"
    assert "five" not in section(paper, "the paper, §4 and Table 2")


def test_a_quotation_not_in_the_text_is_caught():
    text = normalise(
        "Removing the skip gives a 2.27$\\times$ degradation, $\\approx$3.35 (±\\pm 0.002)."
    )
    assert all(
        p in text for p in pieces('"Removing the skip gives a 2.27× degradation, ≈3.35 (± 0.002)."')
    )
    assert all(p in text for p in pieces('"Removing the skip ... ≈3.35"'))
    assert not all(p in text for p in pieces('"Removing the skip gives a 3× degradation"'))
