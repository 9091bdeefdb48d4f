"""A child worker that does what its request says: answer, sleep, crash or exit early.

Request: ``{"action": "answer" | "sleep" | "crash" | "exit", "seconds": float, "value": Any}``.
Used by the subprocess executor's tests; ``python -m kernelwright.testing.double_worker DIR``.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from kernelwright.evaluate.executor import ChildIO


def main(workdir: str) -> None:
    """Entry point."""
    io = ChildIO(workdir)
    request = io.request()
    action = request.get("action", "answer")
    io.phase(f"double: {action}")
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
    io.finish({"value": request.get("value")})


if __name__ == "__main__":
    main(sys.argv[1])
