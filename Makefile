# The README's two commands: `make demo` and `make test`; `make docs` builds the documentation site.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-slow install install-test bench tumult tumult-analytics test-tumult test-libraries docs figures

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# torch first, pinned: on these machines 2.13.0 is the CPU build; a bare `torch`
# requirement would pull a CUDA build of several GB. The extras then add nothing.
$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[opendp,pydp,pipelinedp,torch,opacus]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

$(VENV)/.installed-docs: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[docs]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: $(VENV)/.installed
	$(BIN)/dpaudit suite --quick

# Two pytest-xdist workers: the default run is budgeted at 15 minutes on 2 cores.
test: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n 2

test-slow: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n 2 -m slow

# The site (mkdocs-material, the API reference by mkdocstrings) into site/. `python -m mkdocs`, not the
# bare script: the script puts .venv/bin first on sys.path, where griffe takes the `dpaudit` console script
# for the package. NO_MKDOCS_2_WARNING quiets mkdocs-material's banner about MkDocs 2.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

# Every figure from one command: `dpaudit experiment NAME --out docs/figures` at the committed seed, one
# experiment at a time, for docs/figures/NAME.png and NAME.json; then the same with --quick for the JSON the
# default tests compare with (tests/experiments/quick/NAME.json; its PNG is dropped). `make figures
# FIGURES=group-privacy` remakes one. On the shared 2-core machine under a load average of 8-12 the first seven
# (to group-privacy) took 90 minutes; dpsgd's full run is the longest.
FIGURES := amplification-sampling amplification-shuffling composition-laplace composition-region dpsgd \
	fingerprinting group-privacy one-run pure-to-renyi
FIGURE_SEED := 0

figures: $(VENV)/.installed
	quick=$$(mktemp -d) && trap 'rm -rf "$$quick"' EXIT && mkdir -p tests/experiments/quick && \
	for name in $(FIGURES); do \
	  $(BIN)/dpaudit experiment $$name --seed $(FIGURE_SEED) --out docs/figures || exit 1; \
	  $(BIN)/dpaudit experiment $$name --quick --seed $(FIGURE_SEED) --out "$$quick" || exit 1; \
	  cp "$$quick/$$name.json" tests/experiments/quick/ || exit 1; \
	done

bench: $(VENV)/.installed-test
	for f in benchmarks/*.py; do $(BIN)/python $$f || exit 1; done

# Library environments (`dpaudit env`, docs/libraries.md): each library version is declared in the package and
# built on first use with uv under ~/.cache/dpaudit/environments. `make tumult` and `make tumult-analytics` build
# Tumult Core 0.20 and Tumult Analytics 0.21 (each brings Spark: minutes to build); they need Java, which
# `dpaudit env create` checks and names (on Debian: apt-get install -y default-jre-headless).
# Both install dpaudit first (as `make install` does): it is $(BIN)/dpaudit, on the PATH once the environment
# is activated (`. $(BIN)/activate`), as each target says when it ends.
ON_PATH = @echo "dpaudit is installed as $(BIN)/dpaudit: activate its environment (. $(BIN)/activate) to call it as dpaudit."

tumult: $(VENV)/.installed
	$(BIN)/dpaudit env create tumult-core
	$(ON_PATH)

tumult-analytics: $(VENV)/.installed
	$(BIN)/dpaudit env create tumult-analytics
	$(ON_PATH)

# The Tumult tests in full (slow ones included), with both environments built: CI does not build them
# (Spark and Java are outside the project), so `make test` skips these tests; run this target instead.
# It builds both environments first (minutes each, once) and its tests took 17 minutes on a 2-core machine
# (`time make test-tumult`, issue 48).
test-tumult: $(VENV)/.installed-test tumult tumult-analytics
	$(BIN)/python -m pytest -q -m '' tests/mechanisms/test_tumult_adapters.py tests/mechanisms/test_tumult_analytics_adapters.py \
	  tests/mechanisms/test_tumult_replay.py

# Every library environment's tests (marked `libraries`, left out of `make test`; each builds its environment on
# first use, so the first run downloads and installs every declared library), then Tumult's (which need Java).
test-libraries: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n 2 -m libraries
	$(MAKE) test-tumult
