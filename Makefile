# dataforge: `make demo` and `make test` work from a fresh clone (each installs what it needs).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= demo_out
PYTEST_ARGS ?=

.PHONY: install demo test lint bench clean

install: $(STAMP)

$(STAMP): pyproject.toml setup.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $(STAMP)

# The smallest real generation available, validated. (No benchmark pipeline has landed yet:
# the synthetic pipeline writes a small dataset through the store's public API.)
demo: install
	@echo "== demo: no benchmark pipeline has landed yet; the synthetic pipeline exercises the store"
	$(BIN)/dataforge synthetic generate --scenes 4 --episodes-per-scene 2 --frames 8 \
		--resolution 96x72 --seed 0 --workers 2 --out $(DEMO_OUT)/synthetic --overwrite
	$(BIN)/dataforge validate $(DEMO_OUT)/synthetic
	$(BIN)/dataforge inspect $(DEMO_OUT)/synthetic --preview $(DEMO_OUT)/synthetic_preview.png
	$(BIN)/dataforge stats $(DEMO_OUT)/synthetic --plot $(DEMO_OUT)/synthetic_stats.png
	@echo "== demo done: dataset in $(DEMO_OUT)/synthetic, pictures in $(DEMO_OUT)/*.png"

# pytest exits 5 when it collects no tests: say so and pass; every other status is passed on.
test: install
	@rc=0; $(BIN)/python -m pytest $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; exit 0; fi; exit $$rc

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	$(BIN)/python benchmarks/bench_store.py

clean:
	rm -rf $(VENV) $(DEMO_OUT) .pytest_cache .ruff_cache
