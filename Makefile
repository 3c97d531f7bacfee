# postgame — the two commands a new user needs:
#   make demo   # set-up on first use, then the embedded default end to end (stack, tasks, traffic, cycles)
#   make test   # set-up on first use, then the house rules (lint) and the whole test suite (what CI runs)
# Also: make lint | fmt | test-fast (no servers) | down | clean
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast lint fmt setup sandbox down clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory sandbox
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $@

# The evaluation sandbox uses bubblewrap; without it the harness falls back to rlimits and says so in every report.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 || echo "warning: could not install bubblewrap"; \
	  else echo "warning: bubblewrap missing (sudo apt-get install bubblewrap); the harness will use rlimits only"; fi; }

demo: $(STAMP)
	$(BIN)/postgame demo

# The house rules that tooling can check: the formatter, lint, the import layers (CONTRIBUTING.md), types of the core.
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	$(BIN)/python -m pytest -q

# No servers: unit and regression tests only (seconds to a few minutes).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not services" tests/unit tests/regression

down: $(STAMP)
	$(BIN)/postgame down

clean:
	-$(BIN)/postgame down
	rm -rf .postgame
