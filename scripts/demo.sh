#!/usr/bin/env bash
# Install whatever is missing, then start the dashboard with the bundled sample data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
# SIMCORE_DEMO=1: every new browser session starts with the bundled sample loaded.
export SIMCORE_DEMO=1
# dashboard.serve: `streamlit run app.py` with the pages' modules imported before it listens.
exec .venv/bin/python -m dashboard.serve --server.headless=true \
  --browser.gatherUsageStats=false "$@"
