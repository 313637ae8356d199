"""The paper's reported values: one file, ``data/paper_results.csv``, each row with its table/section."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pandas as pd

PAPER_CSV = Path(__file__).resolve().parent.parent / "data" / "paper_results.csv"


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
