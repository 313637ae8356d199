"""registry.all_claims() is the one list of claims, gathered from the parts of the paper: every
claim function in lib/claims is an entry's, and every entry is printed by the chapter verdict cell
of its section, which renders the list (claims_at) rather than calling claims."""

import ast
import json
import re
from pathlib import Path

from lib.claims.registry import all_claims

ROOT = Path(__file__).resolve().parents[1]


def _claim_functions() -> set[str]:
    # the functions lib/claims decorates with @claim(...): the ones that decide a verdict
    found = set()
    for f in (ROOT / "lib" / "claims").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "id", "") == "claim"
                for d in node.decorator_list
            ):
                found.add(node.name)
    return found


def _rendered_sections() -> list[str]:
    # the sections the notebooks' verdict cells pass to claims_at, each
    # cell's call as the notebook has it
    sections = []
    for nb in (ROOT / "book").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                sections += re.findall(r'claims_at\(\s*"([^"]+)"', "".join(cell["source"]))
    return sections


def test_every_claim_function_is_an_entry_of_the_one_list():
    assert _claim_functions() == {e.decide.__name__ for e in all_claims()}


def test_every_entry_is_printed_by_its_sections_verdict_cell_and_no_cell_calls_a_claim_directly():
    rendered = _rendered_sections()
    assert sorted(set(rendered)) == sorted({e.section for e in all_claims()})
    # one cell per section: a claim is printed once in its chapter
    assert len(rendered) == len(set(rendered))
    names = _claim_functions()
    for nb in (ROOT / "book").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            src = "".join(cell["source"]) if cell["cell_type"] == "code" else ""
            # a retrained seed's own verdict (gain_confound, seed set) is the one
            # call left outside the list
            if "ch.seed is not None" in src:
                continue
            called = {n for n in names if re.search(rf"\b{n}\(", src)}
            assert not called, (
                f"{nb.name}: a verdict cell calls {called} instead of rendering the list of claims"
            )
