# The README's two commands: `make demo` and `make test`; `make docs` builds the documentation site.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-slow install install-test bench tumult tumult-analytics test-tumult docs figures

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

# Tumult Core in an environment of its own (it pins numpy 1.26.4 and pandas 1.5.3 and brings pyspark 3.5):
# the tumult_* adapters (mechanisms/adapters/tumult_core.py) find .venv-tumult/bin/python. Its count and sum
# measurements take Spark DataFrames, so Spark needs Java (17 is on these machines; installed if missing).
# tmlt.analytics needs an older Core (0.21.0 pins >= 0.19.1, < 0.20): it has an environment of its own, below.
# The last step asks Tumult for a grouped count's claim, which starts Spark; a failed build leaves no .venv-tumult.
TUMULT := .venv-tumult

tumult: $(TUMULT)/.installed

$(TUMULT)/.installed:
	rm -rf $(TUMULT)
	{ $(PYTHON) -m venv $(TUMULT) \
	  && $(TUMULT)/bin/python -m pip install --quiet 'tmlt.core==0.20.*' \
	  && { java -version >/dev/null 2>&1 || { apt-get update && apt-get install -y default-jre-headless; }; } \
	  && $(TUMULT)/bin/python mechanisms/scripts/tumult_side.py describe grouped_count '{"epsilon": 1.0, "groups": 2, "noise": "geometric"}'; \
	} || { rm -rf $(TUMULT); exit 1; }
	touch $@

# Tumult Analytics 0.21 (the Session/QueryBuilder API) in a second environment: it installs with Core 0.19.1,
# so it cannot replace Core 0.20 in .venv-tumult without moving the tumult_* adapters and their findings
# (docs/libraries.md) to an older Core. The tumult_analytics_* adapters (mechanisms/adapters/tumult_analytics.py)
# find .venv-tumult-analytics/bin/python. The last step asks Analytics for a count's budget and noise (a Session,
# so Spark starts); a failed build leaves no .venv-tumult-analytics.
TUMULT_ANALYTICS := .venv-tumult-analytics

tumult-analytics: $(TUMULT_ANALYTICS)/.installed

$(TUMULT_ANALYTICS)/.installed:
	rm -rf $(TUMULT_ANALYTICS)
	{ $(PYTHON) -m venv $(TUMULT_ANALYTICS) \
	  && $(TUMULT_ANALYTICS)/bin/python -m pip install --quiet 'tmlt.analytics==0.21.*' \
	  && { java -version >/dev/null 2>&1 || { apt-get update && apt-get install -y default-jre-headless; }; } \
	  && $(TUMULT_ANALYTICS)/bin/python mechanisms/scripts/tumult_analytics_side.py describe count '{"epsilon": 1.0}'; \
	} || { rm -rf $(TUMULT_ANALYTICS); exit 1; }
	touch $@

# The Tumult tests in full (slow ones included), with both environments built: CI does not build them
# (Spark and Java are outside the project), so `make test` skips these tests; run this target instead.
test-tumult: $(VENV)/.installed-test $(TUMULT)/.installed $(TUMULT_ANALYTICS)/.installed
	$(BIN)/python -m pytest -q -m '' tests/mechanisms/test_tumult_adapters.py tests/mechanisms/test_tumult_analytics_adapters.py
