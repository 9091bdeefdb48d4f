"""The base of the harness's dispatch modes: ``TorchDispatchMode`` without a TorchDynamo import.

Recent torch wraps every subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo``, whose
first call imports TorchDynamo: about 1.5 CPU-seconds in every judge, baseline and candidate
process, for a guard that only matters where Dynamo runs. Dynamo skips every frame while a
non-infrastructure dispatch mode is on the stack, and cannot trace anything before it is
imported: the wrap is kept when Dynamo is already loaded as the mode class is made, and left
out otherwise. (Where torch has no such wrap, this changes nothing.)
"""

from __future__ import annotations

import sys
from typing import Any


def mode_base() -> Any:
    """A ``TorchDispatchMode`` subclass to derive the harness's modes from."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class HarnessDispatchMode(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return "torch._dynamo" in sys.modules

    return HarnessDispatchMode
