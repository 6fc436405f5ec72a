# The two commands of the README:
#   make demo   build and install dcnsim into .venv, run the first seed's example
#   make test   everything CI checks: Rust format, lints and tests, ruff, pytest
# Neither needs an activated virtualenv: the venv's own binaries are used.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test sdist-check bench bench-compare clean

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
	$(BIN)/ruff check python tests scripts
	$(BIN)/ruff format --check python tests scripts
	$(BIN)/pytest
	$(MAKE) sdist-check

# The source distribution must carry every file the extension compiles in with
# include_str! from outside its crate (docs/*.md for `dcnsim docs`), or a build
# from it fails. Packaging only, no compilation: a few seconds.
sdist-check: $(BIN)/python
	rm -rf target/sdist
	$(BIN)/maturin sdist --out target/sdist
	tar tzf target/sdist/dcnsim-*.tar.gz > target/sdist/files
	for f in $$(grep -o 'include_str!("\.\./\.\./\.\./[^"]*")' crates/dcnsim-py/src/lib.rs \
	        | sed 's|.*"\.\./\.\./\.\./||; s|")||'); do \
	    grep -q "^dcnsim-[^/]*/$$f$$" target/sdist/files || { echo "sdist lacks $$f"; exit 1; }; \
	    echo "sdist has $$f"; \
	done

bench: $(BIN)/python
	$(BIN)/pip install .
	$(BIN)/dcnsim bench --repeat 3

# Builds side by side, alternating (docs/performance.md, "Method"), e.g.
#   make bench-compare REVS="9bc42eb HEAD" ARGS="--bench b1 --stop-time 100ms"
bench-compare: $(BIN)/python
	$(BIN)/pip install .
	$(BIN)/python scripts/compare_builds.py $(REVS) $(ARGS)

clean:
	rm -rf $(VENV) out target
