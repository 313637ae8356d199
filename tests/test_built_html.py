"""No built page references an external script, stylesheet, font or image (the book works offline).

Needs the built book (`make book`); the browser check (test_browser.py) loads pages for real.
"""

import re
from pathlib import Path

import pytest

from lib.claims import (
    asymmetry,
    bundle,
    escape_map,
    fixed_val_batches,
    gain_confound,
    joint_collapse,
    mechanism,
)

HTML = Path(__file__).resolve().parent.parent / "_build" / "html"
EXTERNAL = re.compile(
    r"""<(script|link|img|iframe|source)\b[^>]*\b(src|href)\s*=\s*["']((?:https?:)?//[^"']+)""",
    re.I,
)
CSS_URL = re.compile(r"""(?:url\(\s*["']?|@import\s+["'])((?:https?:)?//[^"')\s]+)""", re.I)


@pytest.fixture(scope="module")
def pages():
    if not (HTML / "index.html").exists():
        pytest.fail(f"{HTML / 'index.html'} is missing: build the book first (make book)")
    return sorted(HTML.rglob("*.html"))


def test_every_chapter_was_built(pages):
    names = {p.stem for p in pages}
    assert {
        "intro",
        "joint_collapse",
        "gain_confound",
        "fixed_val_batches",
        "10m_asymmetry",
        "124m_sweep",
        "mechanism",
        "escape_and_bundle",
        "reproducibility",
        "what_holds",
    } <= names


@pytest.mark.parametrize("page", ["intro", "what_holds"])
def test_the_scorecard_is_on_the_front_page_and_the_closing_chapter(pages, page):
    from lib.claims.verdicts import VERDICTS

    text = (HTML / "book" / f"{page}.html").read_text()
    for claim in (
        "Joint collapse",
        "Layer-0 gradient",
        "Hidden-state growth",
        "runtime gain",
        "Random validation",
        "10M asymmetry",
        "FFNOnly collapses to the No Residual floor",
        "124M ordering",
        "seed-sensitive at 124M",
        "position-blind mixer",
    ):
        assert claim in text, f"{page}: no row for {claim!r}"
    import re

    words = "|".join(VERDICTS)
    # a row decided at the paper's shape names the stand-in's verdict beside its own, in brackets
    cells = re.findall(
        r">\s*(" + words + r")(?: at a stand-in| \((?:" + words + r") at a stand-in\))?\s*</td>",
        text,
    )
    assert len(cells) >= 11, cells  # one verdict cell per claim row
    # the book's own findings, among them the paper-shape prefixes' early-training readings: listed
    # in the closing chapter, and linked from the front page
    assert (
        'href="what_holds.html#what-this-book-finds-that-the-paper-does-not-say"'
        if page == "intro"
        else "Central contrast at the paper"
    ) in text, page


def test_the_book_speaks_only_the_four_verdict_words(pages):
    # One vocabulary everywhere: every word the pages set in bold capitals as a verdict is one of
    # the four, and the old chapter word is gone.
    from lib.claims.verdicts import VERDICTS

    for p in pages:
        text = p.read_text()
        assert "DOES NOT HOLD" not in text, p.name
        bold = set(re.findall(r"<strong>([A-Z][A-Z ]{3,}[A-Z])</strong>", text))
        assert bold <= set(VERDICTS), (p.name, bold - set(VERDICTS))


def test_no_table_shows_a_row_count_column(pages):
    # A 0, 1, 2, ... first column tells a reader nothing; an index that names
    # something (a preset's fields) stays.
    for p in pages:
        for body in re.findall(r"<tbody>(.*?)</tbody>", p.read_text(), re.S):
            heads = [
                re.sub(r"<[^>]+>", "", h).strip()
                for h in re.findall(r"<tr[^>]*>\s*<th[^>]*>(.*?)</th>", body, re.S)
            ]
            assert heads[:2] != ["0", "1"] and heads != ["0"], (p.name, heads[:3])


