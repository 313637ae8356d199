"""The book's helpers: chapter parameters, tables, analyses, plots and the paper file."""

import json
import math

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from lib.book import Chapter, ParameterError, beside_paper, plots, seed_table
from lib.book.tables import OURS
from lib.claims import asymmetry, fixed_val_batches, gain_confound, joint_collapse
from lib.claims.paper import paper_value, paper_values
from lib.engine import plans, results

# -- chapter parameters ------------------------------------------------------------------


def params(**kw):
    return {"scale": "auto", "seed": None, "steps": None, "runs_dir": None, "device": "cpu", **kw}


def test_chapter_defaults_to_the_labelled_stand_in_without_cuda():
    ch = Chapter.open("124m_sweep", params(), announce=False)
    assert ch.scale == plans.STAND_IN_124M and ch.stand_in
    assert "STAND-IN for the paper's 124M" in ch.banner()


@pytest.mark.parametrize(
    "bad, message",
    [
        (
            {"sede": 7},
            (
                "unknown parameter(s) sede; valid: scale, seed, steps, runs_dir, device, compile, "
                "eval_batches"
            ),
        ),
        ({"eval_batches": 2}, "eval_batches applies to retraining; give a seed too"),
        ({"seed": 7, "eval_batches": 0}, "eval_batches must be None or a positive integer, got 0"),
        ({"scale": "bogus"}, "valid: auto, cpu-bpe-ramp, cpu-bpe, 124M"),
        ({"seed": 7.5}, "seed must be a non-negative integer"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"steps": 20}, "give a seed too"),
        ({"device": "tpu"}, "valid: auto, cpu, cuda"),
        ({"seed": 7, "runs_dir": "runs"}, "is in the released runs/, which a chapter never writes"),
        # papermill -p runs_dir 5
        ({"runs_dir": 5}, "runs_dir must be None or a folder's path (a string), got 5"),
    ],
)
def test_bad_chapter_parameters_name_the_valid_ones(bad, message):
    with pytest.raises(ParameterError) as e:
        Chapter.open("124m_sweep", params(**bad), announce=False)
    assert message in str(e.value)


def test_imports_and_functions_are_not_mistaken_for_parameters():
    ns = params(SEEDS=(1, 2), pd=pd, helper=lambda: None)
    assert Chapter.open("10m_asymmetry", ns, announce=False).scale == "cpu"


def test_unknown_chapter_is_refused():
    with pytest.raises(ParameterError, match="valid: joint_collapse"):
        Chapter.open("nope", params(), announce=False)


def test_a_reading_chapter_checks_its_one_parameter(tmp_path, capsys):
    from lib.book import open_runs
    from lib.engine.runs import RUNS_DIR

    assert open_runs("mechanism", {"runs_dir": None}) == RUNS_DIR
    # says what trains its runs
    assert "python -m lib sweep --plan mixer_test" in capsys.readouterr().out
    assert open_runs("escape_and_bundle", {"runs_dir": str(tmp_path)}, announce=False) == tmp_path
    with pytest.raises(ParameterError, match="valid: runs_dir"):
        open_runs("mechanism", {"seed": 7}, announce=False)  # nothing is retrained here
    with pytest.raises(ParameterError, match="is not a directory"):
        open_runs("mechanism", {"runs_dir": str(tmp_path / "nope")}, announce=False)
    # was a TypeError
    with pytest.raises(ParameterError, match="runs_dir must be None or a folder's path"):
        open_runs("mechanism", {"runs_dir": 5}, announce=False)
    # the front page
    assert open_runs("what_holds", {"runs_dir": str(tmp_path)}, announce=False) == tmp_path
    with pytest.raises(ParameterError, match="valid: mechanism, escape_and_bundle, what_holds"):
        open_runs("joint_collapse", {}, announce=False)


def test_retraining_never_targets_the_released_runs(tmp_path):
    ch = Chapter.open("124m_sweep", params(seed=7, steps=20), announce=False)
    assert ch.runs_dir.name == "runs-retrain"
    exps = ch.retrain_experiments()
    # NoResidual: the 1337 anchor
    assert [e.config_name for e in exps] == ["FullResidual", "AttnOnly", "FFNOnly"]
    assert {e.seed for e in exps} == {7} and {e.train.max_steps for e in exps} == {20}


def test_gain_chapter_retrains_every_gain_variant():
    ch = Chapter.open("gain_confound", params(seed=3, steps=5), announce=False)
    modes = [(e.gain_mode, e.gain) for e in ch.retrain_experiments()]
    assert modes[0] == (None, 1.0) and len(modes) == 9


# -- tables ---------------------------------------------------------------------------------


def summaries():
    return pd.DataFrame(
        {
            "config": ["AttnOnly", "AttnOnly", "FFNOnly", "FFNOnly", "FullResidual"],
            "seed": [1, 2, 1, 2, 1],
            "best_val_loss": [1.5, 1.7, 3.3, 3.4, 1.4],
            "escape_step": [300, 400, None, None, 100],
        }
    )


def test_seed_table_uses_sample_std_and_lists_escape_steps():
    t = seed_table(summaries()).set_index("config")
    assert list(t.index) == ["FullResidual", "AttnOnly", "FFNOnly"]  # the paper's order
    assert t.loc["AttnOnly", "mean"] == pytest.approx(1.6)
    assert t.loc["AttnOnly", "std"] == pytest.approx(np.std([1.5, 1.7], ddof=1))
    assert t.loc["FFNOnly", "escape_steps"] == "none, none"


def test_beside_paper_shows_the_difference_and_missing_rows():
    paper = pd.DataFrame(
        {
            "config": ["AttnOnly", "NoResidual"],
            "value": [1.58, 3.356],
            "std": [0.003, None],
            "n": [8, 1],
            "reported": ["1.580 ± 0.003", "3.356"],
        }
    )
    t = beside_paper(seed_table(summaries()), paper, "Phase 3").set_index("config")
    assert t.loc["AttnOnly", "ours - paper"] == pytest.approx(0.02)
    assert t.loc["AttnOnly", "paper (Phase 3)"] == "1.580 ± 0.003 (n=8)"  # the paper's digits
    assert t.loc["NoResidual", OURS] == "missing" and math.isnan(
        t.loc["NoResidual", "ours - paper"]
    )
    assert "population" not in t.loc["AttnOnly", OURS]
    # where the paper's ± is a population std (ddof = 0), both columns say so
    # and ours is given that way too
    t = beside_paper(
        seed_table(summaries()), paper.assign(population_std=[True, False]), "Phase 3"
    ).set_index("config")
    assert t.loc["AttnOnly", "paper (Phase 3)"] == "1.580 ± 0.003 (n=8), ± population std"
    assert t.loc["AttnOnly", OURS].endswith(
        f"; population std {np.std([1.5, 1.7]):.4f}, as the paper"
    )
    # a stand-in loss minus a paper-scale loss measures nothing: no difference column then
    assert "ours - paper" not in beside_paper(
        seed_table(summaries()), paper, "Phase 3", stand_in=True
    )


def test_paper_values_keep_the_digits_the_paper_reports():
    from lib.claims.paper import paper_values

    t5 = paper_values(ref="Table 5", metric="best_val_loss").set_index("config")
    assert (
        t5.loc["AttnOnly", "reported"] == "6.037 ± 0.355" and t5.loc["AttnOnly", "value"] == 6.037
    )
    assert t5.loc["NoResidual", "reported"] == "7.584" and math.isnan(t5.loc["NoResidual", "std"])
    assert paper_values(ref="Fig. 4", config="FFNOnly").reported.item() == "3.350 ± 0.002"


# -- analyses -------------------------------------------------------------------------------


def test_asymmetry_quantities_are_hand_computable():
    a = asymmetry.asymmetry(summaries())
    assert a["mean_gap"] == pytest.approx(3.35 - 1.6)
    assert a["min_gap"] == pytest.approx(3.3 - 1.7)  # best FFNOnly minus worst AttnOnly
    assert a["asym_ratio"] == pytest.approx(3.35 / 1.6)
    assert a["attn_gap_pct"] == pytest.approx(100 * (1.6 / 1.4 - 1))


