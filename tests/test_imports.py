"""lib's imports flow one way (book -> analysis/plots -> experiment -> train/model/data/runs -> config): the
graph of ``from .x import`` statements, lazy ones inside functions included, has no cycle."""
import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"


def graph() -> dict[str, set[str]]:
    g = {}
    for f in LIB.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps |= {node.module} if node.module else {a.name for a in node.names}
        g[f.stem] = deps - {f.stem}
    return g


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == "open":
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        state[n] = "done"
        stack.pop()
        return None
    for n in sorted(g):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_lib_has_no_import_cycle():
    assert cycle(graph()) is None, " -> ".join(cycle(graph()))


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_config_imports_nothing_from_lib_and_the_book_layer_is_imported_by_no_lower_one():
    g = graph()
    assert g["config"] == set()
    lower = ("experiment", "train", "model", "data", "runs", "config", "diagnostics", "gain", "plans", "sweep")
    assert not any({"book", "analysis", "plots", "cli"} & g[m] for m in lower)
