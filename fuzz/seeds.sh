#!/usr/bin/env bash
# Copy the example scenarios into the fuzz corpus as starting inputs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
mkdir -p corpus/scenario
cp ../examples/*.toml corpus/scenario/
