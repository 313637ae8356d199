"""Every claim function can come out either way (issue 36, "Done when"): a test on constructed runs
where its verdict is HOLDS and one where it is CONTRADICTED, or, for a claim that cannot reach one
of them, a test naming the fact that keeps it out of reach. ``BOTH_WAYS`` is the index: where the
test lives for each claim and each word; the claims without one elsewhere get theirs here. No
verdict is fixed by a constant: a ``knife_edge=`` or ``by_design=`` in lib/ is computed, never a
literal. And a stand-in contradiction beside a paper-shape agreement is counted as the paper shape's
verdict, on constructed runs through the row, the tally and the abstract."""

import ast
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from lib.book import front_page
from lib.claims import asymmetry, mechanism, paper_shape
from lib.claims import scorecard as sc
from lib.engine import plans

ROOT = Path(__file__).resolve().parents[1]
# the unigram floor of the characters, near enough: every case below sits well away from its margin
FLOOR = 3.347

# claim function -> (the test where it comes out HOLDS, the test where it comes out CONTRADICTED),
# as "file::function". None: that word is out of the claim's reach, and the test in NEVER names why.
BOTH_WAYS = {
    "asymmetry.claim_asymmetry": (
        "test_book.py::test_claim_verdicts_follow_the_numbers",
        "test_book.py::test_claim_verdicts_follow_the_numbers",
    ),
    "asymmetry.claim_separation": (
        "test_book.py::test_claim_verdicts_follow_the_numbers",
        "test_claims_both_ways.py::test_separation_both_ways",
    ),
    "asymmetry.claim_seed_sensitivity": (
        "test_claims_both_ways.py::test_seed_sensitivity_both_ways",
        "test_claims_both_ways.py::test_seed_sensitivity_both_ways",
    ),
    "asymmetry.claim_ffn_equals_noresidual": (
        "test_claims_both_ways.py::test_ffn_equals_noresidual_both_ways",
        "test_claims_both_ways.py::test_ffn_equals_noresidual_both_ways",
    ),
    "asymmetry.claim_longer_budget": (
        "test_book.py::test_longer_budget_claim_reads_each_probe_beside_its_released_plain_run",
        "test_book.py::test_longer_budget_claim_reads_each_probe_beside_its_released_plain_run",
    ),
    "asymmetry.claim_author_values_asymmetry": (
        "test_recipe_runs.py::test_the_headline_results_are_read_for_each_set_of_values",
        "test_recipe_runs.py::test_the_headline_results_are_read_for_each_set_of_values",
    ),
    "asymmetry.claim_author_values_collapse": (
        None,
        "test_recipe_runs.py::test_the_headline_results_are_read_for_each_set_of_values",
    ),
    "bundle.claim_bundle": (
        "test_mechanism.py::test_the_bundle_line_names_the_factors_that_halve_or_double_the_escape",
        (
            "test_mechanism.py::test_the_bundle_reads_each_factor_against_what_rounding_and_the_"
            "seed_do_without_it"
        ),
    ),
    "fixed_val_batches.claim_eval_noise": (
        "test_book.py::test_eval_noise_claim_sets_the_gap_against_the_noise",
        "test_book.py::test_eval_noise_claim_sets_the_gap_against_the_noise",
    ),
    "gain_confound.claim_gain_fate": (
        (
            "test_book.py::test_the_gain_verdict_has_two_parts_where_the_runs_end_and_how_close_"
            "the_escaped_curves_are"
        ),
        (
            "test_book.py::test_the_gain_verdict_has_two_parts_where_the_runs_end_and_how_close_"
            "the_escaped_curves_are"
        ),
    ),
    "gain_confound.claim_gain_absorbed": (
        (
            "test_book.py::test_the_gain_verdict_has_two_parts_where_the_runs_end_and_how_close_"
            "the_escaped_curves_are"
        ),
        (
            "test_book.py::test_the_gain_verdict_has_two_parts_where_the_runs_end_and_how_close_"
            "the_escaped_curves_are"
        ),
    ),
    "joint_collapse.claim_joint_collapse": (
        (
            "test_book.py::test_joint_collapse_verdict_needs_full_residual_off_the_floor_and_"
            "reports_no_residual"
        ),
        "test_book.py::test_claim_verdicts_follow_the_numbers",
    ),
    "joint_collapse.claim_starvation": (
        "test_book.py::test_mechanism_claims_compare_with_section_4_1",
        "test_book.py::test_mechanism_claims_compare_with_section_4_1",
    ),
    "joint_collapse.claim_growth_order": (
        "test_book.py::test_mechanism_claims_compare_with_section_4_1",
        "test_book.py::test_mechanism_claims_compare_with_section_4_1",
    ),
    "mechanism.claim_routing_by_author_rule": (
        "test_scorecard.py::test_the_papers_routing_test_is_judged_by_the_authors_rule",
        "test_scorecard.py::test_the_papers_routing_test_is_judged_by_the_authors_rule",
    ),
    "mechanism.claim_mixer": (
        (
            "test_mechanism.py::test_the_mixer_test_holds_when_the_mixer_stops_at_the_bigram_"
            "floor_and_ffnonly_leaves_the_floor"
        ),
        (
            "test_mechanism.py::test_the_mixer_test_is_contradicted_when_ffnonly_with_the_mixer_"
            "stays_on_the_floor"
        ),
    ),
    "paper_shape.claim_prefix_contrast": (
        "test_prefix.py::test_contrast_as_the_paper_so_far",
        "test_prefix.py::test_contrast_contradicted_when_nanogpt_is_below_the_papers_best",
    ),
    "paper_shape.claim_prefix_starvation": (
        (
            "test_prefix.py::test_starvation_not_tested_before_step_300_then_decided_beside_full_"
            "residual"
        ),
        (
            "test_prefix.py::test_starvation_not_tested_before_step_300_then_decided_beside_full_"
            "residual"
        ),
    ),
    "level_10m.claim_full_residual_level": (
        (
            "test_prefix.py::test_table_2s_full_residual_level_is_judged_within_our_noise_and_the_"
            "papers_records_both_ways"
        ),
        (
            "test_prefix.py::test_table_2s_full_residual_level_is_judged_within_our_noise_and_the_"
            "papers_records_both_ways"
        ),
    ),
    "paper_shape.claim_paper_shape_collapse": (
        "test_claims_both_ways.py::test_paper_shape_collapse_both_ways",
        "test_claims_both_ways.py::test_paper_shape_collapse_both_ways",
    ),
    "growth_10m.claim_prefix_growth": (
        "test_prefix.py::test_the_growth_order_at_the_paper_shape_is_read_at_one_step_both_ways",
        "test_prefix.py::test_the_growth_order_at_the_paper_shape_is_read_at_one_step_both_ways",
    ),
    "level_10m.claim_paper_shape_level": (
        (
            "test_prefix.py::test_the_level_at_the_paper_shape_is_fig4s_mean_within_its_spread_and_"
            "our_noise_both_ways"
        ),
        (
            "test_prefix.py::test_the_level_at_the_paper_shape_is_fig4s_mean_within_its_spread_and_"
            "our_noise_both_ways"
        ),
    ),
    "paper_shape.claim_prefix_asymmetry": (
        "test_prefix.py::test_prefix_asymmetry",
        "test_prefix.py::test_prefix_asymmetry",
    ),
    "schedule_10m.claim_first_steps": (
        "test_first_steps.py::test_both_implementations_named_the_predicted_way_hold",
        "test_first_steps.py::test_a_warm_up_that_changes_nothing_in_nanogpt_contradicts_it",
    ),
    "schedule_10m.claim_schedule_10m": (
        "test_prefix.py::test_the_schedule_at_the_paper_shape_is_decided_over_five_seeds_never_one",
        "test_prefix.py::test_the_schedule_at_the_paper_shape_is_decided_over_five_seeds_never_one",
    ),
    "schedule_seeds.claim_schedule_factors": (
        (
            "test_recipe_runs.py::test_a_factor_decides_only_outside_its_baselines_range_over_the_"
            "same_seeds"
        ),
        (
            "test_recipe_runs.py::test_a_factor_decides_only_outside_its_baselines_range_over_the_"
            "same_seeds"
        ),
    ),
}

