"""§5.1: does a runtime gain on the kept branch decide whether a run leaves the floor, and do the curves that
leave it coincide."""
from __future__ import annotations

import pandas as pd

from ..experiment import ESCAPE_MARGIN
from ..verdicts import verdict


def claim_gain_fate(table: pd.DataFrame, gains=(0.25, 0.5, 2.0, 4.0)) -> tuple[str, str]:
    """(verdict, text) of §5.1's "all gain values functionally equivalent", read on where each run ends:
    runtime gains (``gains``, the paper's set) that end on both sides of the floor are not equivalent.
    ``table``: a ``gain.gain_table``. Valid only where some run of the table left the floor."""
    from ..gain import floor_outcomes
    col = "escape step (runtime)"
    if col not in table.columns:
        return verdict(False, False, False), "No runtime-gain run is finished."
    esc = table[col].dropna()
    esc = esc[esc.index.isin([float(g) for g in gains])]
    if len(esc) < 2:
        return verdict(False, False, False), "Fewer than two of the paper's runtime gains are finished."
    left, stayed = [g for g, v in esc.items() if v != "none"], [g for g, v in esc.items() if v == "none"]
    any_left = any(v != "none" for c in table.columns if c.startswith("escape step") for v in table[c].dropna())
    v = verdict(True, any_left, not (left and stayed))
    return v, floor_outcomes(table) + f"\n(a) Runtime gains equivalent in where AttnOnly ends: {v}."


def claim_gain_absorbed(curves: pd.DataFrame, floor: float, bound: float, step: int = 200,
                        gains=(0.25, 0.5, 2.0, 4.0), margin: float = ESCAPE_MARGIN,
                        spreads: dict | None = None) -> tuple[str, str]:
    """(verdict, text) of §5.1's "curves overlapped completely (spread < ``bound`` at any step)", read only on
    the paper's runtime gains whose run left the floor (curves that sit on the floor coincide trivially); the
    weight-level gains that left it are the yardstick. ``curves``: ``gain.gain_curves`` rows; ``spreads``:
    ``gain_spreads`` of the same arguments, if the caller has it already."""
    c = curves[curves.gain.isin([float(g) for g in gains])]
    s = spreads if spreads is not None else gain_spreads(curves, floor, step, gains, margin)
    left = s["runtime_gains"]
    if c[c["mode"] == "runtime"].gain.nunique() < 2:
        return verdict(False, False, False), "Fewer than two of the paper's runtime gains are finished."
    if len(left) < 2:
        return (verdict(True, False, False),
                f"(b) Only {len(left)} of the paper's runtime gains left the floor: the runtime curves that did cannot "
                f"be compared, and curves on the floor coincide trivially. NOT TESTABLE HERE.")
    r = s["runtime"]
    if pd.isna(r):
        return verdict(False, False, False), f"The runtime-gain runs end before step {step}."
    text = (f"(b) Runtime gains that left the floor (g = {', '.join(f'{g:g}' for g in left)}): largest spread of "
            f"their validation curves from step {step} on {r:.4f} (paper: < {bound} at any step).")
    if s["weight"] is not None:
        text += (f" Weight-level gains that left it (g = {', '.join(f'{g:g}' for g in s['weight_gains'])}): "
                 f"{s['weight']:.4f}.")
    v = verdict(True, True, r < bound)
    return v, text + f"\n(b) Absorbed to the paper's precision: {v}."


def gain_spreads(curves: pd.DataFrame, floor: float, step: int = 200, gains=(0.25, 0.5, 2.0, 4.0),
                 margin: float = ESCAPE_MARGIN) -> dict:
    """Per mode, the largest spread from ``step`` on of the validation curves of the gains in ``gains`` whose
    run left the floor (None with fewer than two), and those gains."""
    from ..gain import spread_after
    c = curves[curves.gain.isin([float(g) for g in gains])]
    out = {}
    for mode in ("runtime", "weight"):
        m = c[c["mode"] == mode]
        left = sorted(g for g, r in m.groupby("gain") if (r.val_loss <= floor - margin).any())
        out[f"{mode}_gains"] = left
        out[mode] = (spread_after(m[m.gain.isin(left)], step=step)[f"max_spread_from_step_{step}"].iloc[0]
                     if len(left) >= 2 else None)
    return out
