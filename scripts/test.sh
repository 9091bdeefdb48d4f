#!/usr/bin/env bash
# The test command (README, CI): set up .venv, lint, type-check, run the test suite on the CPU.
# GPU tests are skipped without a GPU; run them on a GPU machine with scripts/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
ruff check src tests
mypy
python -m pytest -q -p no:cacheprovider --timeout=900 "$@"