def test_collapse_verdicts_count_escaped_seeds():
    v = joint_collapse.collapse_verdicts(
        summaries().assign(escape_step=[300, None, None, None, 100]), floor=3.35
    )
    v = v.set_index("config")
    assert v.loc["AttnOnly", "verdict"] == "seed-dependent: 1 of 2 seeds escaped"
    assert (
        v.loc["FFNOnly", "escaped"] == 0
        and "not shown to collapse for good" in v.loc["FFNOnly", "verdict"]
    )
    assert v.loc["FullResidual", "verdict"] == "escaped the floor in every seed"


def history(config, grads):
    n = len(grads)
    return pd.DataFrame(
        {
            "config": config,
            "seed": 1337,
            "step": [100 * i for i in range(n)],
            "val_loss": 1.0,
            # block 0's FFN carries the values; attention's large norm must not count (Fig. 2a)
            "grad_norm_attn": [[9.0, 9.0]] * n,
            "grad_norm_mlp": [[g, 9.0] for g in grads],
            "hidden_growth": [1.0 + i for i in range(n)],
        }
    )


def test_layer0_grad_finds_the_step_from_which_it_stays_starved():
    hist = pd.concat(
        [history("AttnOnly", [0.5, 0.2, 1e-4, 0.0, 0.0]), history("FullResidual", [0.5] * 5)]
    )
    g = joint_collapse.layer0_grad(hist).set_index("config")
    assert g.loc["AttnOnly", "starved_from_step"] == 200
    assert g.loc["AttnOnly", "final"] == 0.0
    assert pd.isna(g.loc["FullResidual", "starved_from_step"])  # never starved
    growth = joint_collapse.final_values(hist, "hidden_growth").set_index("config")
    assert growth.loc["AttnOnly", "hidden_growth"] == 5.0
    # Fig. 2 is seed 1337 of the released runs: another seed or a
    # retrained run is not read in its place
    other = pd.concat(
        [
            hist.assign(source="released"),
            history("AttnOnly", [0.5] * 5).assign(seed=0, source="released"),
            history("AttnOnly", [0.5] * 5).assign(source="retrained"),
        ]
    )
    assert (
        joint_collapse.layer0_grad(other).set_index("config").loc["AttnOnly", "starved_from_step"]
        == 200
    )
    assert joint_collapse.layer0_grad(other, source="retrained").config.tolist() == ["AttnOnly"]


def test_eval_noise_matches_the_standard_error():
    rng = np.random.default_rng(0)
    per_batch = rng.normal(2.0, 0.1, size=5000)
    assert fixed_val_batches.eval_noise(per_batch, 50, n_resamples=4000) == pytest.approx(
        0.1 / math.sqrt(50), rel=0.1
    )


# -- plots ----------------------------------------------------------------------------------


def long_history():
    rows = [
        {
            "config": c,
            "seed": s,
            "step": st,
            "val_loss": v + 0.01 * s - st / 1000,
            "source": "released",
        }
        for c, v in (("AttnOnly", 2.0), ("FFNOnly", 3.3))
        for s in (1, 2)
        for st in (0, 100, 200)
    ]
    return pd.DataFrame(rows)


def test_seed_explorer_has_a_trace_per_config_and_seed_and_a_working_menu():
    p = plots.seed_explorer(long_history(), floor=3.35, div_id="x-seeds", title="t")
    assert len(p.fig.data) == 4
    buttons = p.fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["all", "seed 1", "seed 2"]
    names = [t.name for t in p.fig.data]
    assert [n for n, vis in zip(names, buttons[2].args[0]["visible"]) if vis] == [
        "AttnOnly seed 2",
        "FFNOnly seed 2",
    ]
    html = p.html()
    assert 'id="x-seeds"' in html and "<script src" not in html and "cdn" not in html.lower()
    json.dumps(p._repr_mimebundle_())  # what Jupyter sends must be plain JSON (numpy seeds are not)


def test_static_figures_draw_what_they_are_given():
    hist = long_history()
    ax = plots.val_curves(hist, 3.35, "t")
    assert len(ax.lines) == 5  # four runs and the floor
    diag = pd.concat([history("AttnOnly", [0.5, 0.0]), history("FFNOnly", [0.3, 0.0])])
    fig = plots.diagnostics_figure(diag, "t")
    assert [len(a.lines) for a in fig.axes] == [2, 2]
    # lower than 1337, so "lowest seed" would pick it
    other_seed = history("AttnOnly", [9.0, 9.0]).assign(seed=42)
    # -p seed 1337 beside the released run
    retrained = history("AttnOnly", [7.0, 7.0]).assign(source="retrained")
    fig = plots.diagnostics_figure(
        pd.concat([diag.assign(source="released"), other_seed, retrained]), "t"
    )
    # released seed 1337
    assert [list(ln.get_ydata()) for ln in fig.axes[0].lines] == [[0.5, 0.0], [0.3, 0.0]]
    curves = pd.DataFrame(
        {
            "mode": ["runtime"] * 4 + ["weight"] * 4,
            "gain": [1.0, 1.0, 2.0, 2.0] * 2,
            "step": [0, 100] * 4,
            "val_loss": np.linspace(2, 3, 8),
        }
    )
    assert [len(a.lines) for a in plots.gain_figure(curves, "t").axes] == [2, 2]
    with_floor = plots.gain_figure(curves, "t", floor=3.35)
    assert [ln.get_label() for ln in with_floor.axes[0].lines][-1] == "unigram floor 3.3500"
    assert with_floor.axes[0].get_ylabel() == "validation loss (nats/token)"
    both = pd.concat([curves.assign(source="released"), curves.assign(source="retrained")])
    lines = plots.gain_figure(both, "t").axes[0].lines
    assert [ln.get_label() for ln in lines] == [
        "g = 1",
        "g = 1 (retrained)",
        "g = 2",
        "g = 2 (retrained)",
    ]


def test_gain_explorer_keeps_a_retrained_seed_apart():
    curves = pd.DataFrame(
        {
            "mode": "runtime",
            "gain": [2.0, 2.0, 2.0, 2.0],
            "step": [0, 100, 0, 100],
            "val_loss": [3.0, 2.0, 3.1, 2.5],
            "source": ["released"] * 2 + ["retrained"] * 2,
        }
    )
    p = plots.gain_explorer(curves, "g", "t")
    assert [t.name for t in p.fig.data] == ["runtime g=2", "runtime g=2 (retrained)"]
    assert [len(t.x) for t in p.fig.data] == [2, 2]


def test_empty_chapters_still_draw():
    empty = pd.DataFrame(columns=["config", "seed", "step", "val_loss", "source"])
    assert len(plots.val_curves(empty, 3.35, "t").lines) == 1
    assert len(plots.seed_explorer(empty, 3.35, "e", "t").fig.data) == 0


# -- the paper file -------------------------------------------------------------------------


def test_paper_values_carry_their_reference_and_match_the_abstract():
    df = paper_values()
    assert df.ref.notna().all() and (df.ref.str.len() > 0).all()
    assert paper_value(ref="Table 5", config="AttnOnly", metric="best_val_loss") == 6.037
    assert paper_value(ref="Fig. 4", config="FFNOnly") == 3.350
    assert paper_value(ref="Table 2", config="FullResidual") == 1.4751


def test_paper_lookup_errors_are_clear():
    with pytest.raises(KeyError, match="valid: ref"):
        paper_values(tabel="Table 5")
    with pytest.raises(KeyError, match="expected exactly one"):
        paper_value(ref="Table 5")


def drawn_curves(ax):
    """(title, sorted y-data of the curves) of a ``val_curves`` axis, the floor line left out."""
    curves = [
        tuple(np.round(line.get_ydata(), 6))
        for line in ax.lines
        if "floor" not in str(line.get_label())
    ]
    return ax.get_title(), sorted(curves)


def test_seed_widget_redraws_for_the_chosen_seed():
    import matplotlib.pyplot as plt

    plt.close("all")
    hist = long_history()
    w = plots.seed_widget(hist, 3.35)
    pick = w.children[0]
    assert list(pick.options) == ["all", 1, 2]
    title, curves = drawn_curves(plt.gcf().axes[0])
    # two configurations x two seeds
    assert title == "validation loss, seed all" and len(curves) == 4
    pick.value = 2  # the observer draws a new figure with seed 2's curves alone
    assert len(plt.get_fignums()) == 2
    seed2 = sorted(
        tuple(np.round(h.sort_values("step").val_loss.to_numpy(), 6))
        for _, h in hist[hist.seed == 2].groupby("config")
    )
    assert drawn_curves(plt.gcf().axes[0]) == ("validation loss, seed 2", seed2)
    plt.close("all")


