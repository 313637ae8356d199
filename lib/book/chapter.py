"""What every chapter does: validate its parameters, (re)train on request, load runs, tabulate.

A chapter's first code cell holds its papermill parameters; its second calls
``Chapter.open(name, globals())``, which refuses unknown parameter names and bad values with a
message naming the valid ones and prints the scale banner; it trains nothing. The next cell calls
``Chapter.retrain`` when a seed is given.

A chapter's parameters are many and each is checked with a message naming the valid values
(``open``). The runs it reads, released and retrained, are a claims-side ``RunSet``
(``lib.claims.runset``), which a ``Chapter`` is; the one-chapter computations live in ``lib.claims``
and the tables in ``lib.book.tables``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch

from ..claims.runset import CHAPTERS, RunSet
from ..engine.config import (
    PAPER_SEED,
    STAND_IN_FOR,
    ConfigError,
    check_seed,
    get_preset,
    off_preset_steps,
)
from ..engine.host import ROOT
from ..engine.runs import RUNS_DIR
from ..engine.thresholds import judged_floor
from ..engine.train import Callback
from .tables import show_tables_as_the_book_does, variant_label

# Every training chapter's parameters cell: these names and defaults, overridden by papermill's -p
# NAME VALUE. A name that is not here is refused (``Chapter.open``), never ignored.
PARAMETERS = {
    "scale": "auto",
    "seed": None,
    "steps": None,
    "runs_dir": None,
    "device": "auto",
    "compile": False,
    "eval_batches": None,
}
RETRAIN_DIR = ROOT / "runs-retrain"  # where chapters train; never the released runs/
# IPython's own globals, never a parameter
_IPYTHON_NAMES = {"In", "Out", "exit", "quit", "get_ipython", "open"}


# Its own class, so the tests can tell a refused parameter from any other ValueError.
class ParameterError(ValueError):
    pass


class EvalPrinter(Callback):
    """One line per evaluation of a retrain, so a notebook shows its progress in the cell output."""

    def __init__(self, label: str):
        self.label = label

    def on_history(self, trainer, step):
        r = trainer.history[-1]
        # None: the row a non-finite training loss appends; the run has diverged and stops there
        val = r.get("val_loss")
        # flushed: each line shows in the cell as it happens, not when the cell ends
        print(
            f"{self.label}, step {step:,} of {trainer.cfg.max_steps:,}: "
            + (f"val loss {val:.4f}" if val is not None else "diverged"),
            flush=True,
        )


def check_runs_dir_parameter(value) -> None:
    """A chapter's ``runs_dir``: None, or a folder's path as a string (or a Path). papermill's
    ``-p runs_dir 5`` gives an int, which Path() would meet with a TypeError naming no parameter."""
    if value is not None and not isinstance(value, (str, os.PathLike)):
        raise ParameterError(f"runs_dir must be None or a folder's path (a string), got {value!r}")


def user_names(namespace: dict) -> dict:
    """The parameter-like variables a notebook (or papermill) defined: scalars and strings,
    not modules, functions, imported constants or IPython's own names."""
    # papermill injects the parameters as plain assignments in a cell of their own, so they
    # sit in the globals beside everything else; "_" names are IPython's output history (_,
    # __, _i1). A Path is a runs_dir.
    return {
        k: v
        for k, v in namespace.items()
        if not k.startswith("_")
        and k not in _IPYTHON_NAMES
        and isinstance(v, (type(None), str, int, float, bool, Path))
    }


