"""Import an optional SDK on first use, with the install hint when it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from kernelwright.errors import ConfigError


def require_sdk(name: str) -> ModuleType:
    """``import name`` or a ConfigError that says how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ConfigError(
            f"the {name!r} SDK is not installed; install kernelwright[agents] "
            "(pip install 'kernelwright[agents]') to use LLM proposers"
        ) from exc
