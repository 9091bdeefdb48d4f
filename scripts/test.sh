#!/usr/bin/env bash
# The test command (README, CI): set up .venv, lint, type-check, run the tests on the CPU with a
# pytest worker per core and one more. GPU tests are skipped without a GPU; on a GPU machine run
# `python -m pytest tests/gpu`. Extra arguments go to pytest, e.g. `tests/unit/bench` for one
# folder or `-m slow` for the end-to-end tests left out by default (below).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. .venv/bin/activate
# Bytecode for kernelwright's sources, written once here: the harness's confined processes
# cannot write it (nor can any process where PYTHONDONTWRITEBYTECODE is set), so each judge and
# candidate process would otherwise compile every module it imports (about 0.5 s a process).
python -m compileall -q src > /dev/null
ruff check src tests
# The type check runs on one core while the tests start on both (it takes about a minute of
# one core on its own); its report follows the tests' and either failing fails the command.
types_log="$(mktemp)"
trap 'rm -f "$types_log"' EXIT
mypy > "$types_log" 2>&1 &
types_pid=$!
# Two markers are left out unless a -m option chooses otherwise:
#   sm90  the sm_90 compile checks: they prepare GPU work and run with
#         `bash scripts/test.sh -m sm90` (and in scripts/gpu_check.sh)
#   slow  end-to-end tests whose property a cheaper test also checks (each names it): they
#         run with `bash scripts/test.sh -m slow`
marks=(-m "not sm90 and not slow")
for arg in "$@"; do
  case "$arg" in -m|-m*) marks=() ;; esac
done
# One pytest worker more than the cores: the harness's tests spend part of their time waiting on
# the processes they start (judges, candidates, fork servers, a hang's timeout), which the
# extra worker fills (on 2 cores the run takes 538 s this way against 603 s with one a core).
workers=$(( $(nproc) + 1 ))
tests=0
python -m pytest -q -p no:cacheprovider -n "$workers" --dist worksteal --timeout=900 "${marks[@]}" \
    "$@" || tests=$?
types=0
wait "$types_pid" || types=$?
cat "$types_log"
[ "$tests" -ne 0 ] && exit "$tests"  # pytest's own code (1: failures, 2: interrupted...)
exit "$types"
