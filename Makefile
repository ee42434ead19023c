# Two commands do all set-up on a fresh machine (only Java 17+ and Python 3.11+ needed):
#   make demo   create .venv if missing, install, resolve the Delta jars, run the demo pipeline
#   make test   same set-up, then the test suite
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
JARS   := $(HOME)/.cache/laketx/ivy

.PHONY: demo test lint bench setup clean

setup: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@PYBIN=$$(scripts/check_prereqs.sh) || exit 2; \
	  [ -x $(PY) ] || $$PYBIN -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	@touch $(STAMP)

demo: $(STAMP)
	@scripts/check_prereqs.sh >/dev/null || exit 2
	$(VENV)/bin/laketx demo

test: $(STAMP)
	@scripts/check_prereqs.sh >/dev/null || exit 2
	$(PY) -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) bench/governed_ingest.py
	$(PY) bench/status_latency.py

clean:
	rm -rf $(VENV) lakehouse .pytest_cache .mypy_cache .ruff_cache