def test_claim_verdicts_follow_the_numbers():
    s = summaries()  # AttnOnly 1.5/1.7, FFNOnly 3.3/3.4, FullResidual 1.4
    a = asymmetry.claim_asymmetry(s, floor=3.35)
    assert a.verdict == "HOLDS" and (a.facts["attn_left"], a.facts["ffn_on_floor"]) == (2, 2)
    # FFNOnly now below the floor too
    assert asymmetry.claim_asymmetry(s, floor=3.6).verdict == "CONTRADICTED"
    # AttnOnly left the floor, Full Residual too
    jc = joint_collapse.claim_joint_collapse(s, floor=3.35)
    assert jc.verdict == "CONTRADICTED" and jc.facts["left_floor"] == {"AttnOnly": 2, "FFNOnly": 0}
    edge = joint_collapse.claim_joint_collapse(s, floor=3.35, edge="seed 1337 flips under rounding")
    assert edge.verdict == "NOT TESTABLE HERE" and "knife-edge" in edge.why
    sep = asymmetry.claim_separation(s, 3.35, "124M")
    assert sep.verdict == "HOLDS" and sep.facts["min_gap"] == pytest.approx(1.6)
    assert "paper at 124M, §6.2.1: 1.060" in sep.text
    sep10 = asymmetry.claim_separation(s, 3.35, "10M")
    assert "at least 1.76 below the FFNOnly floor; ours: 1.650 below our FFNOnly mean" in sep10.text
    assert (
        joint_collapse.claim_joint_collapse(s[s.config == "FullResidual"], 3.35).verdict
        == "NOT TESTED"
    )
    # AttnOnly on the floor
    stuck = s.assign(best_val_loss=s.best_val_loss.where(s.config != "AttnOnly", 3.36))
    assert asymmetry.claim_separation(stuck, 3.35, "124M").verdict == "NOT TESTABLE HERE"


def test_presets_table_shows_table_1_and_labels_the_stand_ins():
    from lib.book import presets_table

    t = presets_table()
    assert (
        t.loc["parameters", "124M"] == "124,356,864"
        and t.loc["batch size x accum", "124M"] == "16 x 8"
    )
    assert (
        t.loc["paper scale?", "cpu"] == "no: CPU stand-in"
        and t.loc["paper scale?", "10M"] == "yes (Table 1)"
    )


def test_budget_counts_tokens_from_the_preset_and_runs_from_the_summaries():
    from lib.book import budget_table

    summ = pd.DataFrame(
        [
            {"config": "FullResidual", "best_val_loss": 1.7, "wall_s": 420.0},
            {"config": "FullResidual", "best_val_loss": 1.8, "wall_s": 480.0},
            {"config": "FFNOnly", "best_val_loss": 3.34, "wall_s": 600.0},
        ]
    )
    # cpu: batch 32 x block 128, 1,500 steps
    b = budget_table("cpu", "residualgpt", summ, floor=3.35)["cpu"]
    assert b["tokens per step (batch x accum x block)"] == "4,096"
    assert b["tokens seen per run (epochs of the train split)"].startswith("6,144,000 (")
    assert b["FullResidual: best val below the chapter's floor by"].startswith(
        "1.550 nats, worst seed"
    )
    # costs are the reproducibility chapter's
    assert "wall minutes per run, mean (min-max)" not in b
    empty = budget_table("cpu", "residualgpt", summ.iloc[:0], floor=3.35)["cpu"]
    assert (
        empty["finished runs"] == "0"
        and empty["FullResidual: best val below the chapter's floor by"] == "no run"
    )


def test_the_intro_describes_the_stand_ins_as_lib_config_defines_them():
    """intro.md is prose (no kernel), so its description of the presets is checked here."""
    import re
    from pathlib import Path

    from lib.engine.config import get_preset
    from lib.engine.model import GPT

    text = " ".join(Path(__file__).parents[1].joinpath("book", "intro.md").read_text().split())
    for scale in ("cpu", plans.STAND_IN_124M):
        e = get_preset(scale)
        m = re.search(
            rf"`{scale}`(?: \(|: )([\d.]+)M parameters, (\d+) layers × (\d+), .*?([\d,]+) steps",
            text,
        )
        assert m, f"intro.md no longer describes `{scale}` in the expected form"
        assert float(m[1]) == round(GPT(e.model).num_params() / 1e6, 1)
        assert (int(m[2]), int(m[3])) == (e.model.n_layer, e.model.n_embd)
        assert int(m[4].replace(",", "")) == e.train.max_steps


def test_the_124m_chapter_opening_describes_both_presets_as_lib_config_defines_them():
    """The chapter's opening is prose (markdown), so its preset facts are checked here."""
    import re
    from pathlib import Path

    import nbformat

    from lib.engine.config import get_preset

    nb = nbformat.read(Path(__file__).parents[1] / "book" / "124m_sweep.ipynb", as_version=4)
    # the prose that sets the GPU's chapter beside the CPU's, after the computed answer
    text = next(
        " ".join(c.source.split())
        for c in nb.cells
        if c.cell_type == "markdown" and "On a GPU this chapter" in c.source
    )
    paper, stand_in = get_preset("124M"), get_preset(plans.STAND_IN_124M)
    m = re.search(r"12 layers × (\d+), ([\d,]+) steps", text)
    assert m, "the opening no longer describes the 124M preset in the expected form"
    assert paper.model.n_layer == 12 and int(m[1]) == paper.model.n_embd
    assert int(m[2].replace(",", "")) == paper.train.max_steps
    m = re.search(r"GPT-2 BPE, so a ([\d,]+)-way output layer\), its depth \((\d+) layers\)", text)
    assert m, "the opening no longer describes the stand-in in the expected form"
    assert int(m[1].replace(",", "")) == stand_in.model.vocab_size == paper.model.vocab_size
    assert int(m[2]) == stand_in.model.n_layer == paper.model.n_layer
    # the warm-up the stand-in shares with the 124M, and stops inside
    m = re.search(
        r"slope of its ([\d,]+)-step warm-up, which the stand-in's run stops inside", text
    )
    assert (
        m and int(m[1].replace(",", "")) == paper.train.warmup_steps == stand_in.train.warmup_steps
    )
    assert stand_in.train.max_steps < stand_in.train.warmup_steps
    assert f"`{plans.STAND_IN_124M}`" in text


def test_verdict_sets_the_claims_verdict_in_bold_after_its_lines():
    from lib.book import Verdict
    from lib.claims.verdicts import Claim

    claim = Claim(
        "NOT TESTABLE HERE",
        "the control did not leave the floor",
        {},
        ("AttnOnly: 3 of 3 seeds HOLDS",),
    )
    v = Verdict(claim, "a line of context\na second line")
    md = v._repr_markdown_()
    # a verdict word inside a Claim's line is not its verdict
    assert "> AttnOnly: 3 of 3 seeds HOLDS  " in md
    assert (
        "> **NOT TESTABLE HERE**: the control did not leave the floor  " in md
        and md.count("**") == 4
    )
    assert repr(v).splitlines() == [
        "AttnOnly: 3 of 3 seeds HOLDS",
        "NOT TESTABLE HERE: the control did not leave the floor",
        "a line of context",
        "a second line",
    ]
    # in the book the verdict sentence comes first and what it rests on folds beneath it
    page = v._repr_html_()
    assert (
        page.index("<strong>NOT TESTABLE HERE</strong>")
        < page.index("<details")
        < page.index("3 of 3 seeds")
    )
    # the heading and the one verdict word
    assert "a second line" in page and page.count("<strong>") == 2
    # a chapter's summary: each claim's verdict line alone, each reading's first line
    assert repr(Verdict(claim, "a line of context\na second line", short=True)).splitlines() == [
        "NOT TESTABLE HERE: the control did not leave the floor",
        "a line of context",
    ]
    # a verdict is decided in a claim function, never inside a sentence
    with pytest.raises(ValueError, match="decide it in a claim function"):
        Verdict(claim, "a sentence that decides: NOT TESTED yet")
    with pytest.raises(ValueError, match="HOLDS, CONTRADICTED, NOT TESTABLE HERE, NOT TESTED"):
        Claim("DOES NOT HOLD", "an old word")


