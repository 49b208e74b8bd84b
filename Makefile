# gpuledger: two commands on a fresh machine — `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
HOST ?= 127.0.0.1:8000

.PHONY: run test faults lint format migrate catalog worker beat clean backup restore load load-short

# pip's own output goes to var/pip.log (shown only when it fails): `make run` prints what a user needs.
$(VENV)/bin/python:
	@mkdir -p var
	@echo "Creating $(VENV) and installing the requirements (first run only; log in var/pip.log)"
	@$(PYTHON) -m venv $(VENV)
	@$(PIP) install --quiet --upgrade pip >var/pip.log 2>&1 || { tail -n 30 var/pip.log; exit 1; }

$(VENV)/.runtime-installed: requirements.txt | $(VENV)/bin/python
	@mkdir -p var
	@$(PIP) install --quiet -r requirements.txt >>var/pip.log 2>&1 || { tail -n 30 var/pip.log; exit 1; }
	@touch $@

# The dev set includes pyspark (requirements-spark.txt): `make test` runs the review's SQL on Spark too.
$(VENV)/.dev-installed: requirements.txt requirements-dev.txt requirements-spark.txt | $(VENV)/bin/python
	@mkdir -p var
	@$(PIP) install --quiet -r requirements-dev.txt -r requirements-spark.txt >>var/pip.log 2>&1 || { tail -n 30 var/pip.log; exit 1; }
	@touch $(VENV)/.runtime-installed $@

# Embedded mode (gpuledger.settings.local, manage.py's default): SQLite under var/, Celery tasks run
# in-process. No other service needed. The set-up's output goes to var/make-run.log; what is printed is
# the URL and the demo users.
SETUP_LOG := var/make-run.log
run: $(VENV)/.runtime-installed
	@mkdir -p var
	@echo "Preparing the local site: migrations, bundled catalog, demo billing (log in $(SETUP_LOG))"
	@{ $(PY) manage.py migrate --no-input \
	  && $(PY) manage.py load_catalog \
	  && $(PY) manage.py load_demo_commitments \
	  && $(PY) manage.py sync_schedule \
	  && $(PY) manage.py make_demo_billing --output var/demo_billing.csv \
	  && $(PY) manage.py import_billing var/demo_billing.csv var/demo_billing_utilization.csv --no-progress; \
	} >$(SETUP_LOG) 2>&1 || { tail -n 40 $(SETUP_LOG); exit 1; }
	@$(PY) manage.py demo_users --url http://$(HOST)
	@echo "Serving http://$(HOST)/ (Ctrl-C stops it). Try the examples: README 'Try it', examples/README.md"
	@$(PY) manage.py runserver $(HOST)

# Two xdist workers, one test database and one Redis database each (tests/settings.py); the bundled catalog
# loads once per worker (tests/conftest.py). PYTEST_WORKERS=0 runs in one process.
PYTEST_WORKERS ?= 2
test: $(VENV)/.dev-installed
	$(PY) -m pytest -n $(PYTEST_WORKERS)

# The fault suite (tests/faults, marker `faults`, not part of `make test`): it starts a private PostgreSQL
# cluster and Redis servers on free ports (never the shared ones) and stops, restarts and kills them and the
# app's processes. Needs /usr/lib/postgresql/*/bin and redis-server; `.ci/run` runs it after `make test`.
faults: $(VENV)/.dev-installed
	$(PY) -m pytest tests/faults -m faults -p no:cacheprovider

lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	@# issue 25: no `# fmt: skip` / `# fmt: off` (the formatter's output is the house layout)
	@! git grep -nE '#[[:space:]]*fmt:[[:space:]]*(skip|off)' -- '*.py'
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null

format: $(VENV)/.dev-installed
	$(VENV)/bin/ruff format .

# A worker and beat on your machine (with REDIS_URL set): the local settings, as manage.py uses.
worker beat: export DJANGO_SETTINGS_MODULE ?= gpuledger.settings.local
worker: $(VENV)/.runtime-installed
	$(VENV)/bin/celery -A gpuledger worker --loglevel=INFO

beat: $(VENV)/.runtime-installed
	$(VENV)/bin/celery -A gpuledger beat --loglevel=INFO

# PostgreSQL backups (DATABASE_URL): `make backup` writes var/backups/gpuledger-<UTC time>.dump (or BACKUP=...);
# `make restore BACKUP=file.dump` replaces the database's contents with it, all or nothing.
backup:
	infra/backup.sh $(BACKUP)

restore:
	infra/restore.sh $(BACKUP)

# Load test (benchmarks/load/run.py): gunicorn on 127.0.0.1 with production settings against DATABASE_URL
# (PostgreSQL) and REDIS_URL, 10/50/100 users per endpoint, PASS/MISS per latency target; figures in
# var/load/results.json. `load-short` is the bounded form CI runs: it fails on any non-2xx answer.
load: $(VENV)/.runtime-installed
	$(PY) benchmarks/load/run.py --output var/load/results.json

load-short: $(VENV)/.runtime-installed
	$(PY) benchmarks/load/run.py --short

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache staticfiles