@dataclass
class Chapter(RunSet):
    """A chapter notebook's run set (``RunSet``: its plan's runs at its scale, and a retrained
    seed's) with the notebook's parameters: checked (``open``), announced (``banner``), retrained
    (``retrain``) and its floors and missing runs said in words. ``runs_dir`` is where a retrain
    writes; released runs are read from runs/."""

    device: str = "auto"  # auto | cpu | cuda
    compile: bool = False

    @classmethod
    def open(
        cls, name: str, namespace: dict, announce: bool = True, released_dir=None
    ) -> "Chapter":
        if name not in CHAPTERS:
            raise ParameterError(f"unknown chapter {name!r}; valid: {', '.join(CHAPTERS)}")
        spec = CHAPTERS[name]
        given = user_names(namespace)
        # A misspelt name (seeds=7) would otherwise show the released runs as if
        # nothing had been asked for.
        unknown = sorted(set(given) - set(PARAMETERS))
        if unknown:
            raise ParameterError(
                f"unknown parameter(s) {', '.join(unknown)}; valid: {', '.join(PARAMETERS)}"
            )
        p = {**PARAMETERS, **given}  # the defaults, then what the cell gave
        # "auto", or one of this chapter's two scales: the 10M chapter cannot be opened at 124M
        valid_scales = ("auto", spec.stand_in, *spec.earlier, spec.paper_scale)
        if p["scale"] not in valid_scales:
            raise ParameterError(
                f"scale {p['scale']!r} is not valid for this chapter; valid: "
                f"{', '.join(valid_scales)}"
            )
        if p["seed"] is not None:  # the command line's rule (lib.engine.config.check_seed)
            try:
                check_seed(p["seed"])
            except ConfigError as e:
                raise ParameterError(f"{e} (or None)") from None  # the message is the whole story
        # bool is refused on its own: True is an int to Python, and steps=True would mean one step
        if p["steps"] is not None and (
            not isinstance(p["steps"], int) or isinstance(p["steps"], bool) or p["steps"] < 1
        ):
            raise ParameterError(f"steps must be None or a positive integer, got {p['steps']!r}")
        # steps and eval_batches set how a retrain runs; without a seed nothing is trained, and
        # the released runs never change
        if p["steps"] is not None and p["seed"] is None:
            raise ParameterError(
                "steps applies to retraining; give a seed too (e.g. -p seed 7 -p steps 20)"
            )
        n = p["eval_batches"]
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise ParameterError(f"eval_batches must be None or a positive integer, got {n!r}")
        if n is not None and p["seed"] is None:
            raise ParameterError(
                "eval_batches applies to retraining; give a seed too (e.g. -p seed 7 -p steps 20 "
                "-p eval_batches 2)"
            )
        if p["device"] not in ("auto", "cpu", "cuda"):  # the choices the parameters cell documents
            raise ParameterError(f"device {p['device']!r}; valid: auto, cpu, cuda")
        if not isinstance(p["compile"], bool):  # a string "False" would be true
            raise ParameterError(f"compile must be True or False, got {p['compile']!r}")
        # "auto" shows the released stand-in runs wherever the book is built; it means the paper's
        # scale only for a retrain (a seed given) on a machine with CUDA.
        cuda = torch.cuda.is_available() and p["device"] != "cpu"
        paper = cuda and p["seed"] is not None
        scale = (
            p["scale"] if p["scale"] != "auto" else (spec.paper_scale if paper else spec.stand_in)
        )
        check_runs_dir_parameter(p["runs_dir"])
        runs_dir = Path(p["runs_dir"] or RETRAIN_DIR)  # the default is runs-retrain/
        # Resolved, so runs/ given by a relative path or through a link is caught too: every table
        # and test reads the released runs, and a finished run is never overwritten (STYLE rule 5).
        if runs_dir.resolve().is_relative_to(RUNS_DIR.resolve()):
            raise ParameterError(
                f"runs_dir {p['runs_dir']!r} is in the released runs/, which a chapter never "
                f"writes; valid: any other directory (default {RETRAIN_DIR.relative_to(ROOT)}/)"
            )
        # None is runs/, looked up when called (not bound when this was defined)
        ch = cls(
            name,
            spec,
            scale,
            seed=p["seed"],
            steps=p["steps"],
            runs_dir=runs_dir,
            eval_batches=p["eval_batches"],
            released_dir=Path(released_dir or RUNS_DIR),
            device=p["device"],
            compile=p["compile"],
        )
        # every DataFrame shown after this cell reads as frame_html writes it
        show_tables_as_the_book_does()
        if announce:
            print(ch.banner())
        return ch

    # -- what the chapter shows ------------------------------------------------
    def banner(self) -> str:
        e = get_preset(self.scale, self.spec.impl)
        # the preset's shape, so a reader sees how far a stand-in is from the paper's model
        shape = (
            f"{e.model.n_layer} layers x {e.model.n_embd} wide, block {e.model.block_size}, "
            f"batch {e.train.batch_size}, {e.train.max_steps:,} steps, data {e.dataset}"
        )
        # Said on every stand-in page, in capitals: its losses must never be read as the
        # paper's (lib.engine.config).
        if self.stand_in:
            text = (
                f"Scale: {self.scale!r}, a CPU STAND-IN for the paper's {STAND_IN_FOR[self.scale]} "
                f"({shape}). Its losses are not the paper's scale; compare orderings and gaps, "
                f"not absolute values."
            )
        else:
            text = f"Scale: {self.scale!r}, the paper's scale ({shape})."
        if self.seed is not None:
            text += (
                f"\nRetraining seed {self.seed}"
                + (f" for {self.steps} steps" if self.steps else "")
                + (f", {self.eval_batches} batches an evaluation" if self.eval_batches else "")
                + f" into {self.runs_dir} (released runs are never overwritten)."
            )
        return text

    def retrain(self, progress: bool = True) -> list[dict]:
        """Train (or resume) the requested seed for every configuration the chapter's tables
        need, with a progress bar and one printed line per evaluation; deterministic
        where the paper's runs were."""
        from ..engine.experiment import run

        out, exps = [], self.retrain_experiments()
        for e in exps:
            print(
                (
                    f"training {variant_label(e)} {e.config_name} seed {e.seed} at {e.scale} into "
                    f"{self.runs_dir}"
                ),
                flush=True,
            )
            # keep_weights: the chapters that read a checkpoint (the fixed-batch noise) can
            # read a retrained seed's too
            out.append(
                run(
                    e,
                    runs_dir=self.runs_dir,
                    device=self.device,
                    progress=progress,
                    keep_weights=True,
                    compile=self.compile,
                    deterministic=self.spec.deterministic,
                    callbacks=[EvalPrinter(f"{e.config_name} seed {e.seed}")],
                )
            )
        # A smoke run is listed here and drawn, labelled, in the curves; every
        # table and verdict leaves it out.
        if self.steps is not None and any(off_preset_steps(e) for e in exps):
            # imported only when there is a smoke run to display
            from IPython.display import display

            print(
                f"These {self.steps}-step runs are not the preset's budget: they are shown here "
                "and labelled in the curve plots, and left out of every table and verdict below."
            )
            cols = ["config", "seed", "steps", "best_val_loss", "escape_step", "status", "path"]
            # their own numbers and paths, since no table below shows them
            display(self.smoke_summaries()[cols])
        return out

    def floor_lines(self) -> dict[str, float]:
        """The floor lines the chapter's figures draw (``plots.floor_lines``): the floor its
        verdicts use first, named for what it is; where that is the empirical NoResidual run,
        the unigram floor beside it."""
        f, used = self.floors(), self.floor()
        # the unigram floor like for like, as in floor()
        unigram = judged_floor(f["val_mode"], f["split"], f["batches"])
        # the empirical floor is drawn first and named: on BPE data it must not be
        # mistaken for the unigram floor
        if used == f["empirical"]:
            return {
                f"NoResidual seed {PAPER_SEED} (the floor used)": used,
                _unigram_name(unigram, f): unigram,
            }
        return {_unigram_name(used, f): used}

    def floor_note(self) -> str:
        f, used = self.floors(), self.floor()
        text = (
            f"unigram floor of the {self.scale} data (lib.engine.data): {f['split']:.4f} "
            f"nats/token on the whole validation split, {f['batches']:.4f} on the fixed "
            "validation batches"
        )
        if f["empirical"] is not None:
            text += (
                f", {f['empirical']:.4f} reached by the NoResidual seed-{PAPER_SEED} run (the "
                "empirical floor)"
            )
        # the note names which floor the verdicts use, so a reader can check the
        # tables against the figure's line
        which = (
            "the empirical floor"
            if used == f["empirical"]
            else "the fixed batches' floor"
            if used == f["batches"]
            else "the whole split's floor (random batches)"
        )
        return text + f". Tables and verdicts below use {which}: {used:.4f}."

    def report_missing(self) -> None:
        """Which of the chapter's runs are missing (with the commands that train them), and
        which finished runs are left out of its tables and verdicts, and why (a file that
        does not match, a diverged run)."""
        # missing and left out are reported apart: a run not trained is not the same
        # as a run that cannot be used
        cmds, out = self.missing(), self.left_out_lines()
        if not cmds:
            print(f"All {len(self.experiments())} runs this chapter shows are present in runs/.")
        else:
            print(
                f"{len(cmds)} of {len(self.experiments())} runs this chapter shows are missing; "
                f"they are left out of every table and plot below. To produce them:"
            )
            for c in cmds:
                print("  " + c)
        if read := self.probe_run_lines():
            budget = self.experiments()[0].train.max_steps
            print(
                f"{len(read)} of the {len(self.experiments()) - len(cmds)} present are read from "
                "the search's probe runs: the same experiments, trained before the stand-in was a "
                "preset (every setting equal but the length of the run, which changes nothing "
                f"before step {budget:,}, where each stopped):"
            )
            for line in read:
                print("  " + line)
        if both := self.both_ways_lines():
            print(
                "Trained both ways, the sweep's own and the search's probe run, on two hosts (the "
                "same experiment, another CPU's arithmetic); the sweep's own is read:"
            )
            for line in both:
                print("  " + line)
        if out:
            print(f"{len(out)} finished run(s) left out of the tables and verdicts below:")
            for line in out:
                print("  " + line)


def _unigram_name(value: float, floors: dict) -> str:
    """A unigram floor's name with the tokens it is the floor of, as ``Chapter.floor_note`` names
    them: one name and one value for each floor on a page (issue 56)."""
    return (
        "unigram floor, fixed validation batches"
        if value == floors["batches"]
        else "unigram floor, whole validation split"
        if value == floors["split"]
        else "unigram floor"
    )
