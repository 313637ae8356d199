"""No built page references an external script, stylesheet, font or image (the book works offline).

Needs the built book (`make book`); the browser check (test_browser.py) loads pages for real.
"""
import re
from pathlib import Path

import pytest

HTML = Path(__file__).resolve().parent.parent / "_build" / "html"
EXTERNAL = re.compile(r"""<(script|link|img|iframe|source)\b[^>]*\b(src|href)\s*=\s*["']((?:https?:)?//[^"']+)""", re.I)
CSS_URL = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])((?:https?:)?//[^"')\s]+)""", re.I)


@pytest.fixture(scope="module")
def pages():
    if not (HTML / "index.html").exists():
        pytest.fail(f"{HTML / 'index.html'} is missing: build the book first (make book)")
    return sorted(HTML.rglob("*.html"))


def test_every_chapter_was_built(pages):
    names = {p.stem for p in pages}
    assert {"intro", "joint_collapse", "gain_confound", "fixed_val_batches", "10m_asymmetry", "124m_sweep",
            "mechanism", "reproducibility", "what_holds"} <= names


@pytest.mark.parametrize("page", ["intro", "what_holds"])
def test_the_scorecard_is_on_the_front_page_and_the_closing_chapter(pages, page):
    from lib.analysis import VERDICTS
    text = (HTML / "book" / f"{page}.html").read_text()
    for claim in ("Joint collapse", "Layer-0 gradient", "Hidden-state growth", "runtime gain", "Random validation",
                  "10M asymmetry", "FFNOnly collapses to the No Residual floor", "124M ordering",
                  "seed-sensitive at 124M", "local mixer"):
        assert claim in text, f"{page}: no row for {claim!r}"
    import re
    cells = re.findall(r">\s*(" + "|".join(VERDICTS) + r")\s*</td>", text)
    assert len(cells) >= 11, cells  # one verdict cell per claim row


def test_no_page_loads_anything_from_the_network(pages):
    found = [(p.relative_to(HTML), m.group(3)) for p in pages for m in EXTERNAL.finditer(p.read_text())
             if not m.group(0).lower().startswith("<link") or "stylesheet" in m.group(0).lower()
             or "preload" in m.group(0).lower() or "font" in m.group(0).lower()]
    assert found == []


def test_no_stylesheet_imports_fonts_or_images_from_the_network(pages):
    found = [(c.relative_to(HTML), u) for c in HTML.rglob("*.css") for u in CSS_URL.findall(c.read_text())]
    assert found == []


def test_interactive_plots_are_embedded_without_plotly_from_a_cdn(pages):
    page = (HTML / "book" / "10m_asymmetry.html").read_text()
    assert 'id="10m-seeds"' in page and "Plotly.newPlot" in page
    assert "_static/plotly.min.js" in page and "cdn.plot.ly" not in page


@pytest.mark.parametrize("chapter, div_id", [
    ("joint_collapse", "joint-collapse-seeds"), ("gain_confound", "gain-curves"),
    ("fixed_val_batches", "fixed-val-seeds"), ("10m_asymmetry", "10m-seeds"), ("124m_sweep", "124m-seeds")])
def test_every_chapter_has_its_interactive_plot_and_a_computed_verdict(pages, chapter, div_id):
    page = (HTML / "book" / f"{chapter}.html").read_text()
    assert f'id="{div_id}"' in page and "Plotly.newPlot" in page
    assert "Verdict, computed from" in page


def test_the_run_data_is_downloadable_from_the_reproducibility_chapter(pages):
    text = (HTML / "book" / "reproducibility.html").read_text()
    for name in ("runs_summaries.csv", "runs_histories.csv"):
        assert f'href="../{name}"' in text and (HTML / name).stat().st_size > 1000, name


def test_every_interactive_figure_is_a_numbered_captioned_figure(pages):
    import re
    found = 0
    for page in pages:
        text = page.read_text()
        for m in re.finditer(r'<div id="([^"]+)" class="plotly-graph-div"', text):
            before, after = text[:m.start()], text[m.end():]
            assert before.rfind("<figure") > before.rfind("</figure>"), f"{page.name}: {m.group(1)} is not in a figure"
            caption, end = after.find("<figcaption"), after.find("</figure>")
            assert 0 <= caption < end and "caption-number" in after[caption:end], f"{page.name}: {m.group(1)}"
            found += 1
    assert found >= 7
