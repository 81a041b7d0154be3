# Set-up and checks.  `make demo` and `make test` are the two commands of the README.
# TORCH_SPEC pins the CPU build of PyTorch on the project's machines; on a CUDA machine
# install torch first and pass TORCH_SPEC=torch (see docs/installation).
PYTHON ?= python3
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
WHEELS ?= ../shared/wheels
PY := $(VENV)/bin/python

.PHONY: install demo test test-with test-without test-floors docs

# pip shows what it downloads and installs (2 to 2.5 minutes on the first run, most of
# it PyTorch).
$(VENV)/.installed: pyproject.toml Makefile
	@echo "==> [1/3] Creating the virtual environment $(VENV)"
	$(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] Installing PyTorch ($(TORCH_SPEC)), the largest download"
	$(PY) -m pip install --progress-bar on "$(TORCH_SPEC)"
	@echo "==> [3/3] Installing torch-geometric-san and its extras (test, datasets, plot, docs)"
	$(PY) -m pip install --progress-bar on -e ".[test,datasets,plot,docs]"
	@touch $@
	@echo "==> Installed into $(VENV)"

install: $(VENV)/.installed

demo: install
	$(PY) benchmarks/trajectory.py --quick

# The suite runs with torch_scatter/torch_sparse (from $(WHEELS) when present), then
# the tests marked `extensions` run again with them blocked and the package's compiled
# CPU kernels off, the tests whose code paths differ without them (which they are, and
# why, is in tests/conftest.py); then the documentation is built with warnings as
# errors. Each step runs even if one before it failed; one summary line ends the
# output, and the exit status is non-zero if any step failed.
REPORTS := $(VENV)/test-reports

test: install
	@if [ -d "$(WHEELS)" ]; then \
		$(PY) -m pip install -q --no-index --find-links "$(WHEELS)" torch_scatter torch_sparse; \
	else \
		echo "note: $(WHEELS) not found; install torch_scatter/torch_sparse from the PyG wheel index to test with them"; \
	fi
	@rm -rf $(REPORTS); mkdir -p $(REPORTS); status=0; \
	printf '\n==> Tests with torch_scatter/torch_sparse (all tests)\n'; \
	$(MAKE) --no-print-directory test-with PYTEST_ARGS="--junitxml=$(REPORTS)/with.xml" || status=1; \
	printf "\n==> Tests without torch_scatter/torch_sparse (the tests marked 'extensions')\n"; \
	$(MAKE) --no-print-directory test-without PYTEST_ARGS="--junitxml=$(REPORTS)/without.xml" || status=1; \
	printf '\n==> Documentation\n'; \
	if $(MAKE) --no-print-directory docs; then docs=built; else docs=failed; fi; \
	echo; $(PY) .ci/summarize_tests.py "with extensions=$(REPORTS)/with.xml" \
		"without=$(REPORTS)/without.xml" --docs $$docs || status=1; \
	exit $$status

# pytest-xdist: TEST_WORKERS processes (one per core of a 2-core machine), each test
# file in one of them, with one torch thread each (two threads per process stall on a
# core the other process holds).
TEST_WORKERS ?= 2
XDIST := -n $(TEST_WORKERS) --dist loadfile

test-with:
	OMP_NUM_THREADS=1 $(PY) -m pytest -q $(XDIST) $(PYTEST_ARGS)

test-without:
	OMP_NUM_THREADS=1 TGSAN_WITHOUT_EXTENSIONS=1 TGSAN_COMPILED_KERNELS=0 $(PY) -m pytest -q -m extensions $(XDIST) $(PYTEST_ARGS)

# The suite at the lowest versions pyproject.toml allows (each `name>=X` pinned to
# `name==X`, as pip constraints) in a virtual environment of its own, beside PyTorch
# $(TORCH_SPEC), without torch_scatter/torch_sparse: about 5.5 minutes on 2 cores from
# scratch, 1 of them downloads. Not part of `make test` (CI), to keep CI under 10 minutes.
# PyTorch's own floor: TORCH_SPEC=torch==2.4.0 FLOORS_VENV=.venv-floors-torch (from PyPI
# that is the CUDA build, with about 3.5 GB of NVIDIA packages; it runs on the CPU).
FLOORS_VENV ?= .venv-floors

test-floors:
	@echo "==> [1/3] Creating the virtual environment $(FLOORS_VENV) with $(TORCH_SPEC)"
	$(PYTHON) -m venv $(FLOORS_VENV)
	$(FLOORS_VENV)/bin/python -m pip install -q "$(TORCH_SPEC)"
	@echo "==> [2/3] Installing the lowest declared versions of the other dependencies"
	grep -o '"[A-Za-z][A-Za-z0-9_.-]*>=[0-9.]*"' pyproject.toml | tr -d '"' | \
		sed 's/>=/==/' | grep -v -e '^torch==' -e '^setuptools==' > $(FLOORS_VENV)/floors.txt
	$(FLOORS_VENV)/bin/python -m pip install -q -c $(FLOORS_VENV)/floors.txt -e ".[test,datasets,plot]"
	$(FLOORS_VENV)/bin/python -m pip list | grep -i -E '^(torch|torch[-_]geometric|numpy|scipy|gudhi|h5py|matplotlib|toponetx|tqdm|threadpoolctl|pytest|hypothesis) '
	@echo "==> [3/3] The test suite"
	OMP_NUM_THREADS=1 $(FLOORS_VENV)/bin/python -m pytest -q $(XDIST) $(PYTEST_ARGS)

# The documentation (Sphinx), HTML in docs/_build/html; -E re-reads every page, so that
# every warning shows (and fails the build) on every run.
docs: install
	$(PY) -m sphinx -W --keep-going -E -q -b html docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"