def test_cross_scale_rows_use_the_seeds_of_the_paper_row(tmp_path, monkeypatch, fake_run):
    import lib.book.tables
    from lib.engine.config import get_preset

    monkeypatch.setattr(lib.book.tables, "RUNS_DIR", tmp_path)
    for config, seed, best in [
        ("FullResidual", 1337, 1.5),
        ("AttnOnly", 1337, 1.8),
        ("FFNOnly", 1337, 3.3),
        ("NoResidual", 1337, 3.35),
        ("AttnOnly", 0, 2.0),
        ("FFNOnly", 0, 3.4),
    ]:
        fake_run(get_preset("cpu", "residualgpt", config, seed), tmp_path, best)
    t = lib.book.tables.cross_scale_table().set_index(["paper scale", "impl", "paper row"])
    original, phase3 = (
        t.loc[("10M", "residualgpt", "original")],
        t.loc[("10M", "residualgpt", "phase3")],
    )
    # Table 3's seeds only
    assert original["our seeds"] == "1337" and original["our AttnOnly"] == 1.8
    # every seed, each configuration's own: Full Residual and No Residual have only seed 1337 here
    assert (
        phase3["our seeds"]
        == "Full Residual 1337; AttnOnly 1337, 0; FFNOnly 1337, 0; No Residual 1337"
    )
    assert phase3["our AttnOnly"] == 1.9
    assert t.loc[("124M", "residualgpt", "controlled"), "our seeds"] == "none yet"
    # one configuration of the four trained: named, not read as the row's seeds
    fake_run(get_preset("cpu-bpe-ramp", "residualgpt", "NoResidual", 1337), tmp_path, 6.5)
    t = lib.book.tables.cross_scale_table().set_index(["paper scale", "impl", "paper row"])
    assert t.loc[("124M", "residualgpt", "controlled"), "our seeds"] == "No Residual 1337"
    assert t.loc[("124M", "nanogpt", "-"), "our scale"] == "not run"
    # AttnOnly's best, 1.8, is far below the floor (3.35 - 0.1): its history
    # escapes, so the summary says so too
    assert original["our AttnOnly left the floor"] == "1 of 1"
    assert [tuple(i) for i in t.index] == [
        ("10M", "nanogpt", "-"),
        ("10M", "residualgpt", "original"),
        ("10M", "residualgpt", "phase3"),
        ("124M", "nanogpt", "-"),
        ("124M", "residualgpt", "original"),
        # Table 6's row order
        ("124M", "residualgpt", "controlled"),
    ]


def test_joint_collapse_verdict_needs_full_residual_off_the_floor_and_reports_no_residual():
    s = pd.concat(
        [
            summaries(),
            pd.DataFrame(
                {
                    "config": ["NoResidual"],
                    "seed": [1],
                    "best_val_loss": [3.38],
                    "escape_step": [None],
                }
            ),
        ],
        ignore_index=True,
    )
    ffn_only = s[s.config != "AttnOnly"]
    c = joint_collapse.claim_joint_collapse(ffn_only, floor=3.38)
    assert c.verdict == "HOLDS" and c.facts["left_floor"] == {"FFNOnly": 0, "NoResidual": 0}
    assert (
        "FFNOnly: best 3.300-3.400 over 2 seed(s), ON the floor" in c.text
        and "-0.030 from No Residual" in c.text
    )
    stuck = ffn_only.assign(
        best_val_loss=ffn_only.best_val_loss.where(ffn_only.config != "FullResidual", 3.4)
    )
    c = joint_collapse.claim_joint_collapse(stuck, floor=3.38)
    assert c.verdict == "NOT TESTABLE HERE" and not c.facts["full_left"]
    v = joint_collapse.collapse_verdicts(s, floor=3.45).set_index("config")
    assert (
        v.loc["FFNOnly", "mean minus NoResidual"] == -0.03
        and v.loc["NoResidual", "mean minus NoResidual"] == 0
    )


def test_mechanism_claims_compare_with_section_4_1():
    hist = pd.concat(
        [
            history("FullResidual", [0.5] * 5),
            history("AttnOnly", [0.5, 0.2, 1e-4, 0.0, 0.0]),
            history("FFNOnly", [0.5, 0.0, 0.0, 0.0, 0.0]),
            history("NoResidual", [0.0] * 5),
        ]
    )
    grads = joint_collapse.layer0_grad(hist)
    s = pd.DataFrame(
        {
            "config": ["FullResidual", "AttnOnly", "FFNOnly", "NoResidual"],
            "seed": 1337,
            "best_val_loss": [1.5, 3.4, 3.4, 3.4],
            "escape_step": [100, None, None, None],
        }
    )
    missing = joint_collapse.claim_starvation(grads[grads.config != "NoResidual"], s, 3.35)
    assert missing.verdict == "NOT TESTED" and "missing for NoResidual" in missing.why
    c = joint_collapse.claim_starvation(grads, s, 3.35)
    assert c.verdict == "HOLDS" and c.facts["collapsed"] == ["AttnOnly", "FFNOnly", "NoResidual"]
    assert c.facts["starved"] == {
        "FullResidual": False,
        "AttnOnly": True,
        "FFNOnly": True,
        "NoResidual": True,
    }
    assert "AttnOnly final 0 (starved from step 200; paper 0.000)" in c.text
    # AttnOnly awake and off the floor: judged on the two that collapsed, which starved
    awake = pd.concat(
        [
            history("FullResidual", [0.5] * 3),
            history("AttnOnly", [0.5] * 3),
            history("FFNOnly", [0.0] * 3),
            history("NoResidual", [0.0] * 3),
        ]
    )
    left = s.assign(best_val_loss=[1.5, 1.9, 3.4, 3.4])
    c = joint_collapse.claim_starvation(joint_collapse.layer0_grad(awake), left, 3.35)
    assert (
        c.verdict == "HOLDS"
        and c.facts["collapsed"] == ["FFNOnly", "NoResidual"]
        and "AttnOnly left" in c.why
    )
    # a collapsed configuration whose gradient did not starve contradicts it
    assert (
        joint_collapse.claim_starvation(joint_collapse.layer0_grad(awake), s, 3.35).verdict
        == "CONTRADICTED"
    )
    growth = pd.DataFrame(
        {"config": ["FullResidual", "AttnOnly", "FFNOnly"], "hidden_growth": [1.2, 4.5, 88.8]}
    )
    c = joint_collapse.claim_growth_order(growth, s, 3.35)
    assert c.verdict == "CONTRADICTED" and c.facts["order"] == [
        "FFNOnly",
        "AttnOnly",
        "FullResidual",
    ]
    assert c.lines[0] == (
        "Hidden-state growth: paper AttnOnly 14.03 > FFNOnly 5.37 > FullResidual 1.38; "
        "ours FFNOnly 88.80 > AttnOnly 4.50 > FullResidual 1.20."
    )
    assert (
        joint_collapse.claim_growth_order(
            growth.assign(hidden_growth=[1.2, 9.0, 3.0]), s, 3.35
        ).verdict
        == "HOLDS"
    )
    assert joint_collapse.claim_growth_order(growth.iloc[:2], s, 3.35).verdict == "NOT TESTED"
    # AttnOnly left
    assert joint_collapse.claim_growth_order(growth, left, 3.35).verdict == "NOT TESTABLE HERE"


