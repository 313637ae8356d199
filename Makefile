# Two commands on a fresh machine:  `make book` (install + build the HTML book)  and  `make test`.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
VENV := .venv
PY := $(VENV)/bin/python
SHARED := $(abspath ../shared/data)

# Where ../shared is beside the project (CI, this workplace) its files stand in for the two
# downloads; elsewhere lib downloads TinyShakespeare (checksum-verified) and tiktoken its files.
ifneq ($(wildcard $(SHARED)/tinyshakespeare/input.txt),)
export TINYSHAKESPEARE_PATH ?= $(SHARED)/tinyshakespeare/input.txt
endif
ifneq ($(wildcard $(SHARED)/tiktoken-cache),)
export TIKTOKEN_CACHE_DIR ?= $(SHARED)/tiktoken-cache
endif
export PATH := $(abspath $(VENV))/bin:$(PATH)
# The chapters' kernels start in book/, where lib is not on their path: without this they import lib
# through the venv's editable install, i.e. from whichever checkout ran `pip install -e` (a second
# worktree sharing the venv would build and check the other checkout's lib and runs/).
export PYTHONPATH := $(abspath .)$(if $(PYTHONPATH),:$(PYTHONPATH))
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: book test install assets browser lint unit notebooks papermill-check
.DEFAULT_GOAL := book

install: $(VENV)/.installed
$(VENV)/.installed: requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet pip==26.3
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

assets: install
	PYTHON=$(PY) bash scripts/setup_assets.sh
	PYTHON=$(PY) bash scripts/setup_corpora.sh

book: install assets  ## install everything and build the HTML book into _build/html
	jupyter-book build . --all -W -n --keep-going
	@echo "open _build/html/index.html"

browser:
	bash scripts/install_browser.sh

lint: install
	ruff check lib tests scripts book

unit: install
	pytest -q --durations=20 tests

notebooks: install  ## nbval executes every chapter; cells tagged nbval-check-output are compared
	pytest -q --nbval-lax book/

test: install assets browser lint book unit notebooks  ## everything CI runs
