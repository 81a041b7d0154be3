# Set-up and checks.  `make demo` and `make test` are the two commands of the README.
# TORCH_SPEC pins the CPU build of PyTorch on the project's machines; on a CUDA machine
# install torch first and pass TORCH_SPEC=torch (see docs/installation).
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
WHEELS ?= ../shared/wheels
PY := $(VENV)/bin/python

.PHONY: install demo test test-with test-without docs

$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q "$(TORCH_SPEC)"
	$(PY) -m pip install -q -e ".[test,datasets,plot,docs]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(PY) benchmarks/trajectory.py --quick

# The suite runs twice: with torch_scatter/torch_sparse (from $(WHEELS) when present) and
# with them blocked, so that both of PyG's code paths are exercised; then the documentation
# is built with warnings as errors.
test: install
	@if [ -d "$(WHEELS)" ]; then \
		$(PY) -m pip install -q --no-index --find-links "$(WHEELS)" torch_scatter torch_sparse; \
	else \
		echo "note: $(WHEELS) not found; install torch_scatter/torch_sparse from the PyG wheel index to test with them"; \
	fi
	$(MAKE) test-with test-without docs

test-with:
	$(PY) -m pytest -q

test-without:
	TGSAN_WITHOUT_EXTENSIONS=1 $(PY) -m pytest -q

# The documentation (Sphinx), HTML in docs/_build/html; -E re-reads every page, so that
# every warning shows (and fails the build) on every run.
docs: install
	$(PY) -m sphinx -W --keep-going -E -q -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"
