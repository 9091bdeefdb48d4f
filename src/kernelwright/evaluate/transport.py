"""Tensors between the judge and a candidate's process, without trusting the candidate.

No page of the judge's own memory (expected outputs, pristine inputs, future inputs) is ever
mapped into the candidate's process:

    GPU   the candidate's process allocates its input buffers and returns its outputs; it
          describes each as a CUDA IPC handle (:func:`describe_cuda`); the judge maps them
          (:func:`open_cuda`), writes inputs into the buffers when a call starts and reads the
          outputs when it ends. The judge never exports a handle.
    CPU   each input buffer is a sealed memfd of its own that the judge creates
          (:func:`create_shared`) and hands over; both map it; the judge writes the inputs into
          it and reads it back after the call. Outputs travel as bytes over the channel:
          ``torch.save`` on one side, ``torch.load(weights_only=True)`` on the other, which
          builds nothing but tensors.

Descriptors are plain JSON; the judge validates every field before it maps anything.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# dtypes a descriptor may name; anything else is refused.
DTYPES = (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
    "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2",
)
_MAX_DIMS = 16
_CUDA_IPC_HANDLE_BYTES = 64


class TransportError(Exception):
    """A descriptor or a payload the judge cannot accept (the candidate's fault)."""


def dtype_name(dtype: Any) -> str:
    """``torch.float32`` -> ``float32``."""
    return str(dtype).removeprefix("torch.")


def spec_of(t: Any) -> dict[str, Any]:
    """Shape, stride and dtype of a tensor: enough to allocate a buffer like it."""
    return {"shape": list(t.shape), "stride": list(t.stride()), "dtype": dtype_name(t.dtype)}


# -- CPU: bytes ---------------------------------------------------------------------------------


def pack(tensors: Any) -> bytes:
    """Serialise nested lists of tensors (CPU)."""
    import torch

    buf = io.BytesIO()
    torch.save(tensors, buf)
    return buf.getvalue()


def unpack(data: bytes) -> Any:
    """Read what :func:`pack` wrote, building nothing but tensors and plain containers."""
    import torch

    try:
        return torch.load(io.BytesIO(data), weights_only=True)
    except Exception as exc:  # a crafted payload: the candidate's failure, not ours
        raise TransportError(f"unreadable tensor payload ({type(exc).__name__}: {exc})") from None


# -- CPU: shared input buffers ------------------------------------------------------------------


def storage_bytes(spec: dict[str, Any]) -> int:
    """Bytes a tensor with this shape, stride and dtype spans (at least 1)."""
    import torch

    itemsize = torch.empty((), dtype=getattr(torch, spec["dtype"])).element_size()
    if any(n == 0 for n in spec["shape"]):
        return 1
    span = sum((n - 1) * st for n, st in zip(spec["shape"], spec["stride"], strict=True)) + 1
    return max(1, int(span) * int(itemsize))


def create_shared(spec: dict[str, Any]) -> tuple[Any, int]:
    """A tensor over a new memfd of its own, sealed against resizing, and the memfd (judge)."""
    import fcntl

    fd = os.memfd_create("kernelwright-input", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    size = storage_bytes(spec)
    os.ftruncate(fd, size)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    return _tensor_over(fd, spec, size), fd


def map_shared(fd: int, spec: dict[str, Any]) -> Any:
    """The tensor over a memfd the judge sent (candidate); the descriptor is closed."""
    try:
        size = storage_bytes(spec)
        if os.fstat(fd).st_size < size:
            raise TransportError("a shared buffer is smaller than its tensor")
        return _tensor_over(fd, spec, size)
    finally:
        os.close(fd)


def _tensor_over(fd: int, spec: dict[str, Any], size: int) -> Any:
    import mmap

    import torch

    dtype = getattr(torch, spec["dtype"])
    mapped = mmap.mmap(fd, size)
    itemsize = torch.empty((), dtype=dtype).element_size()
    flat = torch.frombuffer(mapped, dtype=dtype, count=size // itemsize)
    return flat.as_strided(spec["shape"], spec["stride"])


# -- GPU: IPC handles of the candidate's memory -------------------------------------------------


def describe_cuda(t: Any, counters: list[Any] | None = None) -> dict[str, Any]:
    """A CUDA IPC descriptor of ``t`` (candidate side). The tensor must stay alive until the
    judge has read it: the protocol keeps it (until ``release`` or ``forget``), not torch's
    cross-process reference count.

    Torch counts every share in a file under /dev/shm and keeps the block out of its allocator
    until a consumer gives the count back. The judge opens only some of what is described (the
    picked calls of a batch) and cannot reach the process's private /dev/shm, so every share
    would be kept forever: a timed batch of K calls would leak K outputs. The process gives the
    count back itself, and the judge is sent no counter to touch: at once, or, with
    ``counters``, later through :func:`give_back` (giving a count back costs more than the share
    itself, so the timed batch leaves it until the judge has stopped its clock).
    """
    import torch

    storage = t.untyped_storage()
    (
        device,
        handle,
        size_bytes,
        offset_bytes,
        ref_handle,
        ref_offset,
        event_handle,
        event_sync,
    ) = storage._share_cuda_()
    if ref_handle is not None:
        if counters is None:
            torch.UntypedStorage._release_ipc_counter(ref_handle, ref_offset, device=t.device)
        else:
            counters.append((ref_handle, ref_offset, t.device))
    return {
        "shape": list(t.shape),
        "stride": list(t.stride()),
        "offset": int(t.storage_offset()),
        "dtype": dtype_name(t.dtype),
        "device": int(device),
        "handle": bytes(handle).hex(),
        "size_bytes": int(size_bytes),
        "offset_bytes": int(offset_bytes),
        "event_handle": bytes(event_handle).hex() if event_handle is not None else None,
        "event_sync": bool(event_sync),
    }


def give_back(counters: list[Any]) -> None:
    """Give back the share counts :func:`describe_cuda` kept (before the tensors are dropped:
    a block freed while counted waits in torch's limbo instead of returning to the allocator)."""
    import torch

    while counters:
        ref_handle, ref_offset, device = counters.pop()
        torch.UntypedStorage._release_ipc_counter(ref_handle, ref_offset, device=device)


_NO_REF_COUNTER = b"/kernelwright-judge-no-ref-counter"


@dataclass
class Opened:
    """What mapping descriptors made the judge do, for storages torch had no live mapping of
    (one still mapped is served from torch's cache, at no cost): the allocations mapped
    (start -> bytes, by the driver's account) and the handles of the process's IPC events
    opened to wait on."""

    allocations: dict[int, int] = field(default_factory=dict)
    events: list[bytes] = field(default_factory=list)


def open_cuda(desc: Any, opened: Opened | None = None) -> Any:
    """Map a tensor the candidate described (judge side), after validating every field;
    ``opened`` gains what the mapping took (see :class:`Opened`).

    Raises TransportError for anything malformed: wrong types, a dtype outside :data:`DTYPES`,
    a view that reaches past its storage.
    """
    import torch
    from torch.multiprocessing.reductions import rebuild_cuda_tensor, shared_cache

    if not isinstance(desc, dict):
        raise TransportError("a tensor descriptor must be an object")
    shape = _ints(desc.get("shape"), "shape")
    stride = _ints(desc.get("stride"), "stride")
    if len(shape) != len(stride) or len(shape) > _MAX_DIMS:
        raise TransportError("shape and stride must have the same, small, length")
    offset = _int(desc.get("offset"), "offset")
    dtype_str = desc.get("dtype")
    if dtype_str not in DTYPES:
        raise TransportError(f"dtype {dtype_str!r} is not a tensor dtype the harness accepts")
    dtype = getattr(torch, str(dtype_str))
    size_bytes = _int(desc.get("size_bytes"), "size_bytes")
    offset_bytes = _int(desc.get("offset_bytes"), "offset_bytes")
    itemsize = torch.empty((), dtype=dtype).element_size()
    if any(s < 0 for s in stride):
        raise TransportError("negative strides are not accepted")
    extent = offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) + 1
    if all(shape) and extent * itemsize > size_bytes:
        raise TransportError("the view reaches past the end of its storage")
    handle = _hex(desc.get("handle"), "handle")
    if not _CUDA_IPC_HANDLE_BYTES <= len(handle) <= 1024:
        raise TransportError("a CUDA IPC handle has 64 bytes or a little more")
    event = _hex(desc["event_handle"], "event_handle") if desc.get("event_handle") else None
    live = shared_cache.get((handle, offset_bytes))
    fresh = live is None or live.expired()
    device = _int(desc.get("device"), "device")
    # Torch opens a fresh mapping's event and never destroys it (one event leaked per mapped
    # storage): the judge opens it as an event it owns, which closes when dropped, and makes
    # its stream wait as torch would. A storage torch still maps is not waited on (torch's rule)
    sync = event is not None and bool(desc.get("event_sync"))
    if sync and fresh:
        try:
            waited = torch.cuda.Event.from_ipc_handle(device, event)
            torch.cuda.current_stream(device).wait_event(waited)
        except Exception as exc:
            raise TransportError(
                f"cannot open the candidate's event ({type(exc).__name__}: {exc})") from None
        del waited
    try:
        tensor = rebuild_cuda_tensor(
            torch.Tensor,
            torch.Size(shape),
            tuple(stride),
            offset,
            torch.UntypedStorage,
            dtype,
            device,
            handle,
            size_bytes,
            offset_bytes,
            False,
            # No counter of the process's: a name no file has, so torch's release on unmapping
            # writes nowhere (describe_cuda gave the count back already)
            _NO_REF_COUNTER,
            0,
            b"",  # the event was opened above
            False,
        )
    except Exception as exc:
        raise TransportError(
            f"cannot map the candidate's tensor ({type(exc).__name__}: {exc})") from None
    start, allocation = _check_mapped(int(tensor.untyped_storage().data_ptr()), offset_bytes,
                                      size_bytes)
    if fresh and opened is not None:
        opened.allocations[start] = allocation
        if sync and event is not None:
            opened.events.append(event)  # opened, and the judge's stream waited on it
    return tensor


def _check_mapped(ptr: int, offset_bytes: int, nbytes: int,
                  address_range: Callable[[int], tuple[int, int] | None] | None = None,
                  ) -> tuple[int, int]:
    """The mapping really spans ``nbytes`` from ``ptr`` (both sizes are the candidate's claim);
    returns the allocation's (start, bytes) as the driver accounts for it.

    Torch maps the handle's whole allocation and adds ``offset_bytes``, so ``ptr - offset_bytes``
    lies in the mapping whatever the candidate claims: the driver's account of the allocation
    there must hold the claimed span (a far offset would make the judge write outside it).
    When the driver cannot place that address the check cannot be made: the judge fails (a
    harness error, not the candidate's) rather than write unchecked.
    """
    find = address_range or _driver_address_range
    found = find(ptr - offset_bytes)
    if found is None:
        raise RuntimeError("cuMemGetAddressRange cannot place a mapped CUDA IPC handle: the "
                           "judge cannot bound the candidate's descriptor")
    start, size = found
    if ptr + nbytes > start + size:
        raise TransportError("a tensor descriptor claims more memory than its allocation has")
    return start, size


def _driver_address_range(ptr: int) -> tuple[int, int] | None:
    """(base, size) of the device allocation holding ``ptr`` (cuMemGetAddressRange); None when
    the driver knows no allocation there."""
    import ctypes

    base, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
    status = _libcuda().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                               ctypes.c_uint64(ptr))
    return (int(base.value), int(size.value)) if status == 0 else None


@functools.cache
def _libcuda() -> Any:
    """The driver's library, loaded once: mapping an output is on the judge's clock."""
    import ctypes

    return ctypes.CDLL("libcuda.so.1")


def _ints(value: Any, name: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
        raise TransportError(f"{name} must be a list of integers")
    if any(v < 0 for v in value) and name == "shape":
        raise TransportError("negative sizes are not accepted")
    return [int(v) for v in value]


def _int(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TransportError(f"{name} must be a non-negative integer")
    return int(value)


def _hex(value: Any, name: str) -> bytes:
    if not isinstance(value, str) or len(value) > 4096:
        raise TransportError(f"{name} must be a hex string")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise TransportError(f"{name} must be a hex string") from None
