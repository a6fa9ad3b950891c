# Two entry points for a fresh machine: `make play` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play test lint typecheck pytest install clean mutate

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# A practice round against bots on this machine only (no network at all).
play: $(STAMP)
	$(BIN)/nerts-p2p play --practice

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite runs inside a fresh network namespace (only `lo`, brought up), so no test can
# reach a real interface. Packages are installed before we enter it: inside there is no registry.
pytest: $(STAMP)
	$(PYTHON) tools/netns_run.py -- $(BIN)/pytest

test: lint typecheck pytest

# Mutation testing of the core modules: a campaign (tens of minutes), not part of `make test`.
# Options go through ARGS, e.g. `make mutate ARGS="--module protocol/order.py --sample 40"`.
mutate: $(STAMP)
	$(BIN)/python -m tools.mutate $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
