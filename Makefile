# postgame — the two commands a new user needs:
#   make demo   # set-up on first use, then the embedded default end to end (stack, tasks, traffic, cycles)
#   make test   # set-up on first use, then the house rules (lint) and the whole test suite (what CI runs)
# Also: make lint | fmt | test-fast (no servers) | down | clean
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Python caches each module's bytecode on first import. Container images often set PYTHONDONTWRITEBYTECODE=1 (this
# machine and its CI do), and set-up installs with --no-compile, so every process would compile prefect, mlflow, torch
# and transformers from source again: 21 s against 10 s for their imports alone, paid by every server, CLI call, pool
# worker and sandboxed test run (BENCHMARKS.md "CI wall time"). Here the cache is written, under .venv and the tree.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-fast lint fmt setup sandbox postgres down clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	@$(MAKE) --no-print-directory sandbox
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --no-compile -e '.[dev]'  # no .pyc of all 2.4 GB up front: each module's on first import
	@touch $@

# The evaluation sandbox uses bubblewrap; without it the harness falls back to rlimits and says so in every report.
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 || echo "warning: could not install bubblewrap"; \
	  else echo "warning: bubblewrap missing (sudo apt-get install bubblewrap); the harness will use rlimits only"; fi; }

# `make test` runs the services tests a second time with stack.database: postgres, on the Debian server package. CI
# (CI=true, root) installs it; elsewhere that run is skipped with its reason unless it is installed.
postgres:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1 || { \
	  if [ "$$CI" = true ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null 2>&1 \
	      || echo "warning: could not install postgresql; the PostgreSQL run of the services tests will fail"; \
	  else echo "warning: PostgreSQL missing (sudo apt-get install postgresql); the services tests' PostgreSQL run is skipped"; fi; }

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

# The whole suite on SQLite (the embedded default), then the services tests of POSTGRES_TESTS on PostgreSQL: the full
# cycle against the stack (docs/database.md says why this module; `make test POSTGRES_TESTS=tests/services` runs all),
# less the demo through the deployment (minutes more, and no database code of its own).
# --durations: where the time goes, in every CI log (issue 23: CI's time is measured, not guessed).
POSTGRES_TESTS ?= tests/services/test_stack_cycle.py -k 'not demo'
# -n 2 --dist loadfile: two workers, each module on one of them, all of tests/flows on one and all of tests/services
# on one (tests/conftest.py says why), the longest first.
test: lint postgres
	$(BIN)/python -m pytest -q --durations=40 -n 2 --dist loadfile
	$(BIN)/python -m pytest -q -m services --db postgres $(POSTGRES_TESTS)

# No servers: unit and regression tests only (seconds to a few minutes).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not services" tests/unit tests/regression

down: $(STAMP)
	$(BIN)/postgame down

clean:
	-$(BIN)/postgame down
	rm -rf .postgame
