# The README's two commands: `make demo` and `make test`. Each creates or refreshes .venv first.
VENV ?= .venv
PYTHON ?= python3
# transformers and verl need torch; the CPU build goes in first so nothing pulls a CUDA build.
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test bench docker-engine

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

docker-engine:
	@scripts/ensure-docker.sh || echo "No Docker engine: the demo falls back to the local deployment."

demo: setup docker-engine
	@if docker info >/dev/null 2>&1; then $(BIN)/uni-agent-gym demo; \
	else $(BIN)/uni-agent-gym demo --deployment local; fi

test: setup
	$(BIN)/python -m pytest -ra --durations=25

bench: setup docker-engine
	$(BIN)/python bench/deployment_latency.py
	$(BIN)/python bench/rollout_cache.py
	$(BIN)/python bench/env_latency.py
	$(BIN)/python bench/reward_overhead.py
	$(BIN)/python bench/gateway_overhead.py
