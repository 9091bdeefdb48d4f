"""Launcher signatures: what a process reports is checked, and later spares get the recent ones."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from kernelwright.evaluate import executor as executor_mod
from kernelwright.evaluate.candidate_worker import _launcher_signatures
from kernelwright.evaluate.executor import Launch, SubprocessExecutor
from kernelwright.evaluate.launchers import MAX_SIGNATURES, RecentSignatures, checked


def test_only_well_formed_signatures_are_kept() -> None:
    report = [
        ["*fp32", "*fp32", "i32", "constexpr"],
        ["*kbf16", "fp8e4nv", "u1", "i64"],
        ["*fp32", "*fp32", "i32", "constexpr"],  # a repeat
        ["*fp32", "i32; system('x')"],  # not a type name
        ["tensordesc<fp32[64, 64]>"],  # descriptors need their metadata: left out
        [],
        "*fp32",
        [["*fp32"]],
        ["i32"] * 65,  # too many arguments
    ]
    assert checked(report) == [("*fp32", "*fp32", "i32", "constexpr"),
                               ("*kbf16", "fp8e4nv", "u1", "i64")]
    assert checked(None) == checked({"a": 1}) == checked("i32") == []
    many = [[f"i{8 * (k + 1)}"] for k in range(10)]
    assert len(checked(many)) == MAX_SIGNATURES


def test_recent_signatures_come_first_and_are_bounded() -> None:
    recent = RecentSignatures()
    recent.add([["*fp32", "i32"], ["*fp32", "i64"]])
    recent.add([["*fp16", "i32"]])
    recent.add([["*fp32", "i32"]])  # reported again: the most recent now
    recent.add("garbage")
    assert recent.as_list() == [["*fp32", "i32"], ["*fp16", "i32"], ["*fp32", "i64"]]
    for k in range(10):
        recent.add([[f"i{k + 1}"]])
    assert len(recent.as_list()) == MAX_SIGNATURES and recent.as_list()[0] == ["i10"]


def test_a_modules_compiled_kernels_are_reported_by_argument_types() -> None:
    def compiled(*types_: str) -> Any:
        return types.SimpleNamespace(src=types.SimpleNamespace(
            signature={f"a{i}": t for i, t in enumerate(types_)}))

    jit = types.SimpleNamespace(device_caches={0: ({"k1": compiled("*fp32", "i32"),
                                                    "k2": compiled("*fp32", "i32"),
                                                    "k3": compiled("*bf16", "constexpr")},
                                                   {}, None, None, None)})
    odd = types.SimpleNamespace(device_caches="not a cache")

    class Raising:
        @property
        def device_caches(self) -> Any:
            raise RuntimeError("a solution's object that answers oddly")

    module = types.SimpleNamespace(kernel=jit, other=odd, n=3)
    assert _launcher_signatures(module) == [["*fp32", "i32"], ["*bf16", "constexpr"]]
    assert _launcher_signatures(types.SimpleNamespace(x=Raising())) == []
    assert _launcher_signatures(None) == []


def test_spares_are_started_with_what_earlier_candidates_reported(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    started: list[list[list[str]] | None] = []

    class FakeProcess:
        def __init__(self, launch: Launch, base: Path, python: str, pid_namespace: bool,
                     server: Any = None, launchers: list[list[str]] | None = None) -> None:
            started.append(launchers)
            self.launch, self.scratch, self.killed = launch, tmp_path, ""
            self.proc = types.SimpleNamespace(poll=lambda: None, pid=0)
            self.log, self.ready = tmp_path / "log", {}

        def answers(self, _timeout: float) -> bool:
            return True

        def wait_ready(self, _timeout: float) -> bool:
            return True

        def extra_processes(self) -> list[Any]:
            return []

        def discard(self) -> None:
            pass

    monkeypatch.setattr(executor_mod, "CandidateProcess", FakeProcess)
    monkeypatch.setattr(executor_mod, "tail", lambda *_a, **_k: "")
    executor = SubprocessExecutor(prestart=1, fork_server=False, pid_namespace=False)
    launch = Launch(device="cuda")
    reports = [{"launchers": [["*fp32", "i32"]]}, {"launchers": [["bad type!"]]}, {}]
    for report in reports:
        executor.run(launch, {}, lambda _p, r=report: dict(r))
    executor.close()
    # the first run's spare and its cold start know nothing yet; each later spare knows what
    # the runs before it reported
    assert started == [[], [], [["*fp32", "i32"]], [["*fp32", "i32"]]]


def test_a_gpu_processs_warm_up_builds_the_launchers_and_survives_failures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from kernelwright.evaluate import candidate_worker, triton_warm

    calls: list[Any] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *_a: None)
    monkeypatch.setattr(triton_warm, "warm", lambda _torch, sigs: calls.append(sigs))
    candidate_worker.warm_up("cuda", [("*fp32", "i32")])
    assert calls == [[("*fp32", "i32")]]

    def failing(_torch: Any, _sigs: Any) -> None:
        raise RuntimeError("no C compiler")

    monkeypatch.setattr(triton_warm, "warm", failing)
    candidate_worker.warm_up("cuda", [])  # only time is at stake: the process still starts


def test_launcher_builds_that_fail_are_left_to_the_kernels() -> None:
    from kernelwright.evaluate import triton_warm

    # unknown type names, or no CUDA driver on this machine: nothing built, nothing raised
    assert triton_warm.build_launchers([("*fp32", "notatype")]) == 0


def test_launchers_are_built_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each build is a compiler process: a spare waits for the slowest, not for their sum."""
    import threading

    from triton.backends.nvidia import driver
    from triton.runtime import build

    from kernelwright.evaluate import triton_warm

    inside, most, lock = [0], [0], threading.Lock()
    both_in = threading.Barrier(2, timeout=10)

    def compile_module_from_src(src: str, **_kw: Any) -> None:
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        both_in.wait()  # returns only once the other build has started too
        with lock:
            inside[0] -= 1
        if "bad" in src:
            raise RuntimeError("ptxas: no such type")

    monkeypatch.setattr(driver, "make_launcher",
                        lambda _c, signature, _m: " ".join(signature.values()))
    monkeypatch.setattr(driver, "library_dirs", list)  # no CUDA driver needed here
    monkeypatch.setattr(build, "compile_module_from_src", compile_module_from_src)
    assert triton_warm.build_launchers([("*fp32", "i32"), ("*bf16", "i64")]) == 2
    assert most[0] == 2
    both_in.reset()
    assert triton_warm.build_launchers([("*fp32", "bad"), ("*bf16", "i64")]) == 1
