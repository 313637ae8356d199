"""The only place a claim is decided: one module per part of the paper, each claim function returning its
verdict and the facts it rests on. Chapters import results and verdicts, never the book layer or plots."""