# A word out of a claim's reach, and the test that names the fact keeping it there
NEVER = {
    (
        "asymmetry.claim_author_values_collapse",
        "HOLDS",
    ): "test_claims_both_ways.py::test_the_collapse_with_the_authors_dropout_can_never_hold"
}


def _claim_functions() -> set[str]:
    """``module.function`` of every function in lib/claims decorated ``@claim(...)``, read from the
    source, so that a claim added later without its two tests fails below."""
    found = set()
    for path in sorted((ROOT / "lib" / "claims").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", None) == "claim"
                for d in node.decorator_list
            ):
                found.add(f"{path.stem}.{node.name}")
    return found


def _test_source(where: str) -> str:
    """The source of the test function ``file::function`` (an AssertionError if there is none)."""
    file, name = where.split("::")
    text = (ROOT / "tests" / file).read_text()
    fn = next(
        (n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == name),
        None,
    )
    assert fn is not None, f"{where} does not exist"
    return ast.get_source_segment(text, fn)


def test_every_claim_function_has_a_test_each_way():
    claims = _claim_functions()
    assert len(claims) >= 22  # the claims of issue 36's count: the AST walk found the decorator
    assert claims == set(BOTH_WAYS), (
        f"unindexed: {claims - set(BOTH_WAYS)}; gone: {set(BOTH_WAYS) - claims}"
    )
    for name, words in BOTH_WAYS.items():
        for word, where in zip(("HOLDS", "CONTRADICTED"), words):
            where = where or NEVER[name, word]
            # the test named exists, and reads the word it is indexed for (or, for
            # NEVER, says which it cannot be)
            assert f'"{word}"' in _test_source(where), f"{where} never reads {word} for {name}"


