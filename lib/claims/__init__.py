"""The claims layer: whatever decides or gathers a claim. The topic modules (``joint_collapse``,
``asymmetry``, ``gain_confound``, ...) decide claims, each claim function returning its
verdict and the facts it rests on; ``parts`` holds the claims by part of the paper (their
entries, what they read, the rows they show), which ``registry`` gathers; ``runset`` reads a
chapter's runs; ``scorecard`` and ``findings`` print the card. It imports the engine, never
the book layer (tests/test_layers.py)."""
