#!/usr/bin/env bash
# Install whatever is missing (the transformer encoder included, so its tests run on the real
# model), then run the whole test suite (library, CLI, pages, browser) in as many processes as the
# machine has cores, at most 4 (pytest-xdist; a test file stays in one process, so its module
# fixtures are built once). SIMCORE_TEST_PROCESSES overrides the count; 0 runs in this process.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --encoder
cores=$(nproc 2>/dev/null || echo 1)
processes=${SIMCORE_TEST_PROCESSES:-$(( cores < 4 ? cores : 4 ))}
if [ "$processes" -le 1 ]; then
  exec .venv/bin/python -m pytest "$@"
fi
exec .venv/bin/python -m pytest -n "$processes" --dist loadfile "$@"