def test_eval_noise_claim_sets_the_gap_against_the_noise():
    noise = pd.DataFrame(
        {
            "config": ["AttnOnly", "FFNOnly"],
            "seed": 1337,
            "source": "released",
            "eval_batches": 50,
            "fixed_val": [1.9, 3.3],
            "random_mean": [1.91, 3.31],
            "random_eval_std": [0.003, 0.004],
        }
    )
    c = fixed_val_batches.claim_eval_noise(fixed_val_batches.gap_vs_noise(noise), noise)
    assert (
        "AttnOnly seed 1337 (released): a random 50-batch evaluation scatters with std 0.0030 "
        "around 1.9100"
    ) in c.text
    assert c.lines[-1] == (
        "Seed 1337 (released): the FFNOnly - AttnOnly gap is 1.400, 280 standard deviations of "
        "that noise: evaluation noise cannot move a model across it at this scale."
    )
    # the noise is far too small, and the author's AttnOnly trains on the floor
    # (its printed log): no explanation
    assert c.verdict == "CONTRADICTED" and round(c.facts["gap_over_noise"]) == 280
    assert "3.3161" in c.why and "0.0008 from NoResidual's" in c.why
    author = pd.DataFrame(
        {"config": ["AttnOnly", "NoResidual"], "cell": 13, "train_loss": [2.9, 3.3153]}
    )
    # progress in training that validation could hide: the explanation
    # stays open, whatever the noise
    c = fixed_val_batches.claim_eval_noise(
        fixed_val_batches.gap_vs_noise(noise), noise, author=author
    )
    assert c.verdict == "HOLDS" and "progress its validation could hide" in c.why
    # or noise large enough beside the gap
    loud = noise.assign(random_eval_std=[0.2, 0.2])
    assert (
        fixed_val_batches.claim_eval_noise(fixed_val_batches.gap_vs_noise(loud), loud).verdict
        == "HOLDS"
    )
    empty = noise.iloc[0:0]
    assert (
        fixed_val_batches.claim_eval_noise(fixed_val_batches.gap_vs_noise(empty), empty).verdict
        == "NOT TESTED"
    )

    def reading(**kw):
        n = noise.assign(**kw)
        return fixed_val_batches.claim_eval_noise(fixed_val_batches.gap_vs_noise(n), n).lines[-1]

    assert reading(random_eval_std=[0.2, 0.2]).endswith(
        "only 4.9 standard deviations of that noise: evaluation "
        "noise is large enough to matter here."
    )
    assert reading(fixed_val=[3.3, 1.9]).endswith("no separation to explain.")
    assert reading(random_eval_std=[0.0, 0.0]).endswith("cannot be compared.")


def test_best_val_strip_sets_the_paper_beside_ours_on_one_loss_axis():
    s = summaries().assign(escape_step=[300, 400, None, None, 100])
    paper = paper_values(ref="Table 5", metric="best_val_loss")
    p = plots.best_val_strip(
        s, paper, floor=3.35, div_id="strip", title="t", paper_label="paper, Table 5"
    )
    ours, theirs = (
        [t for t in p.fig.data if t.name.startswith("ours")],
        [t for t in p.fig.data if "paper" in t.name],
    )
    assert {t.yaxis for t in ours} == {"y"} and [t.yaxis for t in theirs] == ["y2"]
    assert p.fig.layout.yaxis2.matches == "y"  # one loss scale: the same loss at the same height
    assert list(theirs[0].customdata) == list(paper.reported)  # hover shows the paper's own digits
    floor_lines = [sh for sh in p.fig.layout.shapes if sh.y0 == 3.35]
    assert len(floor_lines) == 1 and floor_lines[0].yref == "y"  # our floor on our panel only
    assert len(plots.best_val_strip(s, None, 3.35, "s", "t").fig.data) == 3


def test_noise_figure_gives_each_checkpoint_its_own_panel():
    noise = pd.DataFrame(
        {
            "config": ["AttnOnly", "FFNOnly"],
            "seed": 1337,
            "fixed_val": [1.9, 3.3],
            "eval_batches": 50,
            "random_eval_samples": [np.full(20, 1.9), np.full(20, 3.3)],
        }
    )
    fig = plots.noise_figure(noise, "t")
    assert [a.get_title() for a in fig.axes] == ["AttnOnly, seed 1337", "FFNOnly, seed 1337"]


def test_fixed_val_batches_shows_only_the_checkpoints_it_loads(tmp_path, monkeypatch):
    import lib.book.chapter

    ch = Chapter.open("fixed_val_batches", params(), announce=False)
    assert [(e.config_name, e.seed) for e in ch.experiments()] == [
        ("AttnOnly", 1337),
        ("FFNOnly", 1337),
    ]
    # opening a chapter leaves pandas' own options alone
    assert pd.get_option("display.max_colwidth") == 50
    monkeypatch.setattr(lib.book.chapter, "RUNS_DIR", tmp_path)
    assert Chapter.open("10m_asymmetry", params(), announce=False).paper_scale_summaries() is None


def test_a_paper_value_that_is_not_a_number_names_its_line(tmp_path, monkeypatch):
    import lib.claims.paper

    bad = tmp_path / "paper_results.csv"
    bad.write_text(
        "ref,scale,impl,phase,config,seed,metric,value,std,n,note\n"
        "Table 2,10M,nanogpt,,AttnOnly,1337,best_val_loss,3.3534,,1,\n"
        "Table 2,10M,nanogpt,,FFNOnly,1337,best_val_loss,~3.35,,1,\n"
    )
    monkeypatch.setattr(lib.claims.paper, "PAPER_CSV", bad)
    lib.claims.paper._table.cache_clear()
    try:
        with pytest.raises(
            ValueError, match=r"paper_results.csv line 3: value/std '~3.35' is not a number"
        ):
            lib.claims.paper.paper_values()
    finally:
        lib.claims.paper._table.cache_clear()


# -- the 124M stand-in's longer-budget probe -----------------------------------------------------


def _summary_row(config, best, escape, budget, seed=1337, source="released"):
    return {
        "config": config,
        "seed": seed,
        "best_val_loss": best,
        "best_step": budget,
        "escape_step": escape,
        "steps": budget,
        "budget": budget,
        "source": source,
    }


def _probe(*rows, missing=(), applies=True, scale=""):
    from lib.claims.runset import Probe
    from lib.engine.results import histories_of, summaries_of

    summaries = pd.DataFrame(list(rows)) if rows else summaries_of([])  # what Chapter.probe gives
    return Probe(summaries, histories_of([]), list(missing), 1337, applies, scale)


def test_longer_budget_claim_reads_each_probe_beside_its_released_plain_run():
    # a smoke retrain of 1337
    plain = pd.DataFrame(
        [
            _summary_row("AttnOnly", 9.0, None, 20, source="retrained"),
            _summary_row("AttnOnly", 6.55, None, 800),
            _summary_row("FFNOnly", 6.54, None, 800),
        ]
    )
    stayed = asymmetry.claim_longer_budget(
        _probe(
            _summary_row("AttnOnly", 6.54, None, 2400), _summary_row("FFNOnly", 6.53, None, 2400)
        ),
        plain,
        6.475,
    )
    assert "AttnOnly seed 1337, 2,400 steps: best 6.540" in stayed.text
    assert "at 800 steps it reached 6.550" in stayed.text
    assert (
        "Still on the floor after 2,400 steps (one seed" in stayed.text
        and "budget effect" not in stayed.text
    )
    # neither left the floor: the longer budget shows no asymmetry to read, so it
    # neither confirms nor contradicts
    assert stayed.verdict == "NOT TESTABLE HERE" and stayed.facts == {
        "attn_left": False,
        "ffn_left": False,
    }
    left = asymmetry.claim_longer_budget(
        _probe(
            _summary_row("AttnOnly", 5.9, 1300, 2400), _summary_row("FFNOnly", 6.53, None, 2400)
        ),
        plain,
        6.475,
    )
    assert "left the floor at step 1,300: at 800 steps its floor was a budget effect" in left.text
    assert left.verdict == "HOLDS" and left.facts == {"attn_left": True, "ffn_left": False}
    both = asymmetry.claim_longer_budget(
        _probe(_summary_row("AttnOnly", 5.9, 1300, 2400), _summary_row("FFNOnly", 6.0, 1800, 2400)),
        plain,
        6.475,
    )
    assert both.verdict == "CONTRADICTED" and both.facts == {"attn_left": True, "ffn_left": True}
    # the stand-in it extends is named (at 124M the first one, not the one the chapter reads)
    named = asymmetry.claim_longer_budget(
        _probe(
            _summary_row("AttnOnly", 6.54, None, 2400),
            _summary_row("FFNOnly", 6.53, None, 2400),
            scale="cpu-bpe",
        ),
        plain,
        6.475,
    )
    assert named.why.startswith("asymmetry at `cpu-bpe`, 2,400 steps") and "`" not in stayed.why


def test_longer_budget_claim_does_not_call_an_earlier_escape_a_budget_effect():
    escaped = pd.DataFrame([_summary_row("AttnOnly", 6.2, 300, 800)])
    text = asymmetry.claim_longer_budget(
        _probe(_summary_row("AttnOnly", 5.9, 200, 2400)), escaped, 6.475
    )
    assert "as the shorter run had" in text.text and "budget effect" not in text.text
    text = asymmetry.claim_longer_budget(
        _probe(_summary_row("AttnOnly", 5.9, 200, 2400)), escaped.iloc[0:0], 6.475
    )
    assert (
        "no released run at the preset's budget" in text.text and "budget effect" not in text.text
    )