# -- the claims with no test elsewhere for one word or both ----------------------------------------


def _summaries(rows):
    return pd.DataFrame(rows, columns=["config", "seed", "best_val_loss"])


def test_separation_both_ways():
    # Table 5's ordering over seeds: every Full Residual below every AttnOnly,
    # every AttnOnly below every FFNOnly
    ordered = _summaries(
        [
            ("FullResidual", 1, 4.5),
            ("AttnOnly", 1, 5.0),
            ("AttnOnly", 2, 6.0),
            ("FFNOnly", 1, 7.56),
            ("FFNOnly", 2, 7.57),
        ]
    )
    c = asymmetry.claim_separation(ordered, 7.58, "124M")
    assert c.verdict == "HOLDS" and c.facts["ordered"] and c.facts["attn_left"]
    assert c.facts["min_gap"] == pytest.approx(1.56) and "they do not overlap" in c.why
    # one AttnOnly seed above the best FFNOnly seed: the ranges overlap, beside
    # an AttnOnly that left the floor
    overlap = ordered.assign(best_val_loss=[4.5, 5.0, 7.6, 7.56, 7.57])
    c = asymmetry.claim_separation(overlap, 7.7, "124M")
    assert c.verdict == "CONTRADICTED" and not c.facts["ordered"] and c.facts["attn_left"]
    assert c.facts["min_gap"] == pytest.approx(-0.04) and "they overlap" in c.why


