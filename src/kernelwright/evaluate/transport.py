"""Moving tensors between the judge and the candidate's process.

``files`` (CPU, and any device when asked): ``torch.save`` / ``torch.load(weights_only=True)``.
``cuda-ipc`` (GPU): CUDA tensors are pickled as IPC handles (PyTorch's own multiprocessing
reductions), so full-size inputs and outputs never leave device memory; the producer keeps the
tensors alive until the consumer has read them.

Whatever the transport, data written by the candidate's process is read with a loader that can
only build tensors (``weights_only`` / an allow-listed unpickler): a crafted file can't run code
in the judge.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

TRANSPORTS = ("files", "cuda-ipc")

_ALLOWED_TORCH_NAMES = frozenset({"Size", "Tensor", "device"})
_ALLOWED_GLOBALS = {
    ("torch.storage", "TypedStorage"),
    ("torch.storage", "UntypedStorage"),
    ("torch", "TypedStorage"),
    ("torch", "UntypedStorage"),
    ("torch.multiprocessing.reductions", "rebuild_cuda_tensor"),
    ("torch.multiprocessing.reductions", "rebuild_typed_storage"),
    ("collections", "OrderedDict"),
}


def choose_transport(device: str) -> str:
    """``cuda-ipc`` on a GPU, ``files`` elsewhere."""
    return "cuda-ipc" if device == "cuda" else "files"


def save_for_peer(obj: Any, path: Path, transport: str) -> None:
    """Write ``obj`` (nested dicts/lists of tensors and plain values) for another process."""
    if transport == "files":
        import torch

        torch.save(obj, path)
        return
    from multiprocessing.reduction import ForkingPickler

    import torch.multiprocessing  # noqa: F401  (registers the CUDA IPC reductions)

    buf = io.BytesIO()
    ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(buf.getvalue())
    tmp.replace(path)


def load_from_peer(path: Path, transport: str) -> Any:
    """Read what :func:`save_for_peer` wrote, building nothing but tensors and plain values."""
    if transport == "files":
        import torch

        return torch.load(path, weights_only=True)
    return _TensorOnlyUnpickler(io.BytesIO(path.read_bytes())).load()


class _TensorOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        import torch

        if module == "torch" and (
            name in _ALLOWED_TORCH_NAMES or isinstance(getattr(torch, name, None), torch.dtype)
        ):
            return getattr(torch, name)
        if (module, name) in _ALLOWED_GLOBALS:
            mod = __import__(module, fromlist=[name])
            return getattr(mod, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a peer process")