def test_longer_budget_claim_tells_not_run_yet_from_not_applicable():
    cmd = "python -m lib train --scale cpu-bpe --config AttnOnly --seed 1337 --steps 2400"
    pending = asymmetry.claim_longer_budget(_probe(missing=[cmd]), pd.DataFrame(), 6.475)
    assert pending.lines == (f"Not run yet: {cmd}",) and pending.verdict == "NOT TESTED"
    assert "not trained yet" in pending.why
    paper = asymmetry.claim_longer_budget(_probe(applies=False), pd.DataFrame(), 7.0)
    assert paper.verdict == "NOT TESTED" and "the budget is the paper's own" in paper.why


def _fake_run(exp, runs_dir, best, escape, n_evals):
    from conftest import write_fake_run

    return write_fake_run(exp, runs_dir, best, escape, n_evals=n_evals, floor=6.475)


def test_the_probe_is_released_apart_from_the_chapter_runs(tmp_path, monkeypatch, capsys):
    import lib.book.chapter
    from lib.book import variant_label
    from lib.engine import plans
    from lib.engine.config import get_preset
    from lib.engine.runs import run_path

    attn, ffn = plans.longer_budget_124m()
    assert (attn.config_name, ffn.config_name) == ("AttnOnly", "FFNOnly")
    assert attn.train.max_steps == plans.LONGER_BUDGET * get_preset("cpu-bpe").train.max_steps
    assert run_path(attn).name == "seed1337_steps2400" and variant_label(attn) == "2,400 steps"
    monkeypatch.setattr(lib.book.chapter, "RUNS_DIR", tmp_path)
    _fake_run(attn, tmp_path, 6.54, None, 25)
    _fake_run(get_preset("cpu-bpe", "residualgpt", "AttnOnly", 1337), tmp_path, 6.55, None, 9)
    # the probe extends the first stand-in's runs: it applies there, and not at
    # the stand-in the search chose
    assert not Chapter.open("124m_sweep", params(), announce=False).probe().applies
    assert "belongs to the cpu-bpe stand-in" in capsys.readouterr().out
    ch = Chapter.open("124m_sweep", params(scale="cpu-bpe"), announce=False)
    probe = ch.probe()
    assert probe.applies and list(probe.summaries.budget) == [2400] and len(probe.histories) == 25
    assert probe.missing == [
        "python -m lib train --scale cpu-bpe --impl residualgpt --config FFNOnly "
        "--seed 1337 --steps 2400"
    ]
    assert f"not run yet: {probe.missing[0]}" in capsys.readouterr().out
    # the probe stays apart
    assert list(ch.summaries().budget) == [800] and set(ch.histories().budget) == {800}
    paper = Chapter.open("124m_sweep", params(scale="124M"), announce=False).probe()
    assert (
        not paper.applies
        and paper.summaries.empty
        and "belongs to the cpu-bpe stand-in" in capsys.readouterr().out
    )
    # a chapter without one
    assert not Chapter.open("10m_asymmetry", params(), announce=False).probe().applies


def test_longer_budget_curves_draw_released_runs_solid_and_the_probe_dashed():
    def h(config, budget, n, source="released"):
        return pd.DataFrame(
            {
                "config": config,
                "seed": 1337,
                "budget": budget,
                "source": source,
                "step": [100 * i for i in range(n)],
                "val_loss": 6.5,
            }
        )

    hist = pd.concat(
        [h("FullResidual", 800, 9), h("AttnOnly", 800, 9), h("AttnOnly", 20, 2, "retrained")]
    )
    ax = plots.longer_budget_curves(hist, h("AttnOnly", 2400, 25).iloc[0:0], 6.475, "t", seed=1337)
    assert [ln.get_label() for ln in ax.lines] == [
        "FullResidual seed 1337, 800 steps",
        "AttnOnly seed 1337, 800 steps",
        "unigram floor 6.4750",
    ]
    ax = plots.longer_budget_curves(
        hist, pd.concat([h("AttnOnly", 2400, 25), h("FFNOnly", 2400, 25)]), 6.475, "t", seed=1337
    )
    labels = [ln.get_label() for ln in ax.lines]
    assert labels[2:4] == ["AttnOnly seed 1337, 2,400 steps", "FFNOnly seed 1337, 2,400 steps"]
    # not the retrained smoke run
    assert ax.lines[1].get_xdata().tolist() == [100 * i for i in range(9)]
    assert ax.lines[2].get_linestyle() == "--" and len(ax.lines[2].get_xdata()) == 25
    # zoomed on the floor, not on the untrained model
    assert ax.get_ylim() == pytest.approx((6.375, 6.975))


def test_the_book_is_the_same_where_cuda_is_available(monkeypatch):
    """A build on a GPU machine shows what a CPU build shows; only a retrain (a
    seed) goes to the paper's scale."""
    import torch

    from lib.book import CHAPTERS

    without = {n: Chapter.open(n, params(device="auto"), announce=False) for n in CHAPTERS}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for name, spec in CHAPTERS.items():
        ch = Chapter.open(name, params(device="auto"), announce=False)
        assert ch.scale == without[name].scale == spec.stand_in
        assert [e.to_json() for e in ch.experiments()] == [
            e.to_json() for e in without[name].experiments()
        ]
        assert (
            Chapter.open(name, params(seed=7, device="auto"), announce=False).scale
            == spec.paper_scale
        )
        assert (
            Chapter.open(name, params(seed=7, device="cpu"), announce=False).scale == spec.stand_in
        )


def test_a_retrain_trains_only_what_the_tables_need_deterministic_where_the_paper_was():
    ch = Chapter.open("124m_sweep", params(seed=7), announce=False)
    assert [e.config_name for e in ch.retrain_experiments()] == [
        "FullResidual",
        "AttnOnly",
        "FFNOnly",
    ]
    ch = Chapter.open("124m_sweep", params(seed=1337), announce=False)
    assert [e.config_name for e in ch.retrain_experiments()][-1] == "NoResidual"
    from lib.book import CHAPTERS

    assert [n for n, s in CHAPTERS.items() if s.deterministic] == ["10m_asymmetry"]


def test_a_retrain_prints_each_evaluation(capsys):
    from types import SimpleNamespace

    from lib.book.chapter import EvalPrinter

    trainer = SimpleNamespace(
        history=[{"step": 100, "val_loss": 3.14159}], cfg=SimpleNamespace(max_steps=1500)
    )
    EvalPrinter("AttnOnly seed 7").on_history(trainer, 100)
    trainer.history.append({"step": 101, "val_loss": None, "diverged": True})
    EvalPrinter("AttnOnly seed 7").on_history(trainer, 101)
    assert capsys.readouterr().out.splitlines() == [
        "AttnOnly seed 7, step 100 of 1,500: val loss 3.1416",
        "AttnOnly seed 7, step 101 of 1,500: diverged",
    ]


def _gain_curves(finals):
    """Two-evaluation curves per (mode, gain): step 0 at 4.2, step
    300 at ``finals[(mode, gain)]``."""
    rows = [
        {"mode": m, "gain": g, "step": st, "val_loss": v}
        for (m, g), f in finals.items()
        for st, v in ((0, 4.2), (300, f))
    ]
    return pd.DataFrame(rows)