def test_seed_sensitivity_both_ways():
    # the paper's comparison is across scales: AttnOnly's spread at 124M against its spread at 10M
    # (Table 6's text: 0.355 against 0.003), and against FFNOnly's seeds' noise in the same sweep
    at_10m = _summaries(
        [("AttnOnly", 1, 1.577), ("AttnOnly", 2, 1.580), ("AttnOnly", 3, 1.583)]
        + [("FFNOnly", k, 3.350) for k in (1, 2, 3)]
    )

    def sensitivity(s, floor=7.58, ref=at_10m):
        return asymmetry.claim_seed_sensitivity(s, floor, reference=ref, reference_floor=FLOOR)

    # AttnOnly lands anywhere from 4.9 to 7.4 (the paper's 124M spread), FFNOnly on the floor to
    # the third digit
    ffn = [("FFNOnly", 1, 7.569), ("FFNOnly", 2, 7.570), ("FFNOnly", 3, 7.571)]
    s = _summaries([("AttnOnly", 1, 4.9), ("AttnOnly", 2, 6.0), ("AttnOnly", 3, 7.4), *ffn])
    c = sensitivity(s)
    assert c.verdict == "HOLDS" and c.facts["attn_std"] > 5 * c.facts["ref_std"]
    assert c.facts["ref_std"] == pytest.approx(0.003)
    assert "more than 5 times each counts as seed-sensitive" in c.why
    # 10 times FFNOnly's noise but only 3.3 times AttnOnly's spread at 10M: not seed-sensitive by
    # the paper's comparison (FFNOnly alone would have called it so, as it would the 10M
    # stand-in's own AttnOnly, at 60 times)
    tight = _summaries([("AttnOnly", 1, 5.99), ("AttnOnly", 2, 6.00), ("AttnOnly", 3, 6.01)])
    c = sensitivity(pd.concat([tight, _summaries(ffn)], ignore_index=True))
    assert c.verdict == "CONTRADICTED" and c.facts["attn_std"] > 5 * c.facts["ffn_std"]
    # within 5 times FFNOnly's noise in its own sweep: not either, whatever 10M shows
    noisy = _summaries([("FFNOnly", 1, 7.2), ("FFNOnly", 2, 7.6), ("FFNOnly", 3, 8.0)])
    c = sensitivity(pd.concat([s[s.config == "AttnOnly"], noisy], ignore_index=True))
    assert c.verdict == "CONTRADICTED" and c.facts["ffn_std"] == pytest.approx(0.4)
    # 8 times the 10M spread by the std, 2.6 times relative to the mean (the 124M losses three
    # times the 10M's, as a per-token loss is to a per-character one): the two measures of the
    # same quantity fall either side of the factor, a knife-edge
    wide = _summaries([("AttnOnly", 1, 4.976), ("AttnOnly", 2, 5.0), ("AttnOnly", 3, 5.024)])
    c = sensitivity(pd.concat([wide, _summaries(ffn)], ignore_index=True))
    assert c.verdict == "NOT TESTABLE HERE" and c.facts["edge"]
    assert "in different units" in c.why
    # an AttnOnly on the floor at 10M has no landing place to compare with
    floored = at_10m.assign(best_val_loss=FLOOR)
    assert sensitivity(s, ref=floored).verdict == "NOT TESTABLE HERE"
    # one seed at 10M: no spread
    assert sensitivity(s, ref=at_10m[at_10m.seed == 1]).verdict == "NOT TESTED"


def test_ffn_equals_noresidual_both_ways():
    at_10m = _summaries([("FFNOnly", 1, 3.350), ("FFNOnly", 2, 3.352), ("NoResidual", 1, 3.344)])
    c = asymmetry.claim_ffn_equals_noresidual([("cpu", at_10m)])
    assert c.verdict == "HOLDS" and c.facts["ffn_minus_noresidual"] == {"cpu": pytest.approx(0.007)}
    # a scale where FFNOnly ends 0.28 below No Residual: more than the escape
    # margin, so not the same floor
    at_124m = _summaries([("FFNOnly", 1, 7.30), ("NoResidual", 1, 7.584)])
    c = asymmetry.claim_ffn_equals_noresidual([("cpu", at_10m), ("cpu-bpe", at_124m)])
    assert c.verdict == "CONTRADICTED" and c.facts["ffn_minus_noresidual"][
        "cpu-bpe"
    ] == pytest.approx(-0.284)
    assert "cpu-bpe: FFNOnly - NoResidual -0.2840" in c.lines


def test_the_collapse_with_the_authors_dropout_can_never_hold():
    """claim_author_values_collapse reaches CONTRADICTED or NOT TESTABLE HERE, never HOLDS:
    ``plans.author_values`` trains no nanoGPT Full Residual with the author's dropout, so nothing
    shows that the stand-in can leave the floor with it, and the rule's control is a seed that did
    leave, which is the very seed that contradicts the claim."""
    assert not [
        e for e in plans.author_values() if e.impl == "nanogpt" and e.config_name != "AttnOnly"
    ]

    def with_dropout(bests):
        return pd.DataFrame(
            [("author's", "nanogpt", "AttnOnly", s, b) for s, b in enumerate(bests)],
            columns=["values", "impl", "config", "seed", "best_val_loss"],
        )

    # every mix of seeds on and off the floor, from none off it to all three
    outcomes = {}
    for bests in ([3.34, 3.34, 3.34], [2.3, 3.34, 3.34], [2.3, 2.4, 3.34], [2.3, 2.4, 2.5]):
        c = asymmetry.claim_author_values_collapse(with_dropout(bests), FLOOR)
        outcomes[c.facts["left"]] = c.verdict
    assert outcomes == {
        0: "NOT TESTABLE HERE",
        1: "CONTRADICTED",
        2: "CONTRADICTED",
        3: "CONTRADICTED",
    }
    assert "HOLDS" not in outcomes.values()


