"""Pre-started workers: used once, look like a cold start, replaced when dead, never leaked."""

import gc
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from kernelwright.errors import ConfigError
from kernelwright.evaluate.executor import Job, SubprocessExecutor

WORKER = "kernelwright.testing.double_worker"


def job(root: Path, name: str, request: dict, **kw) -> Job:
    sandbox = root / name / "sandbox"
    sandbox.mkdir(parents=True)
    return Job(WORKER, root / name, request, cwd=sandbox, prestart_device="cpu", **kw)


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_next_job_runs_in_the_prestarted_process_and_sees_a_cold_start(tmp_path):
    with SubprocessExecutor(prestart=1) as ex:
        first = ex.run(job(tmp_path, "1", {"action": "describe"}), 30)
        (spare,) = ex.spare_pids
        second = ex.run(job(tmp_path, "2", {"action": "describe"}), 30)
    assert not first.prestarted and second.prestarted
    cold, warm = first.result["value"], second.result["value"]
    assert warm["pid"] == spare != cold["pid"]
    for seen, name in ((cold, "1"), (warm, "2")):
        sandbox = os.path.realpath(tmp_path / name / "sandbox")
        assert seen["cwd"] == seen["path0"] == sandbox
        assert seen["argv"] == [str(tmp_path / name)]
        assert seen["pgid"] == seen["pid"]  # its own process group
        assert seen["stdin"] == ""
    # The job's log holds the warm-up's output and the job's own, as a cold start's would.
    assert "double: warming up for cpu" in second.stderr_tail
    assert "double: running describe" in second.stderr_tail
    assert not (tmp_path / "2" / "sandbox" / "stderr.log").exists()


def spare_dirs() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("kw-spare-*"))


def test_each_process_serves_one_job_and_close_kills_the_spare(tmp_path):
    dirs_before = spare_dirs()
    ex = SubprocessExecutor(prestart=1)
    pids = [ex.run(job(tmp_path, str(i), {"action": "describe"}), 30) for i in range(3)]
    assert len({r.result["value"]["pid"] for r in pids}) == 3
    assert [r.prestarted for r in pids] == [False, True, True]
    (spare,) = ex.spare_pids
    assert alive(spare)
    ex.close()
    assert ex.spare_pids == () and not alive(spare)
    assert spare_dirs() <= dirs_before


def test_a_killed_spare_is_replaced_by_a_cold_start(tmp_path):
    with SubprocessExecutor(prestart=1) as ex:
        ex.run(job(tmp_path, "1", {"action": "answer", "value": 1}), 30)
        os.killpg(ex.spare_pids[0], signal.SIGKILL)
        result = ex.run(job(tmp_path, "2", {"action": "answer", "value": 2}), 30)
    assert result.result == {"value": 2} and result.returncode is not None
    assert not result.prestarted


@pytest.mark.parametrize("behaviour", ["exit", "hang"])
def test_a_spare_that_fails_its_warm_up_is_replaced(tmp_path, behaviour):
    env = {"DOUBLE_WARM_UP": behaviour}
    with SubprocessExecutor(prestart=1, accept_timeout_s=1.0) as ex:
        ex.run(job(tmp_path, "1", {"action": "answer", "value": 1}, env=env), 30)
        (spare,) = ex.spare_pids
        start = time.monotonic()
        result = ex.run(job(tmp_path, "2", {"action": "answer", "value": 2}, env=env), 30)
        assert time.monotonic() - start < 10
        assert result.result == {"value": 2} and not result.prestarted
        assert not alive(spare)


def test_a_job_with_another_environment_starts_cold(tmp_path):
    with SubprocessExecutor(prestart=1) as ex:
        ex.run(job(tmp_path, "1", {"action": "answer"}, env={"KEY": "a"}), 30)
        (spare,) = ex.spare_pids
        other = ex.run(job(tmp_path, "2", {"action": "answer"}, env={"KEY": "b"}), 30)
        assert not other.prestarted and not alive(spare)
        same = ex.run(job(tmp_path, "3", {"action": "answer"}, env={"KEY": "b"}), 30)
        assert same.prestarted


def test_a_job_that_cannot_be_prestarted_discards_the_spare(tmp_path):
    with SubprocessExecutor(prestart=1) as ex:
        ex.run(job(tmp_path, "1", {"action": "answer"}), 30)
        (spare,) = ex.spare_pids
        plain = ex.run(Job(WORKER, tmp_path / "2", {"action": "answer"}), 30)
        assert not plain.prestarted and not alive(spare) and ex.spare_pids == ()


def test_several_spares_are_used_oldest_first(tmp_path):
    with SubprocessExecutor(prestart=2) as ex:
        ex.run(job(tmp_path, "1", {"action": "answer"}), 30)
        spares = ex.spare_pids
        assert len(spares) == 2
        second = ex.run(job(tmp_path, "2", {"action": "describe"}), 30)
        assert second.prestarted and second.result["value"]["pid"] == spares[0]
        assert ex.spare_pids[0] == spares[1] and len(ex.spare_pids) == 2


def test_prestart_can_be_switched_off(tmp_path, monkeypatch):
    off = SubprocessExecutor(prestart=0)
    off.run(job(tmp_path, "1", {"action": "answer"}), 30)
    assert off.spare_pids == ()
    assert SubprocessExecutor().prestart == 1
    monkeypatch.setenv("KERNELWRIGHT_PRESTART", "0")
    assert SubprocessExecutor().prestart == 0
    monkeypatch.setenv("KERNELWRIGHT_PRESTART", "2")
    assert SubprocessExecutor().prestart == 2
    monkeypatch.setenv("KERNELWRIGHT_PRESTART", "yes")
    with pytest.raises(ConfigError, match="KERNELWRIGHT_PRESTART"):
        SubprocessExecutor()


def test_a_prestarted_job_still_times_out_with_its_whole_group(tmp_path):
    with SubprocessExecutor(prestart=1) as ex:
        ex.run(job(tmp_path, "1", {"action": "answer"}), 30)
        phases: list[str] = []
        result = ex.run(job(tmp_path, "2", {"action": "spawn_sleeper"}), 3, phases.append)
    assert result.prestarted and result.timed_out and result.result is None
    grandchild = int(next(p for p in phases if "grandchild" in p).split()[-1])
    assert wait_gone(grandchild)


def test_a_forgotten_executor_does_not_leak_its_spare(tmp_path):
    ex = SubprocessExecutor(prestart=1)
    ex.run(job(tmp_path, "1", {"action": "answer"}), 30)
    (spare,) = ex.spare_pids
    del ex
    gc.collect()
    assert not alive(spare)


def test_a_spare_outliving_its_parent_exits(tmp_path):
    """The parent is killed without any clean-up: the spare reads the end of stdin and exits."""
    script = textwrap.dedent(
        f"""
        import os
        from pathlib import Path
        from kernelwright.evaluate.executor import Job, SubprocessExecutor
        root = Path({str(tmp_path)!r})
        (root / "sandbox").mkdir()
        ex = SubprocessExecutor(prestart=1)
        ex.run(Job({WORKER!r}, root, {{"action": "answer"}}, cwd=root / "sandbox",
                   prestart_device="cpu"), 30)
        print(*ex.spare_pids, flush=True)
        os._exit(0)
        """
    )
    dirs_before = spare_dirs()
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert wait_gone(int(out.stdout.split()[-1]))
    assert spare_dirs() <= dirs_before  # it removed its own start-up folder
