#!/usr/bin/env bash
# Install whatever is missing, then run the whole test suite (library, CLI, pages, browser).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/python -m pytest "$@"
