"""The paper's reported values (``data/paper_results.csv``, each row with its table or
section) and the author's 10M recipes as read in the author's notebooks
(``data/author_recipes.csv``, each entry with its cell)."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ..engine.host import ROOT

# STYLE rule 6: every number the book prints is from runs/ or from this one file of paper values; a
# chapter that needs a paper number asks for it by table and configuration here and never types it.
PAPER_CSV = ROOT / "data" / "paper_results.csv"
RECIPES_CSV = PAPER_CSV.with_name("author_recipes.csv")
CURVES_CSV = PAPER_CSV.with_name("author_phase2_curves.csv")  # written by scripts/author_curves.py
AUDIT_CSV = PAPER_CSV.with_name("audit_findings.csv")
# written by scripts/author_curves.py
NANOGPT10M_CSV = PAPER_CSV.with_name("author_nanogpt10m_curves.csv")


# Read once per process: every chapter, the scorecard and the tests ask for
# paper values many times per build.
@lru_cache(maxsize=1)
def _table() -> pd.DataFrame:
    # value and std as text first: a float would turn the paper's "1.580" into 1.58
    # and lose the digits it printed
    df = pd.read_csv(
        PAPER_CSV,
        dtype={"seed": "Int64", "n": "Int64", "value": str, "std": str, "phase": str, "note": str},
    )
    # empty text, not NaN: phase="" then selects the rows of no phase, and the note
    # search below is True or False
    df = df.fillna({"phase": "", "note": ""})
    # `reported` keeps the paper's own digits ("1.580 ± 0.003", not 1.5800 ± 0.0030), for display;
    # `value` and `std` are the numbers, for arithmetic.
    # A typo in the file fails here with its line (the header is line 1), not later as
    # a NaN in some chapter's table.
    for line, (v, sd) in enumerate(zip(df.value, df["std"]), start=2):
        for text in (v,) if pd.isna(sd) else (v, sd):
            try:
                float(text)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{PAPER_CSV.name} line {line}: value/std {text!r} is not a number"
                ) from None
    df["reported"] = [v if pd.isna(sd) else f"{v} ± {sd}" for v, sd in zip(df.value, df["std"])]
    # which standard deviation the paper's ± is, where its source says (the
    # author's notebooks use np.std)
    df["population_std"] = df.note.str.contains("population std (ddof=0", regex=False)
    return df.astype({"value": float, "std": float})


def paper_values(**where) -> pd.DataFrame:
    """Rows of the paper file matching every ``column=value`` given (e.g. ref='Table 5')."""
    df = _table()
    for col, val in where.items():
        # a misspelt column would otherwise select nothing, and a chapter would
        # show an empty table in silence
        if col not in df.columns:
            raise KeyError(f"unknown column {col!r}; valid: {', '.join(df.columns)}")
        df = df[df[col] == val]
    return df.reset_index(drop=True)


def paper_value(**where) -> float:
    """The single value matching ``where``; an error if there is not exactly one."""
    df = paper_values(**where)
    # two matches (a seed or phase left unnamed) must not quietly
    # resolve to whichever row comes first
    if len(df) != 1:
        raise KeyError(f"{len(df)} paper rows match {where}; expected exactly one")
    return float(df.value.iloc[0])


def mixer_rule() -> tuple[float, float]:
    """The author's decision rule for §7.2's mixer run (code only, not the paper's
    text): above the first value "consistent with cross-position routing", below the
    second "routing not supported"."""
    # In the paper file, not here: thresholds read from the author's notebook
    # are paper values like any other.
    return (
        paper_value(ref="§7.2", metric="mixer_rule_routing_above"),
        paper_value(ref="§7.2", metric="mixer_rule_not_routing_below"),
    )


@lru_cache(maxsize=1)
def author_recipes() -> pd.DataFrame:
    """One row per notebook and field (``notebook``, ``produced``, ``field``, ``value``,
    ``cell``, ``note``); ``produced`` (what the notebook's outputs are, in the paper's terms)
    is given on each notebook's rows."""
    # all text: "3e-4" stays as the notebook wrote it
    df = pd.read_csv(RECIPES_CSV, dtype=str).fillna("")
    missing = df[df.cell == ""]
    # an entry without its cell cannot be checked against the notebook, so it is
    # not allowed to reach the book
    if len(missing):
        raise ValueError(
            f"{RECIPES_CSV.name}: every entry needs its cell; missing on {list(missing.field)}"
        )
    # the file names what a notebook produced on its first row only; each row gets it, for filtering
    first = df.groupby("notebook", sort=False).produced.transform("first")
    return df.assign(produced=first)


