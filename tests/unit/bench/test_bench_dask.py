"""run_bench on a Dask cluster (a local one here): the results of one worker, in the suite's
order, each naming the host and device that ran it; a scheduler that cannot be reached is a
one-line error."""

import shutil
from pathlib import Path

import pytest
from doubles.steps import ScriptedStep

from kernelwright.bench import plan, run_bench
from kernelwright.errors import ConfigError
from kernelwright.evaluate import EvalOptions

pytest.importorskip("distributed")

MINI = Path(__file__).parents[2] / "fixtures" / "bench"
OPTS = EvalOptions(device="cpu", trials=1)


def test_a_local_dask_cluster_gives_the_results_of_one_worker(tmp_path):
    from kernelwright.bench.dask_pool import DaskPool

    shutil.copytree(MINI, tmp_path / "mini")
    mini = plan([tmp_path / "mini" / "tasks"], tmp_path / "mini" / "solutions")
    step = ScriptedStep(tmp_path / "calls", {"row_sum": "incorrect"}, delays={"row_sum": 1.0})
    one = run_bench(mini, OPTS, step=step)
    pool = DaskPool("local", workers=2)
    try:
        assert pool.workers == 2
        two = run_bench(mini, OPTS, step=step, pool=pool)
    finally:
        pool.close()

    def comparable(run):
        return [{k: v for k, v in r.to_dict().items() if k not in ("duration_s", "timed_on")}
                for r in run.results]

    assert comparable(two) == comparable(one)
    judged = [r for r in two.results if r.verdict is not None]
    assert judged and all(r.timed_on.endswith(":cpu") for r in judged)  # host:device


def test_a_scheduler_that_cannot_be_reached_is_a_config_error():
    from kernelwright.bench.dask_pool import DaskPool

    with pytest.raises(ConfigError, match="cannot connect"):
        DaskPool("tcp://127.0.0.1:9", connect_timeout_s=1.0)
