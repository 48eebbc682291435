# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test lint typecheck contracts pytest bench screenshots clean

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

bench: $(STAMP)
	$(BIN)/python bench/ledger.py
	$(BIN)/python bench/planner.py
	$(BIN)/python bench/probe.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/ui_start.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python tools/screenshot.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
