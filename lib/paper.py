"""The paper's reported values (``data/paper_results.csv``, each row with its table or section) and the author's
10M recipes as read in the author's notebooks (``data/author_recipes.csv``, each entry with its cell)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

PAPER_CSV = Path(__file__).resolve().parent.parent / "data" / "paper_results.csv"
RECIPES_CSV = PAPER_CSV.with_name("author_recipes.csv")
CURVES_CSV = PAPER_CSV.with_name("author_phase2_curves.csv")  # written by scripts/author_curves.py
AUDIT_CSV = PAPER_CSV.with_name("audit_findings.csv")


@lru_cache(maxsize=1)
def _table() -> pd.DataFrame:
    df = pd.read_csv(PAPER_CSV, dtype={"seed": "Int64", "n": "Int64", "value": str, "std": str, "phase": str,
                                       "note": str})
    df = df.fillna({"phase": "", "note": ""})
    # `reported` keeps the paper's own digits ("1.580 ± 0.003", not 1.5800 ± 0.0030), for display;
    # `value` and `std` are the numbers, for arithmetic.
    for line, (v, sd) in enumerate(zip(df.value, df["std"]), start=2):
        for text in (v,) if pd.isna(sd) else (v, sd):
            try:
                float(text)
            except (TypeError, ValueError):
                raise ValueError(f"{PAPER_CSV.name} line {line}: value/std {text!r} is not a number") from None
    df["reported"] = [v if pd.isna(sd) else f"{v} ± {sd}" for v, sd in zip(df.value, df["std"])]
    # which standard deviation the paper's ± is, where its source says (the author's notebooks use np.std)
    df["population_std"] = df.note.str.contains("population std (ddof=0", regex=False)
    return df.astype({"value": float, "std": float})


def paper_values(**where) -> pd.DataFrame:
    """Rows of the paper file matching every ``column=value`` given (e.g. ref='Table 5')."""
    df = _table()
    for col, val in where.items():
        if col not in df.columns:
            raise KeyError(f"unknown column {col!r}; valid: {', '.join(df.columns)}")
        df = df[df[col] == val]
    return df.reset_index(drop=True)


def paper_value(**where) -> float:
    """The single value matching ``where``; an error if there is not exactly one."""
    df = paper_values(**where)
    if len(df) != 1:
        raise KeyError(f"{len(df)} paper rows match {where}; expected exactly one")
    return float(df.value.iloc[0])


def mixer_rule() -> tuple[float, float]:
    """The author's decision rule for §7.2's mixer run (code only, not the paper's text): above the first value
    "consistent with cross-position routing", below the second "routing not supported"."""
    return (paper_value(ref="§7.2", metric="mixer_rule_routing_above"),
            paper_value(ref="§7.2", metric="mixer_rule_not_routing_below"))


@lru_cache(maxsize=1)
def author_recipes() -> pd.DataFrame:
    """One row per notebook and field (``notebook``, ``produced``, ``field``, ``value``, ``cell``, ``note``);
    ``produced`` (what the notebook's outputs are, in the paper's terms) is given on each notebook's rows."""
    df = pd.read_csv(RECIPES_CSV, dtype=str).fillna("")
    missing = df[df.cell == ""]
    if len(missing):
        raise ValueError(f"{RECIPES_CSV.name}: every entry needs its cell; missing on {list(missing.field)}")
    first = df.groupby("notebook", sort=False).produced.transform("first")
    return df.assign(produced=first)


def recipe_table() -> pd.DataFrame:
    """The recipes side by side: one row per field, one column per notebook, each entry "value (cell N)"."""
    df = author_recipes()
    cells = [c.split("; ") for c in df.cell]
    df = df.assign(entry=[f"{v} (cell{'s' if len(c) > 1 else ''} {', '.join(c)})" for v, c in zip(df.value, cells)],
                   name=df.notebook.str.rsplit("/", n=1).str[-1])
    produced = df.drop_duplicates("name").set_index("name").produced
    table = df.pivot(index="field", columns="name", values="entry").reindex(
        index=list(dict.fromkeys(df.field)), columns=list(produced.index))
    head = pd.DataFrame([produced.values], index=["what its outputs are"], columns=produced.index)
    return pd.concat([head, table]).rename_axis("").reset_index()


def recipe_entry(notebook: str, field: str) -> str:
    """One entry of ``author_recipes`` (the notebook's file name, e.g. ``AttnOnly_seed_stability.ipynb``)."""
    df = author_recipes()
    row = df[(df.notebook.str.endswith("/" + notebook)) & (df.field == field)]
    if len(row) != 1:
        raise KeyError(f"{len(row)} entries for {notebook!r} {field!r}; fields: {', '.join(dict.fromkeys(df.field))}")
    return row.value.iloc[0]


@lru_cache(maxsize=1)
def author_phase2_curves() -> pd.DataFrame:
    """The per-step validation losses the author's Phase-2 notebook printed (every 100 steps; step 0 is not
    printed), one row per evaluation: notebook, cell, config, seed, step, train_loss, val_loss."""
    return pd.read_csv(CURVES_CSV)


def audit_findings() -> pd.DataFrame:
    """What reading the paper against the author's notebooks found: finding, where (the paper's section or table
    and the notebook cell), evidence."""
    return pd.read_csv(AUDIT_CSV, dtype=str)
