"""``python -m kernelwright ...``: the CLI without an installed entry point (from source)."""

from kernelwright.cli import main

main()
