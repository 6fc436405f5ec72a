# The two commands of the README:
#   make demo   build and install dcnsim into .venv, run the first seed's example
#   make test   everything CI checks: the wheel and sdist, installed and smoke-tested
#               in a clean virtualenv, Rust format, lints and tests, ruff, pytest
# and the distributions alone:
#   make wheel  an abi3 wheel (CPython 3.11+) and the sdist, into target/wheels
# the parser fuzzer for a bounded time (CI runs it after `make test`):
#   make fuzz   FUZZ_SECONDS=120 by default; installs nightly and cargo-fuzz if missing
# and the studies' numbers in docs/studies.md:
#   make studies-doc  rerun every study's full variant into docs/results/ and
#                     regenerate the document's results blocks from those files
# None needs an activated virtualenv: the venv's own binaries are used.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
WHEELS := target/wheels

.PHONY: demo test fuzz wheel wheel-check sdist-check bench bench-compare studies-doc clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# make demo builds with the `demo` profile (Cargo.toml: no LTO, parallel codegen),
# showing cargo's own progress (maturin), and installs into .venv only when a source
# changed since the last install (the stamp file): run again, it only runs the demo.
DEMO_PROFILE ?= demo
SOURCES := Cargo.toml Cargo.lock pyproject.toml $(shell find crates python docs \
	-path '*/__pycache__' -prune -o -type f ! -name '*.so' -print)
STAMP := $(VENV)/.dcnsim-$(DEMO_PROFILE)

demo: $(STAMP)
	$(BIN)/dcnsim run examples/tree3_probes.toml --out out/demo

$(STAMP): $(BIN)/maturin $(SOURCES)
	rm -f $(VENV)/.dcnsim-*
	$(BIN)/maturin build --profile $(DEMO_PROFILE) --out target/demo-wheel
	$(BIN)/pip install --force-reinstall --no-deps target/demo-wheel/dcnsim-*.whl
	$(BIN)/pip install -q target/demo-wheel/dcnsim-*.whl
	rm -rf target/demo-wheel
	touch $@

$(BIN)/maturin: $(BIN)/python
	$(BIN)/pip install "maturin>=1.5,<2"

# The tests run against the wheel CI built (one release build of the extension),
# installed over whatever .venv held.
test: wheel-check
	rm -f $(VENV)/.dcnsim-*
	$(BIN)/pip install --force-reinstall --no-deps $(WHEELS)/dcnsim-*.whl
	$(BIN)/pip install "$$(ls $(WHEELS)/dcnsim-*.whl)[test]"
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo test --workspace --release
	$(BIN)/ruff check python tests scripts
	$(BIN)/ruff format --check python tests scripts
	$(BIN)/pytest --durations=25

# The scenario parser and validator fuzzed (fuzz/fuzz_targets/scenario.rs: any
# bytes as TOML and as JSON give a scenario or a one-line error naming a field,
# never a panic, an abort or a hang), from the examples as seeds, for a bounded time.
# libFuzzer needs a nightly toolchain; both it and cargo-fuzz are installed if absent.
FUZZ_SECONDS ?= 120
fuzz:
	rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
	command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
	fuzz/seeds.sh
	cargo +nightly fuzz run scenario -- -max_total_time=$(FUZZ_SECONDS)

# The wheel (release profile, abi3: one file for CPython 3.11 and later) and the
# sdist, checked by sdist-check.
wheel: $(BIN)/maturin
	rm -rf $(WHEELS)
	$(BIN)/maturin build --release --out $(WHEELS)
	$(MAKE) sdist-check

# The wheel installed into a new virtualenv as a user would, then the demo's run
# from outside the clone (so nothing is imported from python/): what CI ships works
# on its own, py.typed included.
wheel-check: wheel
	rm -rf target/wheel-venv
	$(PYTHON) -m venv target/wheel-venv
	target/wheel-venv/bin/pip install -q $(WHEELS)/dcnsim-*.whl
	cd target && wheel-venv/bin/dcnsim run ../examples/tree3_probes.toml
	target/wheel-venv/bin/python -c "import dcnsim, pathlib, sys; \
	    (pathlib.Path(dcnsim.__file__).parent / 'py.typed').is_file() or sys.exit('no py.typed')"

# The source distribution must carry every file the extension compiles in with
# include_str! from outside its crate (docs/*.md for `dcnsim docs`), or a build
# from it fails. Packaging only, no compilation: a few seconds.
sdist-check: $(BIN)/maturin
	mkdir -p $(WHEELS)
	rm -f $(WHEELS)/dcnsim-*.tar.gz
	$(BIN)/maturin sdist --out $(WHEELS)
	tar tzf $(WHEELS)/dcnsim-*.tar.gz > target/sdist-files
	for f in LICENSE $$(grep -o 'include_str!("\.\./\.\./\.\./[^"]*")' crates/dcnsim-py/src/lib.rs \
	        | sed 's|.*"\.\./\.\./\.\./||; s|")||'); do \
	    grep -q "^dcnsim-[^/]*/$$f$$" target/sdist-files || { echo "sdist lacks $$f"; exit 1; }; \
	    echo "sdist has $$f"; \
	done

# Benchmarks always run the release profile (thin LTO, one codegen unit: the
# fastest event loop), installed over whatever make demo installed.
bench: $(BIN)/python
	rm -f $(VENV)/.dcnsim-*
	$(BIN)/pip install .
	$(BIN)/dcnsim bench --repeat 3

# Builds side by side, alternating (docs/performance.md, "Method"), e.g.
#   make bench-compare REVS="9bc42eb HEAD" ARGS="--bench b1 --stop-time 100ms"
bench-compare: $(BIN)/python
	rm -f $(VENV)/.dcnsim-*
	$(BIN)/pip install .
	$(BIN)/python scripts/compare_builds.py $(REVS) $(ARGS)

# Long (the full variants: pfabric alone ~25 min on 2 cores); one study:
#   $(BIN)/python scripts/studies_doc.py run incast [--quick]
studies-doc: $(BIN)/python
	rm -f $(VENV)/.dcnsim-*
	$(BIN)/pip install .
	$(BIN)/python scripts/studies_doc.py run all

clean:
	rm -rf $(VENV) out target
