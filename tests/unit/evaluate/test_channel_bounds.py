"""The channel's bounds: a frame announcing more than the receiver allows is refused from its
prefix, before any of it is buffered (a candidate's process cannot make the judge allocate what
it announces)."""

from __future__ import annotations

import struct
import time

import pytest

from kernelwright.evaluate.channel import MAX_HEADER, Channel, ProtocolError, pair

PREFIX = struct.Struct(">QQ")


def test_a_payload_over_the_receivers_limit_is_refused_from_the_prefix() -> None:
    mine, theirs = pair()
    with mine, theirs:
        # 600 MB announced, none of it sent: the refusal cannot have waited for the bytes
        theirs.sendall(PREFIX.pack(2, 600 << 20) + b"{}")
        with pytest.raises(ProtocolError, match="exceeds 1024"):
            Channel(mine).recv(time.monotonic() + 5, max_payload=1024)


def test_an_oversized_header_is_refused() -> None:
    mine, theirs = pair()
    with mine, theirs:
        theirs.sendall(PREFIX.pack(MAX_HEADER + 1, 0))
        with pytest.raises(ProtocolError, match="header"):
            Channel(mine).recv(time.monotonic() + 5)


def test_a_frame_within_bounds_arrives_whole() -> None:
    mine, theirs = pair()
    with mine, theirs:
        Channel(theirs).send({"ok": True}, b"x" * 100)
        header, payload = Channel(mine).recv(time.monotonic() + 5, max_payload=100)
    assert header == {"ok": True} and payload == b"x" * 100
