"""The front page's reproducibility summary (``front_page.summary``): the ML Reproducibility
Challenge's six parts, the answer first, every sentence at most 35 words, the tally split by the
scale of its evidence, and a stand-in's CONTRADICTED never alone. On constructed cards, so that a
verdict that moves moves the sentences."""

import itertools

import pandas as pd
import pytest

from lib.book import front_page as F

LIMIT = 35
COMPUTE = dict(
    runs=186,
    hours=54.0,
    at_shape=19,
    whole=2,
    gpu=0,
    threads="2",
    whole_hours=(5.8, 6.5, True),
    constant=True,
)


def row(short, scale, verdict, partial=(), stand_in=""):
    return {
        "claim": short.upper(),
        "short": short,
        "scale": scale,
        "verdict": verdict,
        "why": "w",
        "stand_in": stand_in,
        "partial": partial,
        "whole": not partial,
    }


def card(*extra):
    return pd.DataFrame(
        [
            row("nanoGPT AttnOnly's joint collapse", "paper shape", "HOLDS"),
            row("layer-0 gradient starvation", "paper shape", "HOLDS", partial=((300, 3000),)),
            row("AttnOnly's 10M level", "paper shape", "HOLDS"),
            row("the order of hidden-state growth", "paper shape", "NOT TESTED"),
            row("that runtime gains are equivalent", "stand-in", "CONTRADICTED"),
            row("the 10M asymmetry", "stand-in", "HOLDS"),
            row("the 124M ordering", "stand-in", "NOT TESTABLE HERE"),
            row("AttnOnly's seed sensitivity at 124M", "stand-in", "HOLDS"),
            row("cross-position routing", "stand-in", "NOT TESTABLE HERE"),
            *extra,
        ]
    )


# what schedule_10m.puzzle_clauses says of the released runs, in full and short
SAID = (
    "of the two puzzles, a warm-up frees nanoGPT's AttnOnly at 3 of the 3 seeds its constant rate "
    "keeps on the floor to step 300 so far (1337, 42, 123), and Phase 2's constant rate keeps none "
    "of 5 ResidualGPT seeds on the floor, so 5 seeds here do not reproduce Phase 2's floored seed",
    "puzzles: warm-up frees 3 of 3 floored nanoGPT seeds so far, constant rate floors no "
    "ResidualGPT seed",
)


def finding(
    verdict="NOT TESTED",
    stand_in="HOLDS (`cpu` stand-in): both named",
    puzzles=SAID,
    limit="",
    rungs=(),
):
    return pd.Series(
        row("the first steps' learning rate", "paper shape", verdict, stand_in=stand_in)
        | {"puzzles": puzzles, "stand_in_limit": limit, "rungs": rungs}
    )


AUDIT = pd.DataFrame({"finding": ["f1", "f2", "f3"]})


def test_the_answer_first_then_the_tally_by_scale_then_the_six_parts_in_order():
    text = F.summary(card(), finding(), AUDIT, COMPUTE)
    paragraphs = text.split("\n\n")
    assert (
        paragraphs[0].startswith("**At the paper's")
        and paragraphs[0] == f"**{F.answer(card(), finding())}**"
    )
    # on the first screen with the answer (tests/test_browser.py)
    assert paragraphs[1] == F.tally_by_scale(card())
    assert [p.split(".**")[0].lstrip("*") for p in paragraphs[2:]] == list(F.PARTS)
    for p in paragraphs[2:]:  # one to three sentences a part, its name aside
        assert 1 <= len(F.sentences(p.split(".** ", 1)[1])) <= 3, p


