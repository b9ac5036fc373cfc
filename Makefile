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

# The gates on the bundled specs run once, inside the pytest suite, each in the test that also
# pins its exact result: `rulegen test --min-coverage 100` (test_llama_swap.py::
# test_rulegen_test_runs_promtool_for_real), `--min-mutation-score 100` (test_mutation.py::
# test_bundled_specs_kill_every_counted_mutant: 207/207) and the strict docs build
# (test_readme.py::test_docs_site_builds_strictly). Running them here as well doubled their time.
test: install tools
	$(BIN)/rulegen check
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
