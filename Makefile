# Two entry points for a fresh machine: `make play` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play test lint typecheck pytest install clean netdeps

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
pytest: $(STAMP) netdeps
	$(PYTHON) tools/netns_run.py -- $(BIN)/pytest

# What the network tests run besides Python: `dig` (a standard mDNS client, to check our
# announcements) and `ip` (network namespaces for the LAN tests). Installed here, before the
# suite enters its namespace, because inside there is no registry. Without root or apt the
# tests that need them say so and are skipped.
netdeps:
	@command -v dig >/dev/null && command -v ip >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    apt-get update -qq && apt-get install -y -qq dnsutils iproute2 >/dev/null; } || \
	  echo "netdeps: dig or ip missing and cannot be installed here"

test: lint typecheck pytest

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
