# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test test-live lint typecheck contracts pytest bench screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $@

run: $(STAMP)
	$(BIN)/vak-desktop

lint: $(STAMP)
	$(BIN)/ruff check vak_desktop tests bench tools
	$(BIN)/ruff format --check vak_desktop tests bench tools

contracts: $(STAMP)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy vak_desktop/context vak_desktop/ledger vak_desktop/providers vak_desktop/runtime vak_desktop/cli

pytest: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

test: lint contracts typecheck pytest

# A real model on a real llama.cpp server (the `embedded` extra): fetches and verifies
# Qwen2.5-Coder-0.5B-Instruct Q4_K_M into $(MODEL_DIR) the first time, then runs tests/live.
# VAK_LIVE_PROBE_TOKENS lowers the probe ladder's 8k cap on a slow machine.
MODEL_DIR ?= $(HOME)/.cache/vak-desktop/models
test-live: $(STAMP)
	$(BIN)/python -c 'import xllamacpp' 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[test,embedded]'
	model=$$(PYTHON=$(BIN)/python tools/fetch-test-model.sh '$(MODEL_DIR)' 0.5b) && \
	VAK_LIVE_MODEL="$$model" QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -v -s -p no:cacheprovider tests/live

bench: $(STAMP)
	$(BIN)/python bench/ledger.py
	$(BIN)/python bench/streaming.py
	$(BIN)/python bench/planner.py
	$(BIN)/python bench/probe.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/ui_start.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/ui_stream.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python tools/screenshot.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
