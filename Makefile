# rulegen developer entry points. `make build` installs rulegen into .venv and runs it on the
# bundled specs; `make test` runs the whole test suite with the real helm and promtool.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install tools build test check site bench clean

$(BIN)/rulegen: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(BIN)/rulegen

# helm and promtool go to ~/.cache/rulegen/tools/bin (or $$RULEGEN_TOOLS_DIR/bin), never into the checkout
tools:
	scripts/install-tools.sh

build: install
	$(BIN)/rulegen build

check: install
	$(BIN)/rulegen check

test: install tools
	$(BIN)/rulegen check
	$(BIN)/rulegen test --min-coverage 100 --min-mutation-score 100
	$(BIN)/python -m pytest -n 2 -q

site: install
	$(BIN)/mkdocs build --strict

bench: install tools
	$(BIN)/python benchmarks/validate_corpus.py
	$(BIN)/python benchmarks/check_bench.py
	$(BIN)/python benchmarks/mutation_bench.py

clean:
	rm -rf site .rulegen .pytest_cache