def test_the_routing_rule_can_only_be_not_testable_on_these_characters():
    """claim_routing_by_author_rule comes out HOLDS and CONTRADICTED on floors chosen for it
    (tests/test_scorecard.py); on this data it is NOT TESTABLE HERE whatever the runs, and this is
    the fact that makes it so: the bigram floor on the stand-in's own validation batches, which no
    position-blind model can pass, lies above the author's "routing not supported" threshold, so the
    rule cannot refute, and a test that cannot refute does not confirm either."""
    from lib.claims.paper import mixer_rule

    routing, not_routing = mixer_rule()
    bigram = mechanism.like_for_like(mechanism.floors(orders=(1, 2)))[2]
    assert bigram > not_routing  # 2.48 against 1.75
    runs = pd.DataFrame(
        {"config": "AttnOnly", "mixer": "local", "seed": [1, 2], "best_val_loss": [3.3, 3.31]}
    )
    c = mechanism.claim_routing_by_author_rule(runs, (routing, not_routing), bigram)
    # the author's rule reads these runs as routing, and still the verdict is not HOLDS
    assert c.facts["reading"] == "consistent with routing" and c.facts["unreachable"]
    assert c.verdict == "NOT TESTABLE HERE"


def _prefix(impl, config, vals, steps, schedule="constant", seed=1337):
    """A paper-shape run (summary row and history) evaluated every 100 steps
    with validation losses ``vals``."""
    hist = pd.DataFrame(
        {
            "step": [100 * i for i in range(len(vals))],
            "val_loss": vals,
            "impl": impl,
            "config": config,
            "seed": seed,
            "schedule": schedule,
        }
    )
    escape = next((s for s, v in zip(hist.step, vals) if v <= FLOOR - 0.1), None)
    summ = {
        "impl": impl,
        "config": config,
        "seed": seed,
        "steps": steps,
        "max_steps": 3000,
        "status": "partial" if steps < 3000 else "complete",
        "best_val_loss": min(vals),
        "escape_step": escape,
        "schedule": schedule,
    }
    return summ, hist


def _table(*runs):
    return paper_shape.prefix_table(
        pd.DataFrame([s for s, _ in runs]),
        pd.concat([h for _, h in runs], ignore_index=True),
        FLOOR,
    )


# Table 2's run: on the floor to the end
WHOLE_ON_FLOOR = _prefix("nanogpt", "AttnOnly", [4.17] + [3.35] * 30, 3000)
# the control, off the floor
WHOLE_FULL = _prefix("nanogpt", "FullResidual", [4.17] + [1.6] * 30, 3000)


