"""How the judge waits on a candidate's IPC event when it maps an output: it opens the event as
one it owns (closed when dropped) and makes its stream wait, instead of letting torch open it
(torch never destroys an event it opens for a mapping: one leaked per storage). Torch's mapping,
its cache and the driver are replaced by fakes, so this runs without a GPU."""

from typing import Any

import pytest
import torch
import torch.multiprocessing.reductions as reductions

from kernelwright.evaluate import transport

HANDLE = bytes(range(64))
EVENT = bytes(range(64, 128))


class FakeStream:
    def __init__(self) -> None:
        self.waited: list[Any] = []

    def wait_event(self, event: Any) -> None:
        self.waited.append(event)


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"rebuilt": [], "opened": [], "stream": FakeStream()}

    def rebuild(*args: Any) -> torch.Tensor:
        seen["rebuilt"].append(args)
        return torch.zeros(4)

    def from_ipc_handle(device: int, handle: bytes) -> tuple[int, bytes]:
        if handle != EVENT:
            raise RuntimeError("invalid resource handle")
        seen["opened"].append((device, handle))
        return (device, handle)

    monkeypatch.setattr(reductions, "rebuild_cuda_tensor", rebuild)
    monkeypatch.setattr(reductions, "shared_cache", {})
    monkeypatch.setattr(torch.cuda.Event, "from_ipc_handle", staticmethod(from_ipc_handle))
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: seen["stream"])
    monkeypatch.setattr(transport, "_check_mapped", lambda ptr, off, n: (ptr, 1 << 20))
    return seen


def descriptor(event: bytes | None = EVENT, sync: bool = True) -> dict[str, Any]:
    return {"shape": [4], "stride": [1], "offset": 0, "dtype": "float32", "device": 0,
            "handle": HANDLE.hex(), "size_bytes": 16, "offset_bytes": 0,
            "event_handle": event.hex() if event else None, "event_sync": sync}


def test_the_judge_opens_the_event_itself_and_torch_is_given_none(cuda: dict[str, Any]):
    opened = transport.Opened()
    transport.open_cuda(descriptor(), opened)
    assert cuda["opened"] == [(0, EVENT)]
    assert cuda["stream"].waited == [(0, EVENT)]  # the judge's stream waits on it
    (args,) = cuda["rebuilt"]
    assert args[-2:] == (b"", False)  # torch opens no event of its own
    assert opened.events == [EVENT] and len(opened.allocations) == 1


def test_a_descriptor_without_an_event_opens_none(cuda: dict[str, Any]):
    opened = transport.Opened()
    transport.open_cuda(descriptor(event=None, sync=False), opened)
    transport.open_cuda(descriptor(sync=False), opened)
    assert cuda["opened"] == [] and cuda["stream"].waited == []
    assert opened.events == []


def test_a_storage_torch_still_maps_is_not_waited_on_again(cuda: dict[str, Any],
                                                           monkeypatch: pytest.MonkeyPatch):
    class Live:
        def expired(self) -> bool:
            return False

    monkeypatch.setattr(reductions, "shared_cache", {(HANDLE, 0): Live()})
    opened = transport.Opened()
    transport.open_cuda(descriptor(), opened)
    assert cuda["opened"] == [] and opened.events == [] and opened.allocations == {}


def test_an_event_that_cannot_be_opened_is_the_candidates_malformed_tensor(
        cuda: dict[str, Any]):
    with pytest.raises(transport.TransportError, match="cannot open the candidate's event"):
        transport.open_cuda(descriptor(event=bytes(64)))
    assert cuda["rebuilt"] == []  # nothing mapped
