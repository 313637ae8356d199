"""lib's imports flow one way (book -> claims -> engine; in the engine experiment ->
train/model/data/runs -> config): the graph of relative imports in lib and its subpackages, lazy
ones inside functions included, has no cycle."""

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"


def module_name(f: Path) -> str:
    """``lib/claims/bundle.py`` -> ``claims.bundle``; a package's ``__init__`` is the package."""
    parts = f.relative_to(LIB).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def graph() -> dict[str, set[str]]:
    """Module -> the lib modules it imports (``from .x import y``, ``from .. import x``,
    ``from .pkg import mod``), each resolved to the module it names."""
    g = {}
    modules = {module_name(f) for f in LIB.rglob("*.py")}
    for f in LIB.rglob("*.py"):
        me = module_name(f)
        package = me.split(".")[:-1] if f.stem != "__init__" else me.split(".")
        deps = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Import):  # `import lib.engine.runs`
                deps |= {
                    a.name.partition(".")[2] for a in node.names if a.name.split(".")[0] == "lib"
                }
                continue
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level >= 1:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.split(".")[0] == "lib":
                # `from lib.book import x`: the same edge
                target = node.module.partition(".")[2]
            else:
                continue
            for a in node.names:  # `from . import bundle` imports a module, not a name
                sub = f"{target}.{a.name}" if target else a.name
                deps.add(sub if sub in modules else target)
        g[me] = {d for d in deps if d and d != me}
    return g


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == "open":
                return stack[stack.index(m) :] + [m]
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
    assert g["engine.config"] == set()
    # how a run's files are written, what trained it
    assert g["engine.files"] == set() and g["engine.host"] == set()
    assert g["claims.verdicts"] == set()  # the verdict rule stands below every claim

    def layers(m):  # the top-level package or module of each import: book.chapter is the book layer
        return {d.split(".")[0] for d in g[m]}

    engine = [m for m in g if m.startswith("engine.")]
    assert engine and not any(layers(m) & {"book", "claims", "cli"} for m in engine)
    # the parts of the paper hold the entries and rows, which the
    # registry gathers and the card prints
    gatherers = {
        "claims.registry",
        "claims.scorecard",
        "claims.findings",
        "claims.rows",
        "claims.evidence",
        "claims.parts",
        *(m for m in g if m.startswith("claims.parts.")),
    }
    deciders = [m for m in g if m.startswith("claims.") and m not in gatherers]
    # claims decide; the list gathers them; the book layer renders
    assert deciders and not any(layers(m) & {"book", "cli"} or g[m] & gatherers for m in deciders)


def _lines_not_comments(text):
    # Comment-only lines are left out of a file's length: the house asks for why-comments at
    # nanoGPT's density (about one for every three code lines), and a well-commented file must not
    # be pushed into a split by its comments.
    return sum(1 for ln in text.splitlines() if not ln.lstrip().startswith("#"))


def test_a_files_length_leaves_out_its_comment_lines():
    assert _lines_not_comments("x = 1\n    # why\n\ny = 2  # trailing\n") == 3


def test_no_lib_file_is_long_without_saying_why():
    # The house's files stay under about 350 lines; a longer one says in its docstring why it is
    # one file. The 350 was counted at 120 columns in the house's own layout; ruff's layout at 100
    # columns writes the same code in up to 1.7 times the lines (lib/book/plots/curves.py: 334 to
    # 568), so the count here allows 600. The docstring's marker is still "350 lines".
    long = [
        f.relative_to(LIB)
        for f in sorted(LIB.rglob("*.py"))
        if _lines_not_comments(f.read_text()) > 600
        and "350 lines" not in (ast.get_docstring(ast.parse(f.read_text())) or "")
    ]
    assert long == []
