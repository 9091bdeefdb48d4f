"""A judged process's profiles of its checked calls must not slow its timed calls: Kineto is
told to detach CUPTI when a profile stops, except where torch itself says re-attaching is
unsafe (CUDA before 12.6) or the process already chose."""

from __future__ import annotations

import os

import pytest
import torch

from kernelwright.evaluate.guard.observer import release_cupti_after_profiling


@pytest.mark.parametrize(("cuda", "expected"), [
    ("13.0", "1"), ("12.6", "1"), ("12.10", "1"), ("12.4", None), ("11.8", None), (None, None),
])
def test_cupti_is_detached_after_a_profile_only_where_torch_allows_it(
    monkeypatch: pytest.MonkeyPatch, cuda: str | None, expected: str | None,
) -> None:
    monkeypatch.delenv("TEARDOWN_CUPTI", raising=False)
    monkeypatch.setattr(torch.version, "cuda", cuda)
    release_cupti_after_profiling()
    assert os.environ.get("TEARDOWN_CUPTI") == expected


def test_a_setting_made_in_the_process_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch.compile with CUDA graphs on an old CUDA sets "0"; that choice is kept
    monkeypatch.setenv("TEARDOWN_CUPTI", "0")
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    release_cupti_after_profiling()
    assert os.environ["TEARDOWN_CUPTI"] == "0"