def test_the_book_tables_hide_only_a_row_count_index():
    import pandas as pd

    from lib.book import frame_html

    df = pd.DataFrame({"config": ["AttnOnly", "FFNOnly"], "loss": [1.234567, 2.0]})
    shown = frame_html(df)
    assert "<th>0</th>" not in shown and "1.2346" in shown and "AttnOnly" in shown
    assert "<th>AttnOnly</th>" in frame_html(df.set_index("config"))  # a named index is shown
    assert "x" * 200 in frame_html(pd.DataFrame({"note": ["x" * 200]}))  # a cell is shown in full
    cells = frame_html(
        pd.DataFrame(
            {
                "grad": [2.1689e-05, 0.8788, float("inf")],
                "step": [1500.0, None, 300.0],
                "loss": [2.0, 1.95724, 3.3],
            }
        )
    )
    # a starved gradient beside a live one
    assert "2.17e-05" in cells and "0.8788" in cells and "inf" in cells
    # a step column reads as whole numbers, a loss column never
    assert "1,500" in cells and "2.0000" in cells
    # a filtered row number
    assert "<th>3</th>" not in frame_html(df.assign(x=1).iloc[[0]].set_axis([3]))
    # the paper's seed column is empty on a row pooled over seeds: "-", as every
    # other missing value, never "<NA>"
    seeds = frame_html(
        pd.DataFrame({"seed": pd.array([1337, None], dtype="Int64"), "note": ["one", "mean"]})
    )
    assert "&lt;NA&gt;" not in seeds and "<td>-</td>" in seeds and "<td>1337</td>" in seeds


def test_no_cell_prints_a_raw_dict(pages):
    # A reader gets a table or a sentence, never a Python dict's repr.
    for p in pages:
        outputs = re.findall(
            r'<div class="output[^"]*"><div class="highlight"><pre>(?:<span></span>)?(.*?)</pre>',
            p.read_text(),
            re.S,
        )
        assert not [o[:80] for o in outputs if re.search(r"\{'\w+': ", o)], p.name


def test_no_page_loads_anything_from_the_network(pages):
    found = [
        (p.relative_to(HTML), m.group(3))
        for p in pages
        for m in EXTERNAL.finditer(p.read_text())
        if not m.group(0).lower().startswith("<link")
        or "stylesheet" in m.group(0).lower()
        or "preload" in m.group(0).lower()
        or "font" in m.group(0).lower()
    ]
    assert found == []


def test_no_stylesheet_imports_fonts_or_images_from_the_network(pages):
    found = [
        (c.relative_to(HTML), u)
        for c in HTML.rglob("*.css")
        for u in CSS_URL.findall(c.read_text())
    ]
    assert found == []


def test_interactive_plots_are_embedded_without_plotly_from_a_cdn(pages):
    page = (HTML / "book" / "10m_asymmetry.html").read_text()
    assert 'id="10m-seeds"' in page and "Plotly.newPlot" in page
    assert "_static/plotly.min.js" in page and "cdn.plot.ly" not in page


@pytest.mark.parametrize(
    "chapter, div_id",
    [
        ("joint_collapse", "joint-collapse-seeds"),
        ("gain_confound", "gain-curves"),
        ("fixed_val_batches", "fixed-val-seeds"),
        ("10m_asymmetry", "10m-seeds"),
        ("124m_sweep", "124m-seeds"),
    ],
)
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
            before, after = text[: m.start()], text[m.end() :]
            assert before.rfind("<figure") > before.rfind("</figure>"), (
                f"{page.name}: {m.group(1)} is not in a figure"
            )
            caption, end = after.find("<figcaption"), after.find("</figure>")
            assert 0 <= caption < end and "caption-number" in after[caption:end], (
                f"{page.name}: {m.group(1)}"
            )
            found += 1
    assert found >= 7


# A plot a chapter shows: a static figure's image, or an interactive plot's div
PLOT = re.compile(r'<img\b[^>]*>|<div id="[^"]+" class="plotly-graph-div"')


def test_every_plot_in_a_chapter_is_a_numbered_captioned_figure(pages):
    # What it shows, at which scale, from which runs: every image and interactive plot sits in a
    # <figure> whose caption has its number ("Book fig. N", numfig_format) and words after it. The
    # front page is left out here: its lead figure is the front page's own (issue 37 items 1-2).
    import html

    found, bare = 0, []
    for page in pages:
        if page.name == "intro.html":
            continue
        text = page.read_text()
        for m in PLOT.finditer(text):
            before, after = text[: m.start()], text[m.end() :]
            inside = before.rfind("<figure") > before.rfind("</figure>")
            caption, end = after.find("<figcaption"), after.find("</figure>")
            words = (
                html.unescape(re.sub(r"<[^>]+>", " ", after[caption:end]))
                if inside and 0 <= caption < end
                else ""
            )
            number = re.search(r"Book fig\. \d+", words)
            # a number and a sentence, not a bare label
            if not (number and len(words[number.end() :].split()) >= 8):
                bare.append(f"{page.name}: {m.group(0)[:90]}")
            found += 1
    assert not bare, bare
    assert found >= 20, found  # every chapter's figures were found, not a page without any