def test_paper_shape_collapse_both_ways():
    # nanoGPT AttnOnly on the floor for all 3,000 steps beside a Full Residual that
    # left it: Table 2 at its shape
    c = paper_shape.claim_paper_shape_collapse(_table(WHOLE_ON_FLOOR, WHOLE_FULL))
    assert (
        c.verdict == "HOLDS"
        and not c.facts["prefix"]
        and c.facts["left_at"] is None
        and c.facts["full_left"]
    )
    # a prefix already 0.45 below Table 2's 3.3534, a best over the whole
    # run, which can only fall further
    left = _prefix("nanogpt", "AttnOnly", [4.17, 3.40, 3.10, 2.90], 300)
    c = paper_shape.claim_paper_shape_collapse(_table(left, WHOLE_FULL))
    assert c.verdict == "CONTRADICTED" and c.facts["left_at"] == 200 and c.facts["prefix"]
    assert c.why.startswith("already below the paper's best over its whole run")
    # the same prefix on the floor has not reached the end the claim is about
    on = _prefix("nanogpt", "AttnOnly", [4.17, 3.40, 3.36, 3.35], 300)
    assert paper_shape.claim_paper_shape_collapse(_table(on, WHOLE_FULL)).verdict == "NOT TESTED"
    # the collapse is joint: FFNOnly's prefix already below its own Table 2 best contradicts it
    # beside AttnOnly's whole run on the floor; on the floor, its whole run joins the evidence
    ffn_left = _prefix("nanogpt", "FFNOnly", [4.17, 3.40, 3.10, 2.90], 300)
    c = paper_shape.claim_paper_shape_collapse(_table(WHOLE_ON_FLOOR, WHOLE_FULL, ffn_left))
    assert c.verdict == "CONTRADICTED" and c.facts["below"] == ["FFNOnly"]
    # named for the runs that decide it: the joint claim fails, whichever configuration left
    assert paper_shape.collapse_short(c.facts) == "nanoGPT's joint collapse"
    # and so before AttnOnly's run exists at all
    ffn_off = _prefix("nanogpt", "FFNOnly", [4.17, 3.40, 3.30, 3.22], 300)
    c = paper_shape.claim_paper_shape_collapse(_table(ffn_off, WHOLE_FULL))
    assert c.verdict == "CONTRADICTED" and c.facts["below"] == ["FFNOnly"]
    ffn_on = _prefix("nanogpt", "FFNOnly", [4.17] + [3.35] * 30, 3000)
    c = paper_shape.claim_paper_shape_collapse(_table(WHOLE_ON_FLOOR, WHOLE_FULL, ffn_on))
    assert c.verdict == "HOLDS" and c.facts["whole"] == ["AttnOnly", "FFNOnly"]
    assert "rests on the whole runs of AttnOnly and FFNOnly" in c.why
    assert paper_shape.collapse_short(c.facts) == "nanoGPT AttnOnly and FFNOnly's joint collapse"
    assert paper_shape.collapse_short(c.facts) in paper_shape.COLLAPSE_SHORTS
    # a prefix on the floor is said as far as it trained, and is not among them
    nores = _prefix("nanogpt", "NoResidual", [4.17, 3.40, 3.36, 3.35], 300)
    c = paper_shape.claim_paper_shape_collapse(_table(WHOLE_ON_FLOOR, WHOLE_FULL, nores))
    assert c.verdict == "HOLDS" and c.facts["whole"] == ["AttnOnly"]
    assert "No Residual on the floor for the first 300 of 3,000 steps" in c.why
    assert paper_shape.collapse_short(c.facts) == "nanoGPT AttnOnly's joint collapse"


def test_the_paper_shape_collapse_row_names_the_runs_trained_whole_until_all_three_are():
    # the card's claim says on which runs a HOLDS rests, until all three partial configurations
    # are whole; a verdict not yet reached names nothing
    from lib.claims.registry import Evidence, card_row, entry

    def row(*runs):
        ev = Evidence(given={"prefix": SimpleNamespace(table=_table(*runs))})
        return card_row(entry("Joint collapse at the paper's own 10M shape"), ev)

    name = "Joint collapse at the paper's own 10M shape"
    assert row(WHOLE_ON_FLOOR, WHOLE_FULL).claim == f"{name}, on nanoGPT AttnOnly trained whole"
    ffn = _prefix("nanogpt", "FFNOnly", [4.17] + [3.35] * 30, 3000)
    assert row(WHOLE_ON_FLOOR, WHOLE_FULL, ffn).claim.endswith("AttnOnly and FFNOnly trained whole")
    nores = _prefix("nanogpt", "NoResidual", [4.17] + [3.35] * 30, 3000)
    assert row(WHOLE_ON_FLOOR, WHOLE_FULL, ffn, nores).claim == name
    on = _prefix("nanogpt", "AttnOnly", [4.17, 3.40, 3.36, 3.35], 300)
    assert row(on, WHOLE_FULL).claim == name


# -- no verdict fixed by a constant ----------------------------------------------------------------


