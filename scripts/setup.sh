#!/usr/bin/env bash
# Create .venv and install kernelwright with everything the tests and the demo need.
# Safe to run repeatedly: it reinstalls only when pyproject.toml or this script changed.
#
# Pins, for machines without a GPU: the CPU build of torch 2.13.0 (an unpinned torch pulls a
# multi-GB CUDA build), Triton 3.6.0 (the version on our H200 machine; its interpreter runs the
# kernels on the CPU) and NumPy < 2.3 (Triton 3.6's interpreter needs the older scalar rules).
# On a machine with a GPU and its own torch, use that environment instead:
#     pip install --no-deps -e .      or      PYTHONPATH=src python -m kernelwright ...
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "kernelwright needs Python >= 3.11; set PYTHON=/path/to/python3.11" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "creating .venv with $("$PY" --version)" >&2
    "$PY" -m venv .venv
fi
STAMP=.venv/.kernelwright-setup
WANT="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    exit 0
fi
echo "installing kernelwright and its dependencies into .venv (first run: a minute or two)" >&2
.venv/bin/python -m pip install -q --upgrade pip 2>/dev/null || true
.venv/bin/python -m pip install -q --no-compile "torch==2.13.0" "triton==3.6.0" "numpy<2.3"
.venv/bin/python -m pip install -q --no-compile -e ".[triton,bo,agents,report,distributed,dev]"
# Bytecode for what was installed, on every core (pip compiles one file at a time, about a
# minute here); a file some package ships that this Python cannot compile is compiled, or
# not, when imported, as pip would leave it. All of it: the processes the harness starts write
# no bytecode and import well beyond torch, Triton and NumPy (compiling only what its fork
# servers import made the tests two minutes slower on 2 cores)
SITE="$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
.venv/bin/python -m compileall -q -j 0 "$SITE" > /dev/null 2>&1 || true
echo "$WANT" > "$STAMP"