@pytest.mark.parametrize("verdict", ["HOLDS", "CONTRADICTED", "NOT TESTABLE HERE", "NOT TESTED"])
def test_no_sentence_is_longer_than_35_words_whatever_the_verdicts(verdict):
    # the longest cards this page can meet: every paper-shape claim holding, with long names; every
    # verdict of the finding, with the stand-in's beside it (and its limit) or without, and the
    # longest that its runs can say of the puzzles (a seed count of two digits on each side)
    longest = (
        "of the two puzzles, a warm-up frees nanoGPT's AttnOnly at 12 of the 13 seeds its constant "
        "rate floors so far, and Phase 2's constant rate keeps 12 of 13 ResidualGPT seeds on the "
        "floor so far",
        "puzzles: warm-up frees 12 of 13 floored nanoGPT seeds so far, constant rate floors 12 of "
        "13 ResidualGPT seeds so far",
    )
    long = card(
        *(
            row(f"a claim with a rather long name number {i}", "paper shape", "HOLDS")
            for i in range(4)
        )
    )
    # a stand-in claim still training beside everything else (the 124M sweep's, before it was whole)
    pending = card(row("a claim still training", "stand-in", "NOT TESTED"))
    # the longest split of the finding's verdict by implementation (the two must differ to be
    # said): three words and two
    split = (("nanoGPT", "NOT TESTABLE HERE"), ("ResidualGPT", "NOT TESTED"))
    stand_ins = ("NOT TESTABLE HERE (cpu)", "NOT TESTED (cpu)", "HOLDS (cpu)", "")
    for c in (card(), long, long.assign(verdict=verdict), pending):
        for beside, puzzles, rungs in itertools.product(stand_ins, (SAID, longest), ((), split)):
            f = finding(verdict, beside, puzzles, "at its peak 1e-3 only, not at 3e-4", rungs)
            text = F.summary(c, f, AUDIT, COMPUTE)
            too_long = [s for s in F.sentences(text) if len(s.split()) > LIMIT]
            assert not too_long, too_long
            # the split is never what gives way
            assert ("for nanoGPT" in text) == bool(rungs), text


def test_the_answer_names_what_holds_at_the_paper_shape_what_cannot_be_tested_and_the_puzzles():
    short = (SAID[0], "puzzles: a short clause")
    text = F.answer(card(), finding(puzzles=short))
    assert text.startswith("At the paper's") and len(text.split()) <= LIMIT
    head, cannot, puzzles = text.split("; ")
    # the paper-shape claims that hold, named; the 10M asymmetry holds only at a
    # stand-in and is not among them
    assert (
        "nanoGPT AttnOnly's collapse" in head
        and "gradient starvation" in head
        and "asymmetry" not in head
    )
    assert (
        "the 124M ordering" in cannot
        and "routing" in cannot
        and cannot.endswith("are untestable here")
    )
    # the puzzles as the finding's paper-shape runs say them, never the stand-in's (there Phase
    # 2's rate frees AttnOnly), whatever either verdict: short where the full clause does not fit
    assert puzzles == "puzzles: a short clause."
    for v, beside in (("HOLDS", "HOLDS (cpu)"), ("CONTRADICTED", ""), ("NOT TESTED", "")):
        assert F.answer(card(), finding(v, beside)).endswith(SAID[1] + ".")
    # the longest that fits: the claims are named before the puzzles are said at length
    said = ("a long clause " + "word " * 10, "short clause")
    assert F.answer(card(), finding(puzzles=said)).endswith("; short clause.")
    assert "gradient starvation" in F.answer(card(), finding(puzzles=said))
    assert F.answer(card(), finding(puzzles=("x", "y"))).endswith("; x.")
    # a row without the clauses is refused, never answered with a guess
    with pytest.raises(ValueError, match="carries no puzzle clauses"):
        F.answer(card(), finding(puzzles=()))
    # too many names for 35 words: they are counted, not cut off
    long = card(
        *(
            row(f"a claim with a rather long name number {i}", "paper shape", "HOLDS")
            for i in range(4)
        )
    )
    assert "7 claims hold" in F.answer(long, finding())
    # counted, the claims that rest on stand-ins say so: after "At the paper's 10M shape" they
    # would read as its own
    assert "; 2 stand-in claims are untestable; " in F.answer(long, finding())
    at_shape = card(row("a claim at the paper's shape", "paper shape", "NOT TESTABLE HERE"))
    mixed = F.answer(at_shape.assign(short=at_shape.short + " " + "word " * 12), finding())
    assert "; 3 claims are untestable here; " in mixed


