"""`papermill book/124m_sweep.ipynb out.ipynb -p seed 7 -p steps 2 -p eval_batches 1`
retrains seed 7 as a reader expects (one evaluation batch: the smoke run's cost is its
evaluations through the 50,257-way head).

On this CPU it trains the labelled stand-in the chapter's search chose (`cpu-bpe-ramp`) for 2 steps
(a smoke run), into a directory of its own, and shows seed 7 beside the released runs.
"""

import json
import subprocess
import sys
from pathlib import Path

from lib.claims.registry import claims_at
from lib.engine import plans

ROOT = Path(__file__).resolve().parent.parent


def test_papermill_retrains_a_seed_and_shows_it(tmp_path):
    out = tmp_path / "out.ipynb"
    runs = tmp_path / "retrained"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "papermill",
            "book/124m_sweep.ipynb",
            str(out),
            "-p",
            "seed",
            "7",
            "-p",
            "steps",
            "2",
            "-p",
            "eval_batches",
            "1",
            "-p",
            "runs_dir",
            str(runs),
            "-p",
            "device",
            "cpu",
            "--cwd",
            "book",
            "-k",
            "python3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cells = json.loads(out.read_text())["cells"]
    text = "".join(
        "".join(o.get("text", "")) + json.dumps(o.get("data", {}))
        for c in cells
        if c["cell_type"] == "code"
        for o in c.get("outputs", [])
    )
    assert "CPU STAND-IN for the paper's 124M" in text  # said plainly at the top of the output
    assert "Retraining seed 7 for 2 steps" in text
    summaries = sorted(runs.rglob("summary.json"))
    # FullResidual, AttnOnly, FFNOnly: NoResidual is Table 5's seed-1337 anchor
    assert len(summaries) == 3
    assert {json.loads(p.read_text())["status"] for p in summaries} == {"complete"}
    # the seed plot shows the new seed beside the released ones
    assert "AttnOnly seed 7 (retrained)" in text
    assert "left out of every table and verdict below" in text  # the 2-step runs are shown apart

    # ... and never pooled: Table 5 and the verdicts are exactly what the released runs alone give.
    from lib.book import Chapter, Verdict, beside_paper, frame_html, seed_table
    from lib.claims.paper import paper_values

    ch = Chapter.open("124m_sweep", {"device": "cpu"}, announce=False)
    summ = ch.summaries()
    assert set(summ.source) == {"released"}
    table5 = frame_html(
        beside_paper(
            seed_table(summ),
            paper_values(ref="Table 5", metric="best_val_loss"),
            "Table 5",
            ch.stand_in,
        )
    )
    assert ch.scale == plans.STAND_IN_124M
    verdict = Verdict(*claims_at("124m_sweep#reading-the-result", ch))._repr_markdown_()

    def output(starts):
        cell = next(
            c for c in cells if c["cell_type"] == "code" and "".join(c["source"]).startswith(starts)
        )
        return next(o["data"] for o in cell["outputs"] if "data" in o)

    assert "".join(output("ours = seed_table(summ)")["text/html"]) == table5
    # the chapter's verdict cell renders claims.CLAIMS for its section; the verdict recomputed here
    # decides them on the released runs alone
    shown = output("from lib.book import Verdict\nfrom lib.claims.registry import claims_at")[
        "text/markdown"
    ]
    assert "".join(shown) == verdict


def test_papermill_refuses_unknown_parameters(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "papermill",
            "book/124m_sweep.ipynb",
            str(tmp_path / "o.ipynb"),
            "-p",
            "sede",
            "7",
            "--cwd",
            "book",
            "-k",
            "python3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert (
        "unknown parameter(s) sede; valid: scale, seed, steps, runs_dir, device"
        in proc.stderr + proc.stdout
    )
