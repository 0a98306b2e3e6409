# The README's two commands: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-slow install install-test bench

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

bench: $(VENV)/.installed-test
	for f in benchmarks/*.py; do $(BIN)/python $$f || exit 1; done
