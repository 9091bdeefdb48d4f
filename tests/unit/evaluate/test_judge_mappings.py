"""The judge closes its mappings of the process's memory before the process frees it: a process
that frees memory another process still maps is undefined behaviour in CUDA."""

from __future__ import annotations

from typing import Any

import pytest

from kernelwright.evaluate.referee import OUTPUTS, Referee


class _Ref:
    """A weak reference to a mapped storage, dead or alive."""

    def __init__(self, alive: bool) -> None:
        self.alive = alive

    def expired(self) -> bool:
        return not self.alive


def _referee(mapped: list[tuple[str, Any]]) -> tuple[Referee, list[dict[str, Any]]]:
    r = Referee.__new__(Referee)
    r._mapped = mapped
    asked: list[dict[str, Any]] = []

    def ask(op: str, header: dict[str, Any], *_args: Any, **_kw: Any) -> tuple[dict, bytes]:
        asked.append({"op": op} | header)
        return {}, b""

    r._ask = ask  # type: ignore[method-assign]
    return r, asked


def test_a_buffer_set_still_mapped_by_the_judge_is_not_freed():
    r, asked = _referee([("run0", _Ref(alive=True))])
    with pytest.raises(RuntimeError, match="still maps the process's run0"):
        r.forget(models=["run0"], buffers=["run0"])
    assert asked == []  # the process was never asked to free it


def test_outputs_still_mapped_block_any_forget():
    # a forget drops the process's outputs and empties its allocator's cache
    r, asked = _referee([(OUTPUTS, _Ref(alive=True))])
    with pytest.raises(RuntimeError, match="outputs"):
        r.forget(models=["timing"])
    assert asked == []


def test_closed_mappings_and_other_sets_let_the_forget_through():
    timing = _Ref(alive=True)
    r, asked = _referee([("run0", _Ref(alive=False)), (OUTPUTS, _Ref(alive=False)),
                         ("timing", timing)])
    r.forget(models=["run0"], buffers=["run0"])
    assert asked == [{"op": "forget", "models": ["run0"], "buffers": ["run0"]}]
    assert [owner for owner, _ in r._mapped] == ["timing"]  # closed ones are pruned
