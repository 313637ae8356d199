"""What a table's columns are called on the page: the book's tables keep the code's names (the tests
and the verdicts read the frames by them), and ``tables.frame_html`` shows each in words."""

from __future__ import annotations

import re

# What a column is called on the page, where the frame's own name is the code's. A configuration
# field (n_layer in the presets table) keeps its name where it is one: it is the name a reader
# passes to the code. A name built from a parameter is matched in ``header``.
HEADERS = {
    # a configuration, an implementation, where in the paper
    "config": "configuration",
    "impl": "implementation",
    "ref": "reference",
    # seed_table, joint_collapse.collapse_verdicts, Chapter.probe
    "escape_steps": "left the floor at step (each seed)",
    "escape_step": "left the floor at step",
    "best_val_min": "lowest best val",
    "best_val_max": "highest best val",
    "best_val_loss": "best val loss",
    "best_step": "best at step",
    "unigram_floor": "unigram floor",
    # asymmetry.asymmetry, Table 6's quantities
    "attn_mean": "AttnOnly mean",
    "ffn_mean": "FFNOnly mean",
    "full_mean": "FullResidual mean",
    "mean_gap": "gap of the means (FFNOnly - AttnOnly)",
    "min_gap": "smallest gap (best FFNOnly - worst AttnOnly)",
    "worst_attn_below_ffn_mean": "worst AttnOnly below the FFNOnly mean",
    "asym_ratio": "asymmetry ratio (FFNOnly / AttnOnly)",
    "attn_gap_pct": "AttnOnly above FullResidual (%)",
    # joint_collapse.layer0_grad and final_values
    "final": "last",
    "max_second_half": "largest in the second half",
    "starved_from_step": "starved from step",
    "hidden_growth": "hidden-state growth (last)",
    # fixed_val_batches.val_noise and gap_vs_noise
    "eval_batches": "batches an evaluation",
    "fixed_val": "val loss, fixed batches",
    "random_mean": "val loss, random batches (mean)",
    "per_batch_std": "std of one batch",
    "random_eval_std": "std of one random evaluation",
    "gap_over_noise": "gap over its noise (std)",
    # gain.spread_after
    "max_spread_any_step": "largest spread, any step",
    "spread_at_last_step": "spread at the last step",
    "n_gains": "gains",
    # mechanism: the ladder of floors and the probes
    "on_fixed_batches": "nats on the fixed batches",
    "position_cosine": "cosine between positions",
    "token_accuracy": "input token read back (accuracy)",
    "token_chance": "chance (most frequent token)",
    "effective_rank": "effective rank",
}
# gain.spread_after's column, named for its step
_SPREAD_FROM = re.compile(r"max_spread_from_step_(\d+)$")


def header(name):
    """A column's (or an index's) name on the page (``HEADERS``); a name that is not
    the code's is shown as it is."""
    if isinstance(name, tuple):  # a column of a two-level header: each level in words
        return tuple(header(n) for n in name)
    if not isinstance(name, str):
        return name
    if m := _SPREAD_FROM.match(name):
        return f"largest spread from step {int(m.group(1)):,}"
    return HEADERS.get(name, name)
