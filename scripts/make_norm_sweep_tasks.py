#!/usr/bin/env python
"""Write the norm shapes the sixth session swept the team kernel on: the suite's group and
instance norms with other sizes (rows of 64K-256K values, 768-2048 rows), as task files in
``OUT/norm/`` (the layout ``gpu_schedule_sweep.py --root OUT`` reads).

    python scripts/make_norm_sweep_tasks.py /tmp/sweep_tasks
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = {
    # 32 groups of 4 channels of 128 x 128: rows of 65536, 2048 rows
    "gn_row64k": ("10_group_norm", {"batch_size": 64, "channels": 128, "groups": 32}),
    # 16 groups of 16 channels of 128 x 128: rows of 262144, 768 rows
    "gn_row256k": ("10_group_norm", {"batch_size": 48, "channels": 256, "groups": 16}),
    # 256 x 512 planes: rows of 131072, 1536 rows
    "in_row128k": (
        "11_instance_norm",
        {"batch_size": 48, "channels": 32, "height": 256, "width": 512},
    ),
    # the suite's 256 x 256 planes, half the rows: 2048
    "in_row64k_2k": ("11_instance_norm", {"batch_size": 32}),
}


def main(out: Path) -> None:
    (out / "norm").mkdir(parents=True, exist_ok=True)
    for name, (base, sizes) in SHAPES.items():
        text = (ROOT / "benchmarks" / "level1" / f"{base}.py").read_text()
        for var, value in sizes.items():
            text, n = re.subn(rf"^{var} = \d+$", f"{var} = {value}", text, flags=re.M)
            assert n == 1, (base, var)
        (out / "norm" / f"{name}.py").write_text(text)
        print(out / "norm" / f"{name}.py")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
