# robodyn — every target creates the virtual environment when it is missing and installs what it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench lint clean chromium

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# One stamp per set of extras; re-installs when pyproject.toml changes.
$(VENV)/.installed-%: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(subst +,$(comma),$*)]'
	touch $@

comma := ,

# The integrator kernels are compiled once per machine (numba, ~1 min on two cores the first time): prepared first,
# with a line per kernel, so that the demo itself does not pause unexplained.
demo: $(VENV)/.installed-test+control
	$(BIN)/python -m robodyn.integrate.prepare
	$(BIN)/robodyn demo

# Peers the tests and benchmarks compare with that pip cannot resolve beside the test extra: crocoddyl's metadata
# asks for example-robot-data 5 (whose Python loaders overwrite the 6.0 robot files the tests read), while it needs
# only the Pinocchio libraries the test extra brings. Installed without their dependencies.
$(VENV)/.installed-peers: $(VENV)/.installed-test+control+urdf+collocation+mpc+viewer
	$(BIN)/python -m pip install --quiet --no-deps "crocoddyl==3.2.1" "libcrocoddyl==3.2.1"
	touch $@

# One worker per core (pytest-xdist), each test file whole in one worker (its module fixtures built once).
test: $(VENV)/.installed-test+control+urdf+collocation+mpc+viewer $(VENV)/.installed-peers chromium
	$(BIN)/python -m pytest -q -n auto --dist loadfile

# tests/report/test_report.py screenshots the HTML report in headless Chromium (Debian's package): installed when
# missing and possible (root and apt-get); without it that one test is skipped.
chromium:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium \
	      >/dev/null 2>&1; }; }; } || echo "note: chromium is not installed: the report screenshot test is skipped"

# Byte-compiled first, as an installed (not editable) package is: the start-up benchmark then measures
# robodyn, not Python compiling its sources again (PYTHONDONTWRITEBYTECODE=1 stops it writing them).
bench: $(VENV)/.installed-test+control+urdf+collocation+mpc+viewer+bench $(VENV)/.installed-peers
	$(BIN)/python -m compileall -q src
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

lint: $(VENV)/.installed-test+control+lint
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/mypy

clean:
	rm -rf $(VENV) robodyn-out .pytest_cache .mypy_cache .ruff_cache
