"""What trained a run: the host and the code, as env.json records them
(lib.engine.experiment writes it).

The paper's absolute losses shift across environments (§3.5, §8.3), and a rounding-only
change of kernel can move an escape here (book/escape_and_bundle.ipynb), so a run names its
machine as well as its commit.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from pathlib import Path

import torch

# Anchored to the package, not to the working directory: a notebook executed from book/, a
# test in a temporary folder and a sweep started anywhere all find the same repository
# (and lib.engine.runs its runs/).
ROOT = Path(__file__).resolve().parents[2]  # lib/engine/host.py -> the repository


def memory_bytes(device: str) -> int | None:
    """The memory a run on ``device`` has at most: the GPU's own, or the machine's RAM; None where
    it cannot be read (lib.engine.experiment.check_fits then refuses nothing)."""
    if device.startswith("cuda"):
        return torch.cuda.get_device_properties(device).total_memory
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # no sysconf name for it (not Linux or macOS)
        return None


def git_state() -> dict:
    # git missing, not a repository (a release tarball) or hung: the run still
    # trains and records no commit.
    def git(*args):
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10
            ).stdout.strip()  # a hung git must not hold up training
        except (OSError, subprocess.SubprocessError):
            return ""

    commit = git("rev-parse", "HEAD")
    # Only lib/ counts: runs/ changes while a sweep trains and says nothing about the code.
    # A released run must have a commit and a clean lib/ (tests/test_released.py), so its
    # code can be checked out again.
    dirty = bool(git("status", "--porcelain", "--", "lib"))  # does the code that trained differ?
    return {"git_commit": commit or None, "git_dirty_lib": dirty}


def last_commit(path: Path) -> str | None:
    """The commit that last changed ``path`` in this repository (None where git, the
    repository or the file's history is missing): where a file's released version can be
    checked out again once it is replaced."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", str(path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


# Read once, when lib is imported: a long sweep process keeps running the code it
# imported, so a later commit must not be credited with its runs.
GIT_AT_IMPORT = git_state()


def environment(
    device: str,
    deterministic: bool,
    compile: bool,
    precision: str = "fp32",
    diagnostics: bool = True,
) -> dict:
    # What a reader needs to tell two machines apart: the paper's absolute losses shift
    # across environments (§3.5), and §8.3 names the GPU, PyTorch and CUDA version of each
    # sweep, so every run records them.
    import numpy

    env = {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "device": device,
        "threads": torch.get_num_threads(),  # CPU speed depends on it
        "deterministic": deterministic,
        "compile": compile,
        "diagnostics": diagnostics,
        # read back, not assumed
        "cublas_workspace_config": os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        **GIT_AT_IMPORT,
    }
    # Spelled out: bf16 here is autocast (fp32 weights and optimiser state,
    # bf16 matmuls), not bf16 weights.
    env["precision"] = "bf16 autocast" if precision == "bf16" else "fp32"
    if device.startswith("cuda"):
        # "cuda" alone does not tell an A100-PCIE from an A100-SXM4, the two GPUs of
        # the paper's two sweeps (§8.3).
        env.update(device_name=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    else:
        # "cpu" alone does not tell two hosts apart, and their kernels round differently: torch
        # dispatches by the instruction set it finds (AVX2 or AVX-512), and a rounding-only change
        # can move an escape (book/escape_and_bundle.ipynb). Sessions here have run on an AVX2 AMD
        # EPYC and an AVX-512 Intel Xeon.
        env.update(device_name=cpu_model(), cpu_capability=torch.backends.cpu.get_cpu_capability())
    return env


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name as Linux reports it (``cpuinfo``'s first "model name"). Where
    there is none (another system, or a Linux CPU whose cpuinfo has no such line, as on
    many ARM kernels) it says so and names the architecture instead, so env.json never
    passes off the architecture as a model."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:  # no /proc: not Linux
        pass
    return f"unknown {platform.machine() or 'CPU'} (no model name in {cpuinfo})"
