#!/usr/bin/env bash
# Install whatever is missing, then start the dashboard with the bundled sample data.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/python -m streamlit run app.py --server.headless=true \
  --browser.gatherUsageStats=false "$@"
