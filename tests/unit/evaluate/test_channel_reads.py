"""The channel's reads: frames that arrive together, and waiting without sleeping."""

from __future__ import annotations

import threading
import time

import pytest

from kernelwright.evaluate.channel import Channel, ChannelTimeout, pair


def test_frames_read_together_are_handed_out_one_at_a_time() -> None:
    mine, theirs = pair()
    with mine, theirs:
        sender = Channel(theirs)
        for i in range(3):  # all three sent before the first is read: one read takes them all
            sender.send({"op": "frame", "i": i}, bytes([i]) * (i + 1))
        receiver = Channel(mine)
        got = [receiver.recv(time.monotonic() + 5) for _ in range(3)]
        assert got == [({"op": "frame", "i": i}, bytes([i]) * (i + 1)) for i in range(3)]


def test_a_spinning_receive_gets_a_frame_that_comes_while_it_polls() -> None:
    mine, theirs = pair()
    with mine, theirs:
        later = threading.Timer(0.02, lambda: Channel(theirs).send({"op": "batch"}))
        later.start()
        header, _ = Channel(mine).recv(time.monotonic() + 5, spin_s=1.0)
        later.join()
        assert header == {"op": "batch"}


def test_a_spinning_receive_keeps_its_deadline() -> None:
    mine, theirs = pair()
    with mine, theirs:
        started = time.monotonic()
        with pytest.raises(ChannelTimeout):
            Channel(mine).recv(started + 0.05, spin_s=5.0)
        assert time.monotonic() - started < 1.0