def test_the_tally_is_split_by_scale_and_a_stand_ins_contradiction_never_reads_alone():
    text = F.tally_by_scale(card())
    assert text == (
        "**At the paper's own 10M shape** (4 claims): 3 HOLDS · 1 NOT TESTED. **At CPU stand-ins** "
        "(5 claims): 2 HOLDS · 1 contradicted at a stand-in · 2 NOT TESTABLE HERE."
    )
    # a contradiction at the paper's shape is the word itself, and claims
    # with no run are counted apart
    moved = card(row("x", "none", "NOT TESTED")).assign(
        verdict=lambda c: c.verdict.where(c.short != "AttnOnly's 10M level", "CONTRADICTED")
    )
    text = F.tally_by_scale(moved)
    assert (
        "2 HOLDS · 1 CONTRADICTED · 1 NOT TESTED" in text
        and "**Not run** (1 claim): 1 NOT TESTED" in text
    )
    # in the summary's sentences too: "contradicted" at a stand-in always says where
    summary = F.summary(card(), finding(), AUDIT, COMPUTE)
    for sentence in F.sentences(summary):
        if "contradicted" in sentence.lower() and "At CPU stand-ins" in sentence:
            assert "contradicted at a stand-in" in sentence, sentence


def test_the_results_move_with_the_card():
    results = F.summary_parts(card(), finding("HOLDS", "HOLDS (cpu)"), AUDIT, COMPUTE)["Results"]
    assert "of 4 claims 3 hold and 1 waits for longer runs" in results
    assert (
        "of 5 claims 2 hold, 1 is contradicted at a stand-in and 2 are untestable here" in results
    )
    assert "leaves the floor HOLDS at the paper's shape." in results
    assert results.endswith("2 are untestable here; our finding HOLDS there.")
    easy = F.summary_parts(card(), finding(), AUDIT, COMPUTE)["What was easy"]
    # only the claims whose every run trained whole: starvation rests partly on prefixes
    assert "nanoGPT AttnOnly's collapse and ResidualGPT AttnOnly's level hold" in easy
    # nanoGPT's runs train on its notebook's recipe (the 10M presets differ from Table 1's)
    assert "as the paper reports (nanoGPT on its notebook's recipe, not Table 1's)." in easy
    # without a nanoGPT claim among them the optimiser is not said
    resid = card().assign(
        short=lambda c: c.short.str.replace("nanoGPT AttnOnly's joint collapse", "x's level")
    )
    easy = F.summary_parts(resid, finding(), AUDIT, COMPUTE)["What was easy"]
    assert easy.endswith("x's level and ResidualGPT AttnOnly's level hold as the paper reports.")
    assert "starvation" not in easy
    assert "at 3 points" in F.summary_parts(card(), finding(), AUDIT, COMPUTE)[F.PARTS[-1]]
    # the runs at the paper's shape, and how many of them trained whole
    method = F.summary_parts(card(), finding(), AUDIT, COMPUTE)["Methodology"]
    assert method.endswith("19 runs at the paper's 10M shape, 2 of them whole.")
    method = F.summary_parts(card(), finding(), AUDIT, dict(COMPUTE, whole=0))["Methodology"]
    assert method.endswith("19 runs at the paper's 10M shape, 0 of them whole.")
    # what a whole 10M run takes: the released ones' range, or the estimate before any
    hard = F.summary_parts(card(), finding(), AUDIT, COMPUTE)["What was difficult"]
    assert hard.startswith("A whole 10M run took 5.8 to 6.5 hours here")
    guess = dict(COMPUTE, whole_hours=(4.9, 4.9, False))
    hard = F.summary_parts(card(), finding(), AUDIT, guess)["What was difficult"]
    assert hard.startswith("One whole 10M run would take about 5 hours here")


