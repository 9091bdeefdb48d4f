"""The top-k template's order, checked against its own contract rather than against torch.topk
(whose tie order is unspecified): largest (or smallest) first, equal values lowest index first,
NaN above +inf, -0.0 just below +0.0, values bit-exact, padding never selected (k equal to the
row length, rows of -inf or NaN), on odd row lengths and a masked last program.

Every case runs the emitted kernel under Triton's interpreter in the design-check worker (the
interpreter must be on before triton is imported; see design_checks), which captures each
forward once and runs all its inputs: the wrapper reads sizes from the tensors, so one design
serves rows of 5 to 1000 columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

NAN, INF = float("nan"), float("inf")

FORWARDS = {
    "plain": "return torch.topk(x, {k}, dim=-1, largest={largest})",
    "moe": (
        "w, ids = torch.topk(torch.softmax(x, dim=-1), {k}, dim=-1, largest={largest})\n"
        "    return w / w.sum(dim=-1, keepdim=True), ids.to(torch.int32)"
    ),
}

BODY = """
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
    {forward}
def get_inputs():
    return [torch.randn(7, {n_cols})]
def get_init_inputs():
    return []
"""


@dataclass(frozen=True)
class Case:
    kind: str  # a key of FORWARDS
    k: int
    largest: bool
    rows: Callable[[Any], Any]  # generator -> [n_rows, n_cols] float32 tensor


def ties(n_rows: int, n_cols: int, levels: int = 5) -> Callable[[Any], Any]:
    """Small integers: every row holds each value many times."""
    return lambda g: torch.randint(
        -(levels // 2), levels - levels // 2, (n_rows, n_cols), generator=g
    ).float()


def normal_with_ties(n_rows: int, n_cols: int) -> Callable[[Any], Any]:
    """Normal values rounded to a tenth: distinct orders of magnitude and some ties."""
    return lambda g: (torch.randn(n_rows, n_cols, generator=g) * 10).round() / 10


def fixed(rows: list[list[float]]) -> Callable[[Any], Any]:
    return lambda g: torch.tensor(rows, dtype=torch.float32)


NZ = -0.0
CASES: dict[str, Case] = {}
for largest in (True, False):
    tag = "largest" if largest else "smallest"
    for n in (20, 37, 128, 1000):  # odd row lengths; 7 rows, ROWS=4: a masked last program
        CASES[f"plain-k16-{n}-{tag}"] = Case("plain", 16, largest, normal_with_ties(7, n))
    CASES[f"plain-ties-37-{tag}"] = Case("plain", 8, largest, ties(5, 37))
    CASES[f"plain-ties-k=n-16-{tag}"] = Case("plain", 16, largest, ties(3, 16, 3))
    CASES[f"plain-k=n-5-{tag}"] = Case(
        "plain",
        5,
        largest,
        fixed(
            [
                [1.0, NAN, -INF, NZ, 0.0],
                [NZ, 0.0, NZ, 0.0, NZ],
                [-INF, -INF, -INF, -INF, -INF],  # below every real value, above the padding
                [NAN, NAN, NAN, NAN, NAN],  # inverted for the smallest: still above padding
                [INF, -1.0, INF, NAN, -1.0],
            ]
        ),
    )
    CASES[f"plain-signed-zeros-{tag}"] = Case(
        "plain",
        4,
        largest,
        fixed(
            [
                [NZ, 0.0, NZ, 0.0, 1e-30, -1e-30, NZ, 0.0, 0.0],
                [NZ, NZ, NZ, 0.0, -2.0, 2.0, -1e-45, 1e-45, NZ],  # denormals around the zeros
                [0.0, NZ, -1.0, NZ, 0.0, 3.0, NZ, NZ, -3.0],
            ]
        ),
    )
    CASES[f"plain-nan-{tag}"] = Case(
        "plain",
        3,
        largest,
        fixed(
            [
                [1.0, NAN, INF, -INF, NAN, 2.0, NAN],
                [-INF, -1.0, INF, 3.0, INF, 7.0, -INF],
                [NAN, 0.5, -0.5, NAN, -INF, INF, 0.5],
            ]
        ),
    )
    # MoE gating (softmax, top-k, renormalise, int32 ids): equal logits give equal weights,
    # and the experts must still come out lowest index first
    CASES[f"moe-ties-37-{tag}"] = Case("moe", 8, largest, ties(6, 37))
    CASES[f"moe-ties-128-{tag}"] = Case("moe", 8, largest, ties(9, 128, 4))
    CASES[f"moe-1000-{tag}"] = Case("moe", 8, largest, normal_with_ties(3, 1000))


def expected_order(row: list[float], k: int, largest: bool) -> list[int]:
    """The template's contract, written as a Python sort: NaN above every number, -0.0 just
    below +0.0, ties lowest index first."""

    def key(i: int) -> tuple[int, float, int, int]:
        v = row[i]
        nan = math.isnan(v)
        neg_zero = v == 0 and math.copysign(1.0, v) < 0
        if largest:
            return (0 if nan else 1, 0.0 if nan else -v, int(neg_zero), i)
        return (int(nan), 0.0 if nan else v, int(not neg_zero), i)

    return sorted(range(len(row)), key=key)[:k]


def inputs(name: str, case: Case) -> Any:
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    return case.rows(g).contiguous()


def group_key(case: Case) -> str:
    return f"{case.kind}-k{case.k}-{'largest' if case.largest else 'smallest'}"


GROUPS = sorted({group_key(c) for c in CASES.values()})


def outputs_of(design_worker: Any, group: str) -> dict[str, list[list[Any]]]:
    """The outputs of the group's cases (one design, one request to the interpreter: the
    wrapper reads sizes from the tensors), floats as int32 bits, integers as they are."""
    names = sorted(n for n, c in CASES.items() if group_key(c) == group)
    case = CASES[names[0]]
    entries = []
    for name in names:
        x = inputs(name, CASES[name])
        entries.append([name, list(x.shape), x.view(torch.int32).flatten().tolist()])
    widest = max(e[1][1] for e in entries)
    forward = FORWARDS[case.kind].format(k=case.k, largest=case.largest)
    body = BODY.format(forward="    " + forward.replace("\n", "\n    "), n_cols=widest)
    reply = design_worker.ask(
        {"op": "outputs", "body": body, "skill": "topk-rounds", "params": {"ROWS": 4},
         "inputs": entries}
    )
    assert "error" not in reply, reply["error"] + "\n" + reply.get("traceback", "")
    src = reply["source"]
    assert "tl.static_range(K)" in src and "torch.ops.aten.topk" not in src, src
    return dict(reply["outputs"])


def bits_to_float(bits: list[list[int]]) -> Any:
    return torch.tensor(bits, dtype=torch.int32).view(torch.float32)


# one test a design (kind, k, direction): its cases run in one request, so no two test
# processes interpret the same design
@pytest.mark.parametrize("group", GROUPS)
def test_order_ties_nan_and_signed_zeros(design_worker: Any, group: str) -> None:
    results = outputs_of(design_worker, group)
    names = sorted(n for n, c in CASES.items() if group_key(c) == group)
    assert sorted(results) == names
    for name in names:
        case = CASES[name]
        x = inputs(name, case)
        want_ids = [expected_order(row, case.k, case.largest) for row in x.tolist()]
        got = results[name]
        if case.kind == "plain":
            values, ids = got
            assert ids == want_ids, name
            want_bits = torch.gather(x, 1, torch.tensor(want_ids)).view(torch.int32)
            got_vals = bits_to_float(values)
            nan = torch.isnan(got_vals)
            assert torch.equal(nan, torch.isnan(want_bits.view(torch.float32))), name
            # every non-NaN value bit-exact: -0.0 stays -0.0, denormals stay denormals
            assert torch.equal(got_vals.view(torch.int32)[~nan], want_bits[~nan]), name
        else:
            weights, ids = got
            assert ids == want_ids, name
            p = torch.softmax(x, dim=-1)
            w = torch.gather(p, 1, torch.tensor(want_ids))
            w = w / w.sum(dim=-1, keepdim=True)
            torch.testing.assert_close(bits_to_float(weights), w, rtol=1e-5, atol=1e-6)


def test_the_cases_hold_ties_nans_and_zeros() -> None:
    """The inputs do exercise what the names say (a guard against a generator change)."""
    rows = {name: inputs(name, case) for name, case in CASES.items()}
    tied = rows["plain-ties-37-largest"][0]
    assert len(set(tied.tolist())) < tied.numel() // 4
    zeros = rows["plain-signed-zeros-largest"]
    assert bool((torch.signbit(zeros) & (zeros == 0)).any()) and bool(
        (~torch.signbit(zeros) & (zeros == 0)).any()
    )
    assert int(torch.isnan(rows["plain-nan-smallest"]).sum()) == 5
    for name, x in rows.items():
        if "-1000-" in name or "-128-" in name or "-37-" in name or "-20-" in name:
            assert x.shape[0] % 4, name  # the last program of ROWS=4 is masked
