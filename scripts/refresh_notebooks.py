"""Execute every chapter and keep only the outputs nbval compares.

Cells tagged ``nbval-check-output`` keep their outputs (nbval checks them in CI);
every other output is cleared, since the book re-executes the chapters and their
tables and figures change whenever runs/ does.

    python scripts/refresh_notebooks.py [book/chapter.ipynb ...]
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

BOOK = Path(__file__).resolve().parent.parent / "book"


def refresh(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(BOOK)}}
    ).execute()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if "nbval-check-output" not in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    print(f"refreshed {path.relative_to(BOOK.parent)}")


if __name__ == "__main__":
    for p in sys.argv[1:] or sorted(BOOK.glob("*.ipynb")):
        refresh(Path(p).resolve())
