#!/usr/bin/env bash
# Install whatever is missing (the transformer encoder included, so its tests run on the real
# model), then run the whole test suite (library, CLI, pages, browser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --encoder
exec .venv/bin/python -m pytest "$@"