def test_the_findings_result_names_each_implementations_verdict_where_they_differ():
    # nanoGPT's part holds where ResidualGPT's cannot be tested: the combined NOT TESTABLE HERE
    # alone would hide the part that holds; the stand-in's verdict, where it holds, with its limit
    limit = "at its peak 1e-3 only, not at 3e-4"
    split = (("nanoGPT", "HOLDS"), ("ResidualGPT", "NOT TESTABLE HERE"))
    f = finding("NOT TESTABLE HERE", "HOLDS (cpu)", limit=limit, rungs=split)
    results = F.summary_parts(card(), f, AUDIT, COMPUTE)["Results"]
    assert (
        "leaves the floor is NOT TESTABLE HERE at the paper's shape: HOLDS for nanoGPT, NOT "
        "TESTABLE HERE for ResidualGPT." in results
    )
    assert results.endswith(
        "2 are untestable here; our finding HOLDS there, at its peak 1e-3 only, not at 3e-4."
    )
    # the same verdict in both: nothing to split
    same = (("nanoGPT", "HOLDS"), ("ResidualGPT", "HOLDS"))
    f = finding("HOLDS", "NOT TESTABLE HERE (cpu)", limit=limit, rungs=same)
    results = F.summary_parts(card(), f, AUDIT, COMPUTE)["Results"]
    assert "leaves the floor HOLDS at the paper's shape." in results
    assert "for nanoGPT" not in results
    # a limit only beside a stand-in that holds
    assert results.endswith("2 are untestable here; our finding is NOT TESTABLE HERE there.")


def test_a_stand_ins_contradiction_reads_at_a_stand_in_in_a_chapters_verdict_block():
    from lib.book import Verdict
    from lib.claims.verdicts import Claim

    c = Claim("CONTRADICTED", "w", name="n", stand_in=True)
    assert c.word == "CONTRADICTED at a stand-in" and "n — CONTRADICTED at a stand-in: w" in c.text
    assert "— **CONTRADICTED** at a stand-in: w" in Verdict(c)._repr_markdown_()
    assert "<strong>CONTRADICTED</strong> at a stand-in: w" in Verdict(c)._repr_html_()
    # a stand-in's HOLDS says where too; at the paper's shape, or a word that decides nothing, the
    # word alone
    assert Claim("HOLDS", "w", stand_in=True).word == "HOLDS at a stand-in"
    assert Claim("CONTRADICTED", "w").word == "CONTRADICTED"
    assert Claim("NOT TESTABLE HERE", "w", stand_in=True).word == "NOT TESTABLE HERE"


def test_the_released_stand_in_contradictions_are_marked_in_their_chapters():
    from lib.claims.registry import claims_at

    (noise,) = claims_at("fixed_val_batches#reading-the-result")
    assert noise.verdict == "CONTRADICTED" and noise.stand_in


def test_the_constant_rate_named_is_the_phase2_notebooks_as_its_recipe_records_it(monkeypatch):
    # Table 1 gives nanoGPT a constant rate itself; the departure is the Phase-2 notebook's
    from lib.book import limitations
    from lib.claims.paper import author_recipes

    assert limitations.phase2_constant()
    recipes = author_recipes()
    at = (recipes.notebook == limitations.PHASE2_NOTEBOOK) & (recipes.field == "schedule")
    monkeypatch.setattr(
        limitations,
        "author_recipes",
        lambda: recipes.assign(value=recipes.value.mask(at, "cosine")),
    )
    assert not limitations.phase2_constant()
    # a missing row is an error, not a sentence dropped without a word
    monkeypatch.setattr(limitations, "author_recipes", lambda: recipes[~at])
    with pytest.raises(ValueError, match="0 'schedule' rows"):
        limitations.phase2_constant()
    said = F.summary_parts(card(), finding(), AUDIT, COMPUTE)[F.PARTS[5]]
    assert "the Phase-2 notebook trains at a constant rate" in said and "nanoGPT" not in said


def test_the_threads_are_a_range_over_every_segment_of_every_run():
    from lib.book.limitations import thread_range

    assert thread_range(pd.Series(["2", "2"])) == "2"
    # a run resumed on two threads after one: both counted, and a range read from them
    assert thread_range(pd.Series(["2", "1; 2"])) == "1 to 2"
    assert thread_range(pd.Series(["4; 1"])) == "1 to 4"
    assert thread_range(pd.Series([None], dtype=object)) == "?"


def test_the_optimiser_clause_reads_the_presets(monkeypatch):
    # said only while the 10M presets give nanoGPT another optimiser than ResidualGPT's (Table 1's)
    assert F._nanogpt_optimiser() == " (nanoGPT on its notebook's recipe, not Table 1's)"
    same = F.get_preset("10M", "residualgpt")
    monkeypatch.setattr(F, "get_preset", lambda scale, impl: same)
    assert F._nanogpt_optimiser() == ""
