# The two commands of the README. Both do all set-up on a fresh machine first.
#   make demo   run the main job (check the presets, write counterexamples and pictures)
#   make test   run the test suite
VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.setup-done

.PHONY: setup demo test lint bench bench-sweep clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/setup.sh
	./scripts/setup.sh
	touch $(STAMP)

demo: setup
	$(BIN)/creditflow demo --out out

test: setup
	$(BIN)/python -m pytest -n 2 -p xdist -m "not broker and not spark" tests
	$(BIN)/python -m pytest -p no:xdist -m "broker or spark" tests

# The lint gate (.ci/run runs it before the tests): formatting, lint, types (mypy reads the
# namespace through build/typecheck, see scripts/typecheck_tree.py and [tool.mypy]).
lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/python scripts/typecheck_tree.py
	$(BIN)/mypy

bench: setup
	$(BIN)/python benchmarks/explorer_bench.py
	$(BIN)/python benchmarks/deadlock_bench.py
	$(BIN)/python benchmarks/scaling_bench.py --quick
	$(BIN)/python benchmarks/conform_bench.py
	$(BIN)/python benchmarks/z3_bench.py
	$(BIN)/python benchmarks/paging_bench.py
	$(BIN)/python benchmarks/accounts_bench.py
	$(BIN)/python benchmarks/big_graph_bench.py
	$(BIN)/python benchmarks/startup_bench.py

bench-sweep: setup
	$(BIN)/python benchmarks/sweep_bench.py
	$(BIN)/python benchmarks/sweep_cluster_bench.py

clean:
	rm -rf $(VENV) out counterexamples sweeps replay-results build dist *.egg-info .pytest_cache .hypothesis
