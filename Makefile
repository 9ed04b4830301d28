# The two README commands: `make test` and `make train`. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: test train bench install clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e ".[train,test,bench,rllib]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2 tests

train: $(STAMP)
	$(VENV)/bin/gemenvs-train configs/megagem/selfplay.yaml

bench: $(STAMP)
	$(PY) benchmarks/throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
