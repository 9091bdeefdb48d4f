"""The channel's reads: frames that arrive together, and waiting without sleeping."""

from __future__ import annotations

import select
import threading
import time

import pytest

from kernelwright.evaluate.channel import Channel, ChannelTimeout, pair


def test_a_frame_is_read_without_taking_the_next_out_of_the_socket() -> None:
    """A caller that waits on the socket (the fork server's loop) must still see a second
    frame sent right behind the first."""
    mine, theirs = pair()
    with mine, theirs:
        sender = Channel(theirs)
        for i in range(2):
            sender.send({"op": "frame", "i": i}, bytes([i]) * (i + 1))
        receiver = Channel(mine)
        assert receiver.recv(time.monotonic() + 5) == ({"op": "frame", "i": 0}, b"\x00")
        assert select.select([receiver.fileno()], [], [], 0)[0]  # the second is still there
        assert receiver.recv(time.monotonic() + 5) == ({"op": "frame", "i": 1}, b"\x01\x01")


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
