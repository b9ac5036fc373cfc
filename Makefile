# rulegen developer entry points. `make build` installs rulegen into .venv and runs it on the
# bundled specs; `make test` runs the whole test suite with the real helm and promtool and
# builds the documentation site (docs/, mkdocs.docs.yml) strictly.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install tools build test check site docs bench clean

$(BIN)/rulegen: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(BIN)/rulegen

# the pinned tools go to ~/.cache/rulegen/tools/bin (or $$RULEGEN_TOOLS_DIR/bin), never into the checkout;
# build needs them too: the pages say whom each alert notifies, routed by rulegen-amroute
tools:
	scripts/install-tools.sh

build: install tools
	$(BIN)/rulegen build

check: install
	$(BIN)/rulegen check

test: install tools
	$(BIN)/rulegen check
	$(BIN)/rulegen test --min-coverage 100 --min-mutation-score 100
	$(BIN)/mkdocs build --strict -f mkdocs.docs.yml
	$(BIN)/python -m pytest -n 2 -q

# the on-call runbook site (mkdocs.yml, runbooks/) into site/
site: install
	$(BIN)/mkdocs build --strict

# rulegen's own documentation (mkdocs.docs.yml, docs/) into site-docs/
docs: install
	$(BIN)/mkdocs build --strict -f mkdocs.docs.yml

bench: install tools
	$(BIN)/python benchmarks/validate_corpus.py
	$(BIN)/python benchmarks/check_bench.py
	$(BIN)/python benchmarks/mutation_bench.py
	$(BIN)/python benchmarks/series_bench.py

clean:
	rm -rf site site-docs .rulegen .pytest_cache
