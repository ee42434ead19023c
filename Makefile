# Two commands do all set-up on a fresh machine (Java 17+ and Python 3.11+; Go for the tests,
# which build their S3 server once; Debian's chromium for the browser tests, see README):
#   make demo   create .venv if missing, install, resolve the Delta jars, run the demo pipeline
#   (make demo-s3: the same with the lakehouse on an S3 server it starts: docs/object-store.md)
#   make test   same set-up, then the whole test suite (parallel workers, docs/testing.md)
# Also: make check (lint and the tests that need no JVM), make test-deep (more random cases),
# make screenshots (the README's, from the browser tests).
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
JARS    := $(HOME)/.cache/laketx/ivy
# pytest-xdist workers: each is a process with its own SparkSession (2g of driver memory).
# They take work in the order of tests/conftest.py's SLOW_FIRST (xdist would otherwise put the
# groups with most tests first, whatever their length).
WORKERS ?= auto
# The JVM's class-data archive (openlaketx/class_archive*.py): built once per Java build, it
# halves a Spark driver's cold start. Without it Spark still starts, only slower.
ARCHIVE := $(PY) -m openlaketx.class_archive_build || echo "class archive not built: Spark starts without it"
# random batch-boundary scripts per family in `make test-deep`
DEEP_EXAMPLES ?= 25
# pytest with bytecode caches written even where PYTHONDONTWRITEBYTECODE is set (containers
# often set it): otherwise every worker and every child process compiles the project again and
# pytest rewrites each test module again (`make check` took 146 s without them, 125 s with).
PYTEST  := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest

.PHONY: demo demo-s3 test check test-deep lint bench screenshots setup clean

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
	@$(ARCHIVE)
	$(VENV)/bin/laketx demo

# The demo with its metadata on a real S3 server (SeaweedFS, built once and cached by
# scripts/seaweedfs.sh) that it starts itself: docs/object-store.md
demo-s3: $(STAMP)
	@scripts/check_prereqs.sh >/dev/null || exit 2
	@$(ARCHIVE)
	$(PY) -m tests.support.seaweed lakehouse-s3

test: $(STAMP)
	@scripts/check_prereqs.sh >/dev/null || exit 2
	@$(ARCHIVE)
	@scripts/seaweedfs.sh >/dev/null
	$(PYTEST) -q -n $(WORKERS) --dist loadgroup --no-loadscope-reorder

# Lint and the tests that need no JVM, side by side.
check: $(STAMP)
	@log=$$(mktemp); $(MAKE) --no-print-directory lint > $$log 2>&1 & lint=$$!; \
	  $(PYTEST) -q -n $(WORKERS) --dist loadgroup --no-loadscope-reorder -m "not spark"; tests=$$?; \
	  wait $$lint; linted=$$?; cat $$log; rm -f $$log; \
	  [ $$tests -eq 0 ] && [ $$linted -eq 0 ]

test-deep: $(STAMP)
	@scripts/check_prereqs.sh >/dev/null || exit 2
	@$(ARCHIVE)
	LAKETX_PROPERTY_EXAMPLES=$(DEEP_EXAMPLES) $(PYTEST) -q -n $(WORKERS) --dist loadgroup \
	  tests/end_to_end/test_batch_boundaries.py

# The README's screenshots, made by the dashboard's browser tests (Debian's chromium).
SHOTS := overview dataset runs jobs rules phone-overview
screenshots: $(STAMP)
	@scripts/check_prereqs.sh >/dev/null || exit 2
	LAKETX_TEST_ARTIFACTS=$(CURDIR)/test-artifacts $(PYTEST) -q \
	  tests/openlaketx/service/dashboard/test_dashboard_browser.py
	rm -f docs/img/dashboard-*.png
	for n in $(SHOTS); do cp test-artifacts/dashboard/$$n.png docs/img/dashboard-$$n.png; done

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) bench/governed_ingest.py
	$(PY) bench/status_latency.py
	$(PY) bench/small_delivery.py
	$(PY) bench/first_run.py
	$(PY) bench/history_growth.py
	$(PY) bench/big_merge.py

clean:
	rm -rf $(VENV) lakehouse lakehouse-s3 .pytest_cache .mypy_cache .ruff_cache