def test_the_gain_verdict_has_two_parts_where_the_runs_end_and_how_close_the_escaped_curves_are():
    from lib.engine import gain

    finals = {
        ("runtime", 0.25): 3.34,
        ("runtime", 0.5): 3.34,
        ("runtime", 2.0): 1.95,
        ("runtime", 4.0): 1.94,
        ("weight", 2.0): 1.91,
        ("weight", 4.0): 1.85,
    }
    curves = _gain_curves(finals)
    # no null yet (the rounding-only twins not trained): not tested, the spreads printed
    c = gain_confound.claim_gain_absorbed(curves, floor=3.35, bound=0.002)
    assert (
        c.verdict == "NOT TESTED"
        and c.facts["spread"] == pytest.approx(1.40)
        and "gain_twins" in c.why
    )
    assert "Among those that left the floor (g = 2, 4): 0.0100." in c.text
    assert "Weight-level gains that left it (g = 2, 4): 0.0600." in c.text

    # the g = 2 and 4 runs of ``of`` under a rounding-only change, moved by d2, d4
    def twins(d2, d4, of=curves):
        run = of[of["mode"] == "runtime"]
        return pd.DataFrame(
            [
                {"gain": g, "step": r.step, "val_loss": r.val_loss + (d if r.step else 0)}
                for g, d in ((2.0, d2), (4.0, d4))
                for r in run[run.gain == g].itertuples()
            ]
        )

    # the paper's sentence as written: two gains on the floor, two off it,
    # 1.40 apart, far beyond rounding
    c = gain_confound.claim_gain_absorbed(curves, 3.35, 0.002, twins=twins(0.001, 0.0005))
    assert (
        c.verdict == "CONTRADICTED"
        and c.facts["null"] == pytest.approx(0.001)
        and "1,400 times" in c.why
    )
    # every runtime curve within the bound, with a null below it: HOLDS
    near = _gain_curves(
        {
            **finals,
            **{("runtime", g): 1.95 + 0.0003 * i for i, g in enumerate((0.25, 0.5, 2.0, 4.0))},
        }
    )
    assert (
        gain_confound.claim_gain_absorbed(
            near, 3.35, 0.002, twins=twins(0.0001, 0.0001, near)
        ).verdict
        == "HOLDS"
    )
    # a null as large as the bound, the spread within bound + null: a
    # knife-edge, computed from the runs
    wide = gain_confound.claim_gain_absorbed(near, 3.35, 0.002, twins=twins(0.003, 0.0, near))
    assert wide.verdict == "NOT TESTABLE HERE"
    # a null finer than the bound, the spread within it of the bound on either side:
    # rounding alone could carry the spread across, so neither side wins (a spread of 0.0023
    # or 0.0018 against 0.002, null 0.0005)
    for top in (1.9523, 1.9518):
        edge = _gain_curves(
            {
                **finals,
                **{
                    ("runtime", g): v
                    for g, v in ((0.25, 1.95), (0.5, 1.951), (2.0, 1.951), (4.0, top))
                },
            }
        )
        c = gain_confound.claim_gain_absorbed(edge, 3.35, 0.002, twins=twins(0.0005, 0.0, edge))
        assert c.verdict == "NOT TESTABLE HERE", (top, c.why)
    # one twin missing: no null
    assert (
        gain_confound.claim_gain_absorbed(
            curves, 3.35, 0.002, twins=twins(0, 0)[lambda t: t.gain == 2.0]
        ).verdict
        == "NOT TESTED"
    )
    # nothing left the floor: the precondition unmet
    c = gain_confound.claim_gain_absorbed(
        _gain_curves({k: 3.34 for k in finals}), 3.35, 0.002, twins=twins(0, 0)
    )
    assert c.verdict == "NOT TESTABLE HERE"
    summ = pd.DataFrame(
        [
            {"gain_mode": m, "gain": g, "best_val_loss": f, "escape_step": None if f > 3 else 100}
            for (m, g), f in finals.items()
        ]
    )
    fate = gain_confound.claim_gain_fate(gain.gain_table(summ))
    assert fate.verdict == "CONTRADICTED" and fate.facts == {
        "left": [2.0, 4.0],
        "stayed": [0.25, 0.5],
        "by_seed": {1337: {"left": [2.0, 4.0], "stayed": [0.25, 0.5]}},
    }
    same = summ.assign(best_val_loss=1.9, escape_step=100)
    assert gain_confound.claim_gain_fate(gain.gain_table(same)).verdict == "HOLDS"
    assert gain_confound.claim_gain_fate(gain.gain_table(summ.iloc[0:0])).verdict == "NOT TESTED"


def _runtime_seed(finals: dict[float, float]):
    """One more seed of the runtime sweep as ``gain_confound.other_seeds``
    gives it: (gain table, curves)."""
    from lib.engine import gain

    summ = pd.DataFrame(
        [
            {
                "gain_mode": "runtime",
                "gain": g,
                "best_val_loss": f,
                "escape_step": None if f > 3 else 100,
            }
            for g, f in finals.items()
        ]
    )
    return gain.gain_table(summ, modes=("runtime",)), _gain_curves(
        {("runtime", g): f for g, f in finals.items()}
    )


def test_the_gain_verdicts_are_decided_over_every_trained_seed_both_ways():
    split = {0.25: 3.34, 0.5: 3.34, 2.0: 1.95, 4.0: 1.94}
    table, curves = _runtime_seed(split)  # seed 1337's runtime gains: two on the floor, two off it
    # the same split at every seed: the gain decides, at three seeds
    c = gain_confound.claim_gain_fate(
        table, others={42: _runtime_seed(split), 123: _runtime_seed(split)}
    )
    assert (
        c.verdict == "CONTRADICTED"
        and c.facts["left"] == [2.0, 4.0]
        and set(c.facts["by_seed"]) == {1337, 42, 123}
    )
    assert "at each of seeds 1337, 42 and 123" in c.why
    # a seed with fewer than two of its gains finished is pending, never a seed's answer
    one = _runtime_seed({0.25: 3.34})
    c = gain_confound.claim_gain_fate(table, others={42: _runtime_seed(split), 123: one})
    assert (
        c.verdict == "CONTRADICTED"
        and set(c.facts["by_seed"]) == {1337, 42}
        and "seed 123 not trained" in c.why
    )
    # a retrained seed read on its own is named as itself
    assert set(gain_confound.claim_gain_fate(table, seed=7).facts["by_seed"]) == {7}
    # a seed not trained yet is named, and the verdict rests on the seeds that are
    c = gain_confound.claim_gain_fate(table, others={42: _runtime_seed(split), 123: None})
    assert c.verdict == "CONTRADICTED" and "seed 123 not trained yet" in c.why
    # another seed where every gain leaves the floor: which side g = 0.25 ends
    # on is the seed's, a knife-edge
    c = gain_confound.claim_gain_fate(table, others={42: _runtime_seed({g: 1.95 for g in split})})
    assert c.verdict == "NOT TESTABLE HERE" and c.facts["stayed"] == []
    # the split moves between seeds but g = 0.25 stays and g = 4 leaves at both: still the gain's
    shifted = {0.25: 3.34, 0.5: 1.97, 2.0: 1.95, 4.0: 1.94}
    assert gain_confound.claim_gain_fate(table, others={42: _runtime_seed(shifted)}).facts[
        "stayed"
    ] == [0.25]
    # no seed splits: HOLDS
    same = {g: 1.95 for g in split}
    t1, _ = _runtime_seed(same)
    assert gain_confound.claim_gain_fate(t1, others={42: _runtime_seed(same)}).verdict == "HOLDS"

    def twins(d, of):  # the g = 2 and 4 runs of seed 1337 under a rounding-only change, moved by d
        run = of[of["mode"] == "runtime"]
        return pd.DataFrame(
            [
                {"gain": g, "step": r.step, "val_loss": r.val_loss + (d if r.step else 0)}
                for g in (2.0, 4.0)
                for r in run[run.gain == g].itertuples()
            ]
        )

    # (b): beyond the bound and the null at every seed
    c = gain_confound.claim_gain_absorbed(
        curves,
        3.35,
        0.002,
        twins=twins(0.001, curves),
        others={42: _runtime_seed(split), 123: None},
    )
    assert c.verdict == "CONTRADICTED" and c.facts["by_seed"] == {
        1337: pytest.approx(1.40),
        42: pytest.approx(1.40),
    }
    assert any(line.startswith("Seed 42: largest spread") for line in c.lines)
    # a seed with only some of its gains is pending: its spread over
    # fewer curves would read as overlap
    c = gain_confound.claim_gain_absorbed(
        curves,
        3.35,
        0.002,
        twins=twins(0.001, curves),
        others={42: _runtime_seed({2.0: 1.95, 4.0: 1.95})},
    )
    assert (
        c.verdict == "CONTRADICTED"
        and set(c.facts["by_seed"]) == {1337}
        and "seed 42 not trained" in c.why
    )
    # one seed's curves overlap to the bound, the other's do not: the seeds disagree
    near = {g: 1.95 + 0.0001 * i for i, g in enumerate(split)}
    c = gain_confound.claim_gain_absorbed(
        curves, 3.35, 0.002, twins=twins(0.0001, curves), others={42: _runtime_seed(near)}
    )
    assert c.verdict == "NOT TESTABLE HERE" and "seed 42 0.0003" in c.why
    # within the bound at every seed: HOLDS
    nc = _runtime_seed(near)[1]
    c = gain_confound.claim_gain_absorbed(
        nc, 3.35, 0.002, twins=twins(0.0001, nc), others={42: _runtime_seed(near)}
    )
    assert c.verdict == "HOLDS"


