"""The 124M chapter's seed plot: a panel per configuration, each on its own range, the floors drawn,
the paper's per-seed values under the panels."""

import matplotlib

matplotlib.use("Agg")
import pandas as pd  # noqa: E402

from lib.book import plots  # noqa: E402
from lib.claims.paper import paper_seed_values  # noqa: E402


def _hist():
    rows = []
    for seed, ffn_end in ((1, 6.55), (2, 6.54)):
        for step, full, ffn in (
            (0, 10.8, 10.8),
            (100, 7.0, 6.7),
            (200, 5.6, 6.56),
            (400, 5.1, ffn_end),
        ):
            rows += [
                dict(config="FullResidual", seed=seed, step=step, val_loss=full),
                dict(config="FFNOnly", seed=seed, step=step, val_loss=ffn),
            ]
    return pd.DataFrame(rows)


def test_each_configuration_has_a_panel_on_its_own_range_with_the_floor():
    fig = plots.seed_panels(_hist(), {"floor": 6.53}, "t", paper_seeds=paper_seed_values("124M"))
    full, ffn = fig.axes
    assert full.get_title() == "FullResidual (2 seeds)" and ffn.get_title() == "FFNOnly (2 seeds)"
    lo, hi = ffn.get_ylim()
    # FFNOnly's panel holds its second half and the floor, and cuts the early descent: its two seeds
    # 0.01 apart take more than a hundredth of the panel
    assert lo < 6.53 < hi and lo < 6.54 and hi > 6.56 and hi < 7.0 and 0.01 / (hi - lo) > 0.01
    assert full.get_ylim()[0] < 5.1 and full.get_ylim()[1] > 6.53
    assert any(line.get_ydata()[0] == 6.53 for line in ffn.get_lines())  # the floor is drawn
    texts = [t.get_text() for t in ffn.texts]
    # the paper's per-seed value, from its file
    assert any("seed 1337: 7.666 (Table 4)" in t for t in texts)
    assert "1, 2" not in texts  # 0.01 apart on this panel's range: two labels, not one shared


def test_the_paper_seed_values_are_single_seed_rows_of_that_scale():
    p = paper_seed_values("124M")
    assert set(p.ref) == {"Table 4", "§6.2", "Table 5"} and p.seed.notna().all()
    assert p[(p.config == "AttnOnly") & (p.seed == 123)].value.tolist() == [5.967]


def test_four_configurations_sit_two_a_row_with_type_legible_at_the_pages_width():
    # on a 9.5-inch figure shown 756 px wide, 10 points is about 11 px; four panels in a row
    # had shrunk the seed labels to 7-8 px
    h = _hist()
    h = pd.concat([h, h.assign(config="AttnOnly"), h.assign(config="NoResidual")])
    fig = plots.seed_panels(h, {"floor": 6.53}, "t", paper_seeds=paper_seed_values("124M"))
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert len(shown) == 4 and len({round(ax.get_position().y0, 3) for ax in shown}) == 2
    assert fig.get_size_inches()[0] <= 9.5
    assert min(t.get_fontsize() for ax in shown for t in ax.texts) >= 10
