"""A child worker that does what its request says: answer, sleep, crash or exit early.

Request: ``{"action": "answer" | "sleep" | "crash" | "exit" | "spawn_sleeper" | "describe",
"seconds": float, "value": Any}``. Used by the subprocess executor's tests;
``python -m kernelwright.testing.double_worker DIR``, or pre-started with ``--prestart DEVICE``,
when ``DOUBLE_WARM_UP`` in its environment can make the warm-up ``hang`` or ``exit``.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

from kernelwright.evaluate.executor import ChildIO
from kernelwright.evaluate.prestart import run_worker


def warm_up(device: str) -> None:
    """Print a line (a cold and a warm start's logs must both hold it), or misbehave."""
    print(f"double: warming up for {device}")
    behaviour = os.environ.get("DOUBLE_WARM_UP", "")
    if behaviour == "hang":
        time.sleep(3600)
    elif behaviour == "exit":
        os._exit(4)


def main(workdir: str) -> None:
    """Run one job."""
    io = ChildIO(workdir)
    request = io.request()
    action = request.get("action", "answer")
    io.phase(f"double: {action}")
    print(f"double: running {action}")
    if action == "sleep":
        time.sleep(float(request.get("seconds", 3600)))
    elif action == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif action == "exit":
        os._exit(3)
    elif action == "spawn_sleeper":
        # A grandchild that would outlive a careless executor.
        pid = os.fork()
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        io.phase(f"double: grandchild {pid}")
        time.sleep(3600)
    io.finish({"value": describe() if action == "describe" else request.get("value")})


def describe() -> dict[str, Any]:
    """What a job can see of how its process was started."""
    return {
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
        "cwd": os.getcwd(),
        "argv": sys.argv[1:],
        "path0": sys.path[0],
        "stdin": sys.stdin.read(),
    }


if __name__ == "__main__":
    run_worker(main, warm_up)
