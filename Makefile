# postgame — the two commands a new user needs:
#   make demo   # set-up on first use, then the embedded default end to end (stack, tasks, traffic, one cycle)
#   make test   # set-up on first use, then the whole test suite
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test setup sandbox down clean

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

test: $(STAMP)
	$(BIN)/python -m pytest -q

down: $(STAMP)
	$(BIN)/postgame down

clean:
	-$(BIN)/postgame down
	rm -rf .postgame
