# The two commands of the README:
#   make demo   build and install dcnsim into .venv, run the first seed's example
#   make test   everything CI checks: Rust format, lints and tests, ruff, pytest
# Neither needs an activated virtualenv: the venv's own binaries are used.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

demo: $(BIN)/python
	$(BIN)/pip install .
	$(BIN)/dcnsim run examples/tree3_probes.toml --out out/demo

test: $(BIN)/python
	$(BIN)/pip install ".[test]"
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace --release
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests
	$(BIN)/pytest

bench: $(BIN)/python
	$(BIN)/pip install .
	$(BIN)/dcnsim bench --repeat 3

clean:
	rm -rf $(VENV) out target
