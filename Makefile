# The two README commands: `make train` and `make test`. Both create .venv when missing and install into it
# the versions pinned by constraints.txt (pip -c); pyproject.toml keeps ordinary ranges for other machines.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt
TRAIN_STAMP := $(VENV)/.installed-train
TEST_STAMP  := $(VENV)/.installed-test

.PHONY: test train bench install clean

$(PY):
	@echo "make: creating the virtual environment $(VENV) ($(PYTHON) -m venv)"
	$(PYTHON) -m venv $(VENV)

# what `make train` needs: gemenvs with the train extra (torch CPU, stable-baselines3, tensorboard, matplotlib)
$(TRAIN_STAMP): pyproject.toml constraints.txt | $(PY)
	@echo "make: installing gemenvs[train] into $(VENV): torch 2.13 (CPU), stable-baselines3, tensorboard, matplotlib"
	@echo "      and what they need (about 45 packages; usually under a minute on 2 cores when the wheels are local)"
	@start=$$(date +%s); $(PIP) -e ".[train]" && echo "make: installed in $$(( $$(date +%s) - start )) s"
	@touch $@

# what `make test` needs: every extra the tests exercise (train, test, bench for the peers, rllib, docs for the site)
$(TEST_STAMP): pyproject.toml constraints.txt | $(PY)
	@echo "make: installing gemenvs[train,test,bench,rllib,docs] into $(VENV): the train extra, pytest, Jupyter's kernel,"
	@echo "      rlcard and pygame (benchmark peers), Ray RLlib, MkDocs (about 125 packages; usually 1-2 minutes on 2 cores)"
	@start=$$(date +%s); $(PIP) -e ".[train,test,bench,rllib,docs]" && echo "make: installed in $$(( $$(date +%s) - start )) s"
	@touch $@ $(TRAIN_STAMP)

install: $(TEST_STAMP)

test: $(TEST_STAMP)
	@echo "make: running the tests on 2 processes (about 4 minutes on 2 cores)"
	$(PY) -m pytest -n 2 tests

train: $(TRAIN_STAMP)
	@echo "make: gemenvs-train configs/megagem/selfplay.yaml"; sed -n 1p configs/megagem/selfplay.yaml
	$(VENV)/bin/gemenvs-train configs/megagem/selfplay.yaml

bench: $(TEST_STAMP)
	$(PY) benchmarks/throughput.py

clean:
	rm -rf $(VENV) build *.egg-info