# snake_case: best_val_min, escape_steps, gap_over_noise
CODE_NAME = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")


def _configuration_fields() -> set[str]:
    # the names a reader passes to the code (n_layer, attn_res): a table of a preset's
    # fields may show them as they are
    from dataclasses import fields

    from lib.engine.config import Experiment, ModelConfig, TrainConfig

    return {f.name for cls in (Experiment, ModelConfig, TrainConfig) for f in fields(cls)}


def test_no_table_header_is_a_code_name(pages):
    import html

    # the check can fail
    assert CODE_NAME.match("worst_attn_below_ffn_mean") and not CODE_NAME.match("best val")
    allowed = _configuration_fields()
    found = {}
    for p in pages:
        heads = {
            html.unescape(re.sub(r"<[^>]+>", "", h)).strip()
            for h in re.findall(r"<th\b[^>]*>(.*?)</th>", p.read_text(), re.S)
        }
        if bad := sorted(h for h in heads if CODE_NAME.match(h) and h not in allowed):
            found[p.name] = bad
    assert found == {}


def test_the_book_names_the_code_columns_in_words():
    import pandas as pd

    from lib.book import frame_html
    from lib.book.headers import HEADERS, header

    assert not [v for v in HEADERS.values() if CODE_NAME.match(v)]
    frame = pd.DataFrame(
        {name: [1.5] for name in [*HEADERS, "max_spread_from_step_200", "n_layer"]}
    )
    shown = set(re.findall(r"<th>(.*?)</th>", frame_html(frame)))
    # a configuration field stays
    assert shown == {*HEADERS.values(), "largest spread from step 200", "n_layer"}
    # the frame the tests and verdicts read keeps its names
    assert list(frame.columns[:2]) == list(HEADERS)[:2]
    assert header(("attn_mean", "n")) == ("AttnOnly mean", "n")  # each level of a two-level header
    # an escape step that never came is "-", as every missing value, never Python's None
    assert "<td>None</td>" not in frame_html(
        pd.DataFrame({"escape_step": [None, 300]}, dtype=object)
    )