def recipe_table() -> pd.DataFrame:
    """The recipes side by side: one row per field, one column per
    notebook, each entry "value (cell N)"."""
    df = author_recipes()
    # "1; 4": a value the notebook sets in more than one cell
    cells = [c.split("; ") for c in df.cell]
    df = df.assign(
        entry=[
            f"{v} (cell{'s' if len(c) > 1 else ''} {', '.join(c)})" for v, c in zip(df.value, cells)
        ],
        name=df.notebook.str.rsplit("/", n=1).str[-1],
    )
    produced = df.drop_duplicates("name").set_index("name").produced
    # pivot sorts rows and columns alphabetically; the reindex puts back the file's
    # order of fields and notebooks
    table = df.pivot(index="field", columns="name", values="entry").reindex(
        index=list(dict.fromkeys(df.field)), columns=list(produced.index)
    )
    # a first row saying what each notebook produced, so that the reader knows
    # which table each recipe is behind
    head = pd.DataFrame([produced.values], index=["what its outputs are"], columns=produced.index)
    return pd.concat([head, table]).rename_axis("").reset_index()


def recipe_entry(notebook: str, field: str) -> str:
    """One entry of ``author_recipes`` (the notebook's file name, e.g.
    ``AttnOnly_seed_stability.ipynb``)."""
    df = author_recipes()
    # the "/" makes the match a whole file name: "10M.ipynb" must not pick NanoGPT_10M.ipynb
    row = df[(df.notebook.str.endswith("/" + notebook)) & (df.field == field)]
    if len(row) != 1:
        raise KeyError(
            f"{len(row)} entries for {notebook!r} {field!r}; fields: "
            f"{', '.join(dict.fromkeys(df.field))}"
        )
    return row.value.iloc[0]


@lru_cache(maxsize=1)
def author_phase2_curves() -> pd.DataFrame:
    """The per-step validation losses the author's Phase-2 notebook printed (every 100
    steps; step 0 is not printed), one row per evaluation: notebook, cell, config,
    seed, step, train_loss, val_loss."""
    # read from the notebook's printed lines by scripts/author_curves.py:
    # building the book needs no copy of it
    return pd.read_csv(CURVES_CSV)


@lru_cache(maxsize=1)
def author_nanogpt10m_losses() -> pd.DataFrame:
    """The last losses the author's NanoGPT_10M notebook printed (seed 1337, step 2,999), one row
    per configuration: notebook, cell, config, seed, step, train_loss, val_loss. FFNOnly is printed
    in two cells with the same numbers; the summary cell's row is kept."""
    return pd.read_csv(NANOGPT10M_CSV).drop_duplicates(subset=["config", "step"], keep="last")


def audit_findings() -> pd.DataFrame:
    """What reading the paper against the author's notebooks found: finding, where (the paper's
    section or table and the notebook cell), evidence."""
    # text throughout: the evidence quotes the notebooks' own printed numbers, digits and all
    return pd.read_csv(AUDIT_CSV, dtype=str)


AUTHOR_124M_ESCAPE_CSV = PAPER_CSV.with_name("author_124m_escape.csv")


def author_124m_escape() -> pd.DataFrame:
    """What the author's 124M notebooks printed of AttnOnly early in training (source, cell,
    seed, step, val_loss, the rate at that step, the printed line): how early the paper's 124M
    left the floor, and at what rate."""
    return pd.read_csv(AUTHOR_124M_ESCAPE_CSV)


def paper_seed_values(scale: str, metric: str = "best_val_loss") -> pd.DataFrame:
    """The paper's single-seed values at ``scale`` (one row per configuration and
    seed, with its table or section in ``ref``): what the author's runs printed
    seed by seed, for the seed plots."""
    df = paper_values(metric=metric)
    return df[(df.scale == scale) & df.seed.notna() & (df.n == 1)][
        ["config", "seed", "value", "ref"]
    ]
