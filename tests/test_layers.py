"""lib is three layers, imported one way: the book (``lib/book``: notebook parameters, tables,
rendering, plots) imports the claims (``lib/claims``: what decides or gathers a claim), which import
the engine (``lib/engine``: whatever reads or writes runs and trains), which imports neither. Every
import is read from the source (ast), lazy ones inside functions too; the command line
(``lib/cli.py``) stands above all three."""

from test_imports import LIB, graph

# lowest first: a layer may import only those before it and itself
LAYERS = ("engine", "claims", "book")

# Imports known to go the wrong way, each (importer, imported) by module: none left
# since the claims read a chapter's runs through their own reader
# (claims.runset.RunSet), which the notebook's Chapter is.
ALLOWED: set[tuple[str, str]] = set()


def layer(module: str) -> str | None:
    """``claims.registry`` -> ``claims``; None for lib's top-level modules (the
    CLI, ``__main__``, the package)."""
    head = module.split(".")[0]
    return head if head in LAYERS else None


def upward(g: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Every (importer, imported) where a layer imports one above it."""
    return {
        (m, d)
        for m, deps in g.items()
        for d in deps
        if layer(m) and layer(d) and LAYERS.index(layer(d)) > LAYERS.index(layer(m))
    }


def test_no_layer_imports_one_above_it():
    found = upward(graph())
    assert found - ALLOWED == set(), f"imports against the layers: {sorted(found - ALLOWED)}"
    # an allowed offender that is gone must leave the list, so the list only ever shrinks
    assert ALLOWED - found == set(), (
        f"no longer imported, remove from ALLOWED: {sorted(ALLOWED - found)}"
    )


def test_the_check_finds_an_import_going_up():
    g = {
        "engine.runs": {"claims.verdicts"},
        "claims.rows": {"book.tables", "engine.plans"},
        "book.chapter": {"claims.registry", "engine.runs"},
        "cli": {"book", "engine.config"},
    }
    assert upward(g) == {("engine.runs", "claims.verdicts"), ("claims.rows", "book.tables")}


def test_at_most_eight_modules_at_libs_top_level_and_every_other_in_a_layer():
    top = sorted(p.name for p in LIB.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists())
    assert len(top) <= 8, top
    assert [m for m in graph() if layer(m) is None and "." in m] == []


def test_the_readme_stays_short_and_opens_with_the_two_commands():
    # issue 58 item 4: at most 1,800 words (it was 4,715), in nanoGPT's order: the
    # answer, then the two commands
    text = (LIB.parent / "README.md").read_text()
    assert len(text.split()) <= 1800, len(text.split())
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads[:2] == ["## Two commands", "## What the first page shows"], heads
