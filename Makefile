# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
# a Windows venv keeps its programs in Scripts
BIN := $(VENV)/$(if $(filter Windows_NT,$(OS)),Scripts,bin)
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: run test test-live lint typecheck contracts pytest bench screenshots clean package bundle

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-* && touch $@

run: $(STAMP)
	$(BIN)/vak-desktop

lint: $(STAMP)
	$(BIN)/ruff check vak_desktop tests bench tools packaging resources setup.py
	$(BIN)/ruff format --check vak_desktop tests bench tools packaging resources setup.py

contracts: $(STAMP)
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy vak_desktop/context vak_desktop/ledger vak_desktop/providers vak_desktop/runtime vak_desktop/cli vak_desktop/ui

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
	$(BIN)/python bench/cli_start.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/ui_start.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/ui_stream.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python tools/screenshot.py

# The one-folder PyInstaller bundle (dist/vak-desktop/, with the embedded engine), then the
# installer of the OS this runs on (packaging/build-installer.sh); on Linux a .deb and a
# .tar.gz whose unpacked apps must pass --self-test. `make bundle` stops after PyInstaller (and,
# on Linux, the removal of libraries no NEEDED chain reaches, then --self-test: elf.py prune);
# it writes THIRD-PARTY-NOTICES.txt anew from the installed distributions first.
bundle: $(STAMP)
	$(BIN)/python -c 'import xllamacpp, PyInstaller' 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[test,embedded,package]'
	$(BIN)/python tools/third_party_notices.py
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller packaging/vak-desktop.spec
	if [ "$$(uname -s)" = Linux ]; then $(BIN)/python packaging/linux/elf.py prune dist/vak-desktop; fi

package: bundle
	PYTHON=$(BIN)/python packaging/build-installer.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
