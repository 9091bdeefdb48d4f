"""The harness's own failures: a dead judge, an interrupted or killed parent. Each is said
plainly (not blamed on the candidate), and leaves no process and no folder behind."""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kernelwright.errors import HarnessError
from kernelwright.evaluate import EvalOptions
from kernelwright.evaluate.harness import EvalSession
from kernelwright.evaluate.judge import server_pids as judge_server_pids
from kernelwright.evaluate.spawn import RUN_PREFIX, descendants, sweep_stale
from kernelwright.records import Candidate

pytestmark = pytest.mark.interpreter

OPTS = EvalOptions(device="cpu", trials=2, timeout_s=60, baselines=False)


def _runs_of(pid):
    return sorted(Path(tempfile.gettempdir()).glob(f"{RUN_PREFIX}{pid}-*"))


def test_a_killed_judge_is_a_harness_failure_and_leaves_nothing(fixtures):
    source = (fixtures / "solutions" / "softmax_rows__honest.py").read_text()
    before = set(descendants(os.getpid()))  # other tests' sessions in this process
    session = EvalSession(fixtures / "tasks" / "softmax_rows.py", OPTS)

    def kill_judge(phase):
        if phase.startswith("candidate: trial"):
            os.killpg(session._judge.proc.pid, signal.SIGKILL)

    session.on_progress = kill_judge
    with pytest.raises(HarnessError, match="the judge process ended"):
        session.evaluate(Candidate(source))
    session.close()
    session.executor.close()
    kept = set(judge_server_pids())  # the judges' fork server lives as long as this process
    assert [p for p in descendants(os.getpid())
            if p not in before and p not in kept and _alive(p)] == []


SCRIPT = """
import faulthandler, signal, sys
faulthandler.register(signal.SIGUSR1, all_threads=True)  # the test's view of a stuck parent
# a shell's background job (`bash .ci/run &`) starts with SIGINT ignored, and Python keeps an
# ignored SIGINT ignored: the parent here is interrupted as a terminal's Ctrl-C would
signal.signal(signal.SIGINT, signal.default_int_handler)
from kernelwright.evaluate import EvalOptions, evaluate
evaluate(sys.argv[1], sys.argv[2], EvalOptions(device="cpu", trials=1, timeout_s=120,
         baselines=False), on_progress=lambda p: print(p, flush=True))
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_a_killed_parent_leaves_no_process_and_no_folder(fixtures, tmp_path, sig):
    """A hanging candidate; the parent dies (or is interrupted) while the candidate runs: the
    judge and the candidate die with it, and the run's folders go (the judge removes the one it
    knows at once; a later kernelwright run sweeps what a SIGKILL left)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(fixtures / "tasks" / "softmax_rows.py"),
         str(fixtures / "solutions" / "softmax_rows__hang.py")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if b"warm-up" in line:
            break
    time.sleep(0.5)
    family = [proc.pid, *descendants(proc.pid)]
    assert len(family) >= 3  # the parent, the judge, the candidate's process
    os.kill(proc.pid, sig)
    # The exit status shows the parent ended by the signal, not by finishing its evaluation
    # (the hanging candidate's timeout is 120 s); a parent still running shows where it is.
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGUSR1)  # its threads' stacks, then its output so far
        time.sleep(2)
        os.set_blocking(proc.stdout.fileno(), False)
        said = (proc.stdout.read() or b"").decode(errors="replace")[-6000:]
        proc.kill()
        pytest.fail(f"the parent did not end within 30 s of signal {sig}:\n{said}")
    assert proc.returncode == -sig, proc.returncode
    proc.stdout.close()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(_alive(p) for p in family):
        time.sleep(0.2)
    assert not any(_alive(p) for p in family), [p for p in family if _alive(p)]
    sweep_stale()
    assert _runs_of(proc.pid) == []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False
