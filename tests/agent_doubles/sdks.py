"""Skip marks for tests that need the LLM providers' SDKs."""

from __future__ import annotations

from importlib.util import find_spec

import pytest


def needs_sdks(*names: str) -> pytest.MarkDecorator:
    """Skip unless the SDKs ``names`` are installed. They are looked up, not imported: an SDK's
    import takes seconds, and every pytest worker collects every module (``importorskip`` at
    module level would import them in each worker, used or not)."""
    missing = [name for name in names if find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs the {', '.join(missing)} SDK")