def _page_text(chapter: str) -> str:
    """The chapter's built page as a reader reads it: tags stripped, entities
    decoded, whitespace collapsed."""
    import html

    raw = (HTML / "book" / f"{chapter}.html").read_text()
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S | re.I)
    raw = re.sub(r"</?(strong|em|code|span|a)\b[^>]*>", "", raw)  # inline markup: no word boundary
    text = html.unescape(re.sub(r"<[^>]+>", " ", raw)).replace("\u2019", "'").replace("\u2018", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(text.split())  # the book's smart quotes read as the plain ones lib writes


def _released(name):
    from lib.book import Chapter

    # the default reader: released runs only, never a retrain
    return Chapter.open(name, {}, announce=False)


def _expected(chapter: str) -> tuple[list[str], list[str]]:
    """(verdict lines, table cells) the chapter must show, computed here by lib
    from the released runs alone."""
    import dataclasses

    from lib.book import beside_paper, seed_table
    from lib.book.tables import OURS
    from lib.claims.paper import mixer_rule, paper_value, paper_values
    from lib.engine import gain, plans

    if chapter == "mechanism":
        ladder = mechanism.floors()
        floors = mechanism.like_for_like(ladder)
        mixer, ends = mechanism.mixer_runs(), mechanism.ladder_ends()
        # decided at the `cpu` stand-in, so its HOLDS reads "HOLDS at a stand-in" (claims_at)
        return [
            dataclasses.replace(
                mechanism.claim_mixer(
                    mixer.table,
                    floors,
                    paper_value(ref="§7.2", metric="mixer_best_val_loss"),
                    author_rule=mixer_rule(),
                ),
                stand_in=True,
            ).text,
            mechanism.ladder_reading(ends.table, floors, mechanism.floor_names(ladder)),
        ], []
    if chapter == "escape_and_bundle":
        escape, long, bundled = (
            escape_map.escape_runs(),
            escape_map.escape_long_runs(),
            bundle.bundle_runs(),
        )
        return [
            escape_map.escape_map_reading(
                escape.table, escape.planned, plans.ESCAPE_BUDGET["eval_interval"]
            ),
            escape_map.escape_long_reading(
                long.table, long.planned, plans.ESCAPE_BUDGET["max_steps"]
            ),
            bundle.claim_bundle(
                bundled.table,
                plans.bundle_factors()["none"].train.eval_interval,
                plans.ROUNDING_CONTROL,
                bundle.baseline_seeds(),
                paired=(plans.FIXED_VALIDATION,),
            ).text,
        ], []
    ch = _released(chapter)
    summ, floor = ch.summaries(), ch.floor()
    assert set(summ.source) <= {"released"}
    if chapter == "joint_collapse":
        cells = beside_paper(
            seed_table(summ[summ.seed == 1337]), paper_values(ref="Table 2"), "Table 2", True
        )[OURS]
        return [
            _as_printed(
                ch,
                joint_collapse.claim_joint_collapse(
                    summ,
                    floor,
                    joint_collapse.released_rounding_edge(),
                    robust=joint_collapse.released_robust_escapes(),
                ),
            ).text
        ], list(cells)
    if chapter == "10m_asymmetry":
        cells = [
            *beside_paper(
                seed_table(summ[summ.seed.isin(plans.SEEDS_10M)]),
                paper_values(ref="Table 3"),
                "Table 3",
                True,
            )[OURS],
            *beside_paper(seed_table(summ), paper_values(ref="Fig. 4"), "Phase 3", True)[OURS],
        ]
        return [
            _as_printed(ch, asymmetry.claim_asymmetry(summ, floor)).text,
            _as_printed(ch, asymmetry.claim_separation(summ, floor, "10M")).text,
        ], cells
    if chapter == "124m_sweep":
        cells = beside_paper(
            seed_table(summ), paper_values(ref="Table 5", metric="best_val_loss"), "Table 5", True
        )[OURS]
        # each claim waits for the whole sweep: its runs finished of those
        # planned, read from runs/ here
        sweep = (len(ch.experiments()) - len(ch.missing()), len(ch.experiments()))
        return [
            _as_printed(ch, asymmetry.claim_separation(summ, floor, "124M", sweep=sweep)).text,
            _as_printed(
                ch,
                asymmetry.claim_seed_sensitivity(
                    summ,
                    floor,
                    sweep=sweep,
                    reference=_released("10m_asymmetry").summaries(),
                    reference_floor=_released("10m_asymmetry").floor(),
                ),
            ).text,
        ], list(cells)
    if chapter == "gain_confound":
        curves = ch.gain_curves()
        bound = paper_value(ref="§5.1", metric="runtime_gain_spread")
        seeds = ch.gain_seeds()  # the runtime gains at seeds 42 and 123, which both verdicts read
        return [
            _as_printed(
                ch, gain_confound.claim_gain_fate(gain.gain_table(summ), others=seeds)
            ).text,
            _as_printed(
                ch,
                gain_confound.claim_gain_absorbed(
                    curves[curves.source == "released"],
                    floor,
                    bound,
                    twins=gain_confound.twin_curves(),
                    others=seeds,
                ),
            ).text,
        ], []
    if chapter == "fixed_val_batches":
        noise = ch.val_noise()
        noise = noise[noise.source == "released"]
        return [
            _as_printed(
                ch, fixed_val_batches.claim_eval_noise(fixed_val_batches.gap_vs_noise(noise), noise)
            ).text
        ], []
    raise ValueError(chapter)


def _as_printed(ch, claim):
    """A chapter's claim as its verdict cell prints it (``claims.claims_at``): decided at the
    chapter's stand-in, a CONTRADICTED reads "CONTRADICTED at a stand-in"."""
    import dataclasses

    return dataclasses.replace(claim, stand_in=ch.stand_in)


@pytest.mark.parametrize(
    "chapter",
    [
        "joint_collapse",
        "gain_confound",
        "fixed_val_batches",
        "10m_asymmetry",
        "124m_sweep",
        "mechanism",
        "escape_and_bundle",
    ],
)
def test_each_chapter_shows_the_verdicts_and_numbers_of_its_released_runs(pages, chapter):
    # What a reader sees is what lib computes from the released runs alone: every
    # verdict line and every "ours" cell of the paper tables, recomputed here, must be
    # on the built page word for word.
    text = _page_text(chapter)
    verdicts, cells = _expected(chapter)
    lines = [" ".join(line.split()) for v in verdicts for line in v.splitlines() if line.strip()]
    assert lines, chapter
    missing = [line for line in lines if line not in text]
    assert not missing, f"{chapter}: verdict lines not on the page: {missing}"
    absent = [c for c in cells if c not in text]
    assert not absent, f"{chapter}: table values not on the page: {absent}"


def _rows_text(table) -> list[str]:
    """Each row of a table as the page's text shows it: its cells in order, one space apart."""
    return [
        " ".join(" ".join(str(v).split()) for v in row)
        .replace("\u201c", '"')
        .replace("\u201d", '"')
        for row in table.itertuples(index=False)
    ]


def test_the_limitations_page_states_the_compute_the_runs_add_up_to(pages):
    # The page's numbers are lib's, computed again here from runs/: the compute statement, the
    # table by page and the total, what the paper's scales would cost on this CPU, and the
    # stand-ins' departures from the presets.
    from lib.book.costs import compute_statement, compute_table, run_costs
    from lib.book.limitations import (
        cannot_test_statement,
        paper_scale_cost,
        paper_scale_shown,
        stand_in_departures,
    )

    assert "limitations" in {p.stem for p in pages}
    text = _page_text("limitations")
    for heading in (
        "Limitations and compute",
        "What this CPU cannot test",
        "How the stand-ins depart from the paper's recipe",
        "Compute",
    ):
        assert heading in text, heading
    costs = run_costs()
    assert len(costs) > 100 and costs.wall_s.sum() > 0  # the released runs, not an empty folder
    for sentence in (compute_statement(costs), cannot_test_statement(costs)):
        assert " ".join(sentence.split()) in text, sentence
    rows = [
        *_rows_text(compute_table(costs)),
        *_rows_text(paper_scale_shown(paper_scale_cost(costs))),
        *_rows_text(stand_in_departures()),
    ]
    missing = [r for r in rows if r not in text]
    assert not missing, f"rows not on the limitations page: {missing}"
    total = compute_table(costs).iloc[-1]
    assert (
        f"all released runs {len(costs)} {costs.wall_s.sum() / 3600:.1f} 100%"
        == _rows_text(total.to_frame().T)[0]
    )
    # reachable from the table of contents, before the closing chapter
    toc = (HTML / "book" / "reproducibility.html").read_text()
    assert 'href="limitations.html"' in toc


def test_the_124m_chapter_limits_the_training_set_confound_to_the_historical_seeds(pages):
    # Issue 37 item 8: the confound with training-set size is shown for the three historical seeds,
    # whose splits the author's notebooks print; Table 5's split is not stated, and the page says
    # so rather than extend it there.
    text = _page_text("124m_sweep")
    assert '"AttnOnly is seed-sensitive at 124M" is confounded' not in text
    assert (
        "Over these historical seeds, AttnOnly's spread at 124M (4.899 to 7.586) is confounded"
        in text
    )
    assert "whether the same confound reaches Table 5's seed sensitivity cannot be told" in text
    # Table 4 against Table 5: the paper's own caution (§6.2.1) and the seed-1337
    # notebook's 0.06M-token validation
    assert (
        "should not be compared as if they came from a single sweep" in text
        and "57,044 tokens" in text
    )


def test_the_audit_row_on_tables_4_and_5_carries_the_paper_s_caution_and_the_validation_split(
    pages,
):
    from lib.claims.paper import audit_findings

    rows = audit_findings()
    row = rows[rows.finding.str.contains("3.263 in Table 4")].iloc[0]
    assert "§6.2.1" in row.finding and "0.06M" in row.finding and "§6.2.1" in row["where"]
    assert (
        "Residual_124M__GPT.ipynb cell 7" in row["where"]
        and "57,044 validation tokens" in row.evidence
    )
    assert " ".join(row.finding.split()) in _page_text("intro")


@pytest.mark.parametrize(
    "chapter, definitions",
    [
        ("joint_collapse", ("engine.thresholds.left_floor", "engine.thresholds.escape_step")),
        (
            "what_holds",
            (
                "claims.verdicts.verdict",
                "engine.thresholds.left_floor",
                "engine.thresholds.escape_step",
            ),
        ),
        ("escape_and_bundle", ("engine.train.lr_at", "engine.train.Trainer.train_step")),
        ("10m_asymmetry", ("engine.train.lr_at",)),
    ],
)
def test_pages_show_the_definitions_their_verdicts_rest_on(pages, chapter, definitions):
    # whether a run left the floor and when (every verdict), and the rate the trainer sets
    # at each step (the schedule verdicts): included from lib as it runs, so the page shows
    # the code itself, each line of it
    import importlib
    import inspect

    text = _page_text(chapter)
    for name in definitions:
        layer, module, *attrs = name.split(".")
        obj = importlib.import_module(f"lib.{layer}.{module}")
        for a in attrs:
            obj = getattr(obj, a)
        lines = [
            " ".join(line.split()) for line in inspect.getsource(obj).splitlines() if line.strip()
        ]
        missing = [line for line in lines if line not in text]
        assert not missing, f"{chapter}: {name} is not on the page whole: {missing[:3]}"