def test_the_gain_chapter_reads_another_seed_only_once_its_four_runtime_gains_are_finished(
    tmp_path,
):
    from lib.engine.config import get_preset

    got = gain_confound.other_seeds(
        get_preset("cpu", "residualgpt", "AttnOnly", 1337), 3.35, runs_dir=tmp_path
    )
    assert got == {42: None, 123: None}
    # the seed table puts each trained seed's escape steps beside seed 1337's,
    # and leaves an untrained seed out
    split = {0.25: 3.34, 0.5: 3.34, 2.0: 1.95, 4.0: 1.94}
    t = gain_confound.seed_table(
        _runtime_seed(split)[0], {42: _runtime_seed({g: 1.9 for g in split}), 123: None}
    )
    assert list(t.columns) == [
        "best val (seed 1337)",
        "escape step (seed 1337)",
        "best val (seed 42)",
        "escape step (seed 42)",
    ]
    assert list(t["escape step (seed 1337)"]) == ["none", "none", "100", "100"]
    assert list(t["escape step (seed 42)"]) == ["100"] * 4


def test_each_chapter_compares_with_the_floor_of_what_its_runs_are_evaluated_on():
    from lib.book import CHAPTERS

    for name in CHAPTERS:
        ch = Chapter.open(name, params(), announce=False)
        f = ch.floors()
        if f["empirical"] is not None:  # BPE: the NoResidual run, the paper's own floor
            assert ch.floor() == f["empirical"] and ch.scale == plans.STAND_IN_124M
        elif ch.spec.impl == "nanogpt":  # fresh random batches average over the split
            assert ch.floor() == f["split"]
        else:  # fixed batches: the floor on those very batches
            assert ch.floor() == f["batches"] != f["split"]
        assert "use " in ch.floor_note() and f"{ch.floor():.4f}." in ch.floor_note()


def test_growth_over_training_is_residualscopes_final_over_initial_per_block():
    rows = []
    for config, first, last in (
        ("FullResidual", [1, 1, 2], [1, 2, 2]),
        ("AttnOnly", [1, 1, 1], [1, 14, 3]),
        ("FFNOnly", [1, 2, 1], [1, 10, 9]),
    ):
        rows += [
            {"config": config, "seed": 1337, "source": "released", "step": s, "hidden_norm": h}
            for s, h in ((0, first), (100, last))
        ]
    tg = joint_collapse.training_growth(pd.DataFrame(rows))
    assert tg.set_index("config").loc["AttnOnly"].tolist() == [14.0, 3.0]
    text = joint_collapse.growth_over_training_reading(tg, block=1)
    assert text.splitlines() == [
        (
            "Growth over training (residualscope's final ÷ initial), after block 1: AttnOnly "
            "14.00 > FFNOnly 5.00 > FullResidual 2.00 — the paper's order."
        ),
        (
            "Growth over training (residualscope's final ÷ initial), after block 2: FFNOnly 9.00 "
            "> AttnOnly 3.00 > FullResidual 1.00 — not the paper's order."
        ),
    ]


def test_the_run_data_download_has_one_row_per_finished_run_and_one_per_evaluation(tmp_path):
    from lib.book import export_run_data
    from lib.engine.config import get_preset

    _fake_run(get_preset("cpu", "residualgpt", "AttnOnly", 1), tmp_path / "runs", 2.0, 100, 3)
    _fake_run(get_preset("cpu", "residualgpt", "FFNOnly", 1), tmp_path / "runs", 3.3, None, 2)
    running = get_preset("cpu", "residualgpt", "FullResidual", 1)
    _fake_run(running, tmp_path / "runs", 1.9, 100, 2)
    from lib.engine.runs import run_path

    d = run_path(running, tmp_path / "runs")
    (d / "summary.json").write_text(
        (d / "summary.json").read_text().replace('"complete"', '"running"')
    )
    assert export_run_data(tmp_path / "runs", tmp_path / "out") == {"runs": 2, "evaluations": 5}
    s = pd.read_csv(tmp_path / "out" / "runs_summaries.csv")
    assert sorted(s.config) == ["AttnOnly", "FFNOnly"] and set(s.status) == {"complete"}
    assert len(pd.read_csv(tmp_path / "out" / "runs_histories.csv")) == 5


def test_per_batch_losses_are_cached_by_the_weights_and_the_batches_asked_for(
    tmp_path, monkeypatch
):
    import numpy as np

    from lib.engine.config import get_preset
    from lib.engine.runs import RunDir

    monkeypatch.setattr(results, "CACHE_DIR", tmp_path / "cache")
    rd = RunDir(tmp_path / "run")
    rd.path.mkdir()
    (rd.path / "weights.pt").write_bytes(b"weights one")
    exp, calls = get_preset("cpu"), []

    def compute():
        calls.append(1)
        return np.array([1.0, 2.0])

    assert results.cached_losses(rd, compute, exp, 2, "fixed").tolist() == [1.0, 2.0]
    assert (
        results.cached_losses(rd, compute, exp, 2, "fixed").tolist() == [1.0, 2.0]
        and len(calls) == 1
    )
    results.cached_losses(rd, compute, exp, 3, "fixed")  # other batches: computed
    (rd.path / "weights.pt").write_bytes(b"weights two")  # other weights: computed
    results.cached_losses(rd, compute, exp, 2, "fixed")
    assert len(calls) == 3
    # a damaged file is recomputed, not trusted
    for f in (tmp_path / "cache").iterdir():
        f.write_bytes(b"not an array")
    assert (
        results.cached_losses(rd, compute, exp, 2, "fixed").tolist() == [1.0, 2.0]
        and len(calls) == 4
    )


def test_the_ffnonly_path_names_the_spikes_beside_where_every_seed_ends():
    h = pd.concat(
        [
            history("FFNOnly", [0.0] * 3).assign(seed=s, val_loss=v, step=[0, 300, 600])
            for s, v in ((1, [4.2, 9.65, 3.34]), (2, [4.2, 3.36, 3.35]))
        ]
    )
    text = asymmetry.ffn_path(h, floor=3.347)
    assert text.startswith(
        "FFNOnly: 2 of 2 seeds never got below the floor - 0.1 (best 3.340-3.350"
    )
    assert (
        "1 of 2 seeds spiked more than 1 nats above it on the way (seed 1 9.65 at step 300)" in text
    )
    calm = asymmetry.ffn_path(h[h.seed == 2], floor=3.347)
    assert calm.endswith("no seed rose more than 1 nats above the floor after step 0.")


def test_a_retrain_with_fewer_evaluation_batches_is_a_run_of_its_own():
    ch = Chapter.open("124m_sweep", params(seed=7, steps=2, eval_batches=2), announce=False)
    exps = ch.retrain_experiments()
    assert exps and all(
        (e.train.max_steps, e.train.eval_batches, e.train.train_eval_batches) == (2, 2, 2)
        for e in exps
    )
    from lib.engine.runs import run_path

    plain = Chapter.open(
        "124m_sweep", params(seed=7, steps=2), announce=False
    ).retrain_experiments()
    assert {run_path(e, ch.runs_dir) for e in exps}.isdisjoint(
        run_path(e, ch.runs_dir) for e in plain
    )
    assert "2 batches an evaluation" in ch.banner()


def test_no_figure_is_drawn_on_two_pages():
    # issue 56: one figure, one number. A figure cell's code (its plot call) appears
    # once in the book; a page that needs it again refers to it ({numref}) rather than
    # drawing it twice under two numbers.
    import json

    seen = {}
    from pathlib import Path

    for nb in sorted((Path(__file__).parents[1] / "book").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code" and cell.get("metadata", {}).get("mystnb", {}).get(
                "figure"
            ):
                calls = tuple(
                    line for line in "".join(cell["source"]).splitlines() if "plots." in line
                )
                assert calls not in seen, (
                    f"{nb.name} draws {calls} again, already drawn in {seen[calls]}"
                )
                seen[calls] = nb.name
    assert len(seen) >= 20  # every chapter's figure cells were read
