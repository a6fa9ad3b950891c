# Two entry points for a fresh machine: `make play` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: play test lint typecheck pytest install clean mutate window-deps netdeps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# A practice round against 3 bots in the window, on this machine only: the window's node and
# the bots' process talk UDP on 127.0.0.1, nothing is sent to any other interface.
# Without a display it says so in one line and plays the terminal practice game instead.
play: $(STAMP)
	$(BIN)/nerts-p2p window --practice --players 4

# The window's end-to-end test drives a real window under Xvfb with xdotool: install them
# (Debian packages) before the suite enters its network namespace, where no registry is.
window-deps:
	@command -v Xvfb >/dev/null && command -v xdotool >/dev/null || \
		( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq xvfb xdotool >/dev/null) \
		|| echo "xvfb/xdotool could not be installed: the window's end-to-end test will be skipped" )

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite runs inside a fresh network namespace (only `lo`, brought up), so no test can
# reach a real interface. Packages are installed before we enter it: inside there is no registry.
# Two workers (the machine has two cores); the tests that use real sockets, processes or a
# display share one of them, one at a time (tests/conftest.py says why).
pytest: $(STAMP) window-deps netdeps
	$(PYTHON) tools/netns_run.py -- $(BIN)/pytest -n 2 --dist loadgroup --durations=15

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

# Mutation testing of the core modules: a campaign (tens of minutes), not part of `make test`.
# Options go through ARGS, e.g. `make mutate ARGS="--module protocol/order.py --sample 40"`.
mutate: $(STAMP)
	$(BIN)/python -m tools.mutate $(ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
