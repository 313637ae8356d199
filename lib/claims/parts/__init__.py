"""The claims, one module per part of the paper, named by its section: each holds its claims'
entries (``CLAIMS``), what they read from the runs and the card rows they show; the functions that
decide them are the topic modules' (``lib.claims.joint_collapse``, ``asymmetry``, ...) or the part's
own. Adding a claim is one entry in its part's ``CLAIMS`` plus its pinned verdict
(tests/test_released_verdicts.py)."""

from . import (
    s4_joint_collapse,
    s5_1_runtime_gain,
    s5_2_validation,
    s6_1_asymmetry,
    s6_2_sweep_124m,
    s7_routing,
    s8_schedule,
)

# The paper's order: the card prints the paper's claims in it (§4 to §7), the
# book's own §8 findings after them.
PARTS = (
    s4_joint_collapse,
    s5_1_runtime_gain,
    s5_2_validation,
    s6_1_asymmetry,
    s6_2_sweep_124m,
    s7_routing,
    s8_schedule,
)