def _literal_switches(source: str) -> list[str]:
    """Each ``knife_edge=`` or ``by_design=`` keyword in ``source`` whose value is a
    literal (True, False, 0, ...)."""
    return [
        f"line {n.value.lineno}: {n.arg}={ast.unparse(n.value)}"
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.keyword)
        and n.arg in ("knife_edge", "by_design")
        and isinstance(n.value, ast.Constant)
    ]


def test_no_knife_edge_or_by_design_in_lib_is_a_literal():
    # the check itself can fail: a literal is caught, a computed value and
    # the rule's own default are not
    assert _literal_switches(
        "verdict(1, 1, 1, knife_edge=True)\nverdict(1, 1, 1, by_design=False)"
    ) == ["line 1: knife_edge=True", "line 2: by_design=False"]
    assert (
        _literal_switches(
            "def verdict(a, *, knife_edge: bool = False): ...\nverdict(1, 1, 1, knife_edge=bool(e))"
        )
        == []
    )
    found = {
        str(p.relative_to(ROOT)): hits
        for p in sorted((ROOT / "lib").rglob("*.py"))
        if (hits := _literal_switches(p.read_text()))
    }
    assert found == {}, f"a verdict fixed by a constant: {found}"
    # and the switches are still used somewhere, computed: the check above has something to look at
    computed = [
        p
        for p in (ROOT / "lib").rglob("*.py")
        if "knife_edge=" in p.read_text() or "by_design=" in p.read_text()
    ]
    assert len(computed) >= 2


# -- the paper's shape decides the row, the tally and the abstract ---------------------------------


def test_a_stand_in_contradiction_beside_a_paper_shape_agreement_counts_as_the_paper_shapes():
    # The stand-in: nanoGPT AttnOnly seed 1337 leaves the floor (2.3), seed 42 stays, beside a
    # control that left it: a valid contradiction of the joint collapse there.
    stand_runs = pd.DataFrame(
        [
            ("FullResidual", 1337, 1.5),
            ("AttnOnly", 1337, 2.3),
            ("AttnOnly", 42, 3.36),
            ("FFNOnly", 1337, 3.36),
            ("NoResidual", 1337, 3.36),
        ],
        columns=["config", "seed", "best_val_loss"],
    ).assign(budget=1500)
    from lib.claims.registry import Evidence, card_row, entry

    ev = Evidence(
        chapters=(SimpleNamespace(name="joint_collapse", scale="cpu", stand_in=True),),
        given={
            "joint_collapse.summaries": stand_runs,
            "joint_collapse.floor": FLOOR,
            "edge": None,
            "robust": None,
            "prefix": SimpleNamespace(table=_table(WHOLE_ON_FLOOR, WHOLE_FULL)),
        },
    )
    stand = card_row(entry("Joint collapse: every partial"), ev)
    assert (stand.verdict, stand.scale) == (
        "CONTRADICTED",
        "stand-in",
    ) and "AttnOnly in 1 of 2 seeds" in stand.why
    # The paper's shape: nanoGPT AttnOnly on the floor for all 3,000 steps beside its
    # Full Residual, which left it.
    shape = card_row(entry("Joint collapse at the paper's own 10M shape"), ev)
    assert (shape.verdict, shape.scale) == ("HOLDS", "paper shape")
    row = sc.paper_shape_first(stand, shape)
    # the row: the paper shape's verdict, numbers and evidence; the stand-in's
    # verdict beside it, as a departure
    assert (row.verdict, row.scale, row.ours) == ("HOLDS", "paper shape", shape.ours)
    assert (
        row.stand_in.startswith("CONTRADICTED (cpu stand-in")
        and "departs from the paper's model" in row.stand_in
    )
    card = pd.DataFrame([vars(row)])
    # the tally: one claim, held, and no contradiction counted
    assert front_page.tally(card) == "**1 claims**: 1 HOLDS"
    # the abstract: the claim among those that hold, at the paper's shape; none contradicted
    text = front_page.abstract(card, pd.DataFrame({"finding": []}))
    assert (
        "1 holds: nanoGPT AttnOnly's joint collapse at the paper's own 10M shape (trained whole)."
        in text
    )
    assert "None is contradicted by a valid test." in text and "CONTRADICTED" not in text
