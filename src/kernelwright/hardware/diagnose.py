"""Hardware counters of a kernel turned into short diagnoses a planner can act on.

The counters come from Nsight Compute's raw page as CSV in base units, one row per profiled
launch::

    ncu --csv --page raw --print-units base --metrics <METRICS joined by ","> python run.py

(or ``ncu --import report.ncu-rep --csv --page raw --print-units base``). Each rule reads a few
counters and says what limits the kernel, in the words of a schedule change:

    memory-bound      DRAM throughput near its peak: only moving fewer bytes helps
    compute-bound     SM throughput near its peak, DRAM far from it
    latency-bound     neither busy: too little work in flight (programs, loads per program)
    unvectorised      global loads of 4 or 8 bytes a thread where 16 move the same bytes in
                      fewer instructions
    uncoalesced       global loads using a small part of each 32-byte sector they fetch
    spills            local-memory stores: registers spilled
    occupancy         the resident warps, and which resource (registers, shared memory, block
                      count) caps them
    tail              a grid that fills less than one wave of the GPU, or a last wave mostly
                      empty

A rule whose counters are missing from the export says nothing (and ``missing`` names them):
the diagnoses never guess.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

DURATION = "gpu__time_duration.sum"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
SM_PCT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
ACHIEVED_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCCUPANCY = "sm__maximum_warps_per_active_cycle_pct"
REGISTERS = "launch__registers_per_thread"
WAVES = "launch__waves_per_multiprocessor"
GRID = "launch__grid_size"
LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared memory": "launch__occupancy_limit_shared_mem",
    "blocks per SM": "launch__occupancy_limit_blocks",
    "warps per SM": "launch__occupancy_limit_warps",
}
LOAD_BYTES = "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"
LOAD_INSTRUCTIONS = "smsp__sass_inst_executed_op_global_ld.sum"
SECTOR_USE_PCT = "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct"
LOCAL_STORE_BYTES = "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"

METRICS = (
    DURATION,
    DRAM_PCT,
    SM_PCT,
    ACHIEVED_OCCUPANCY,
    THEORETICAL_OCCUPANCY,
    REGISTERS,
    WAVES,
    GRID,
    *LIMITS.values(),
    LOAD_BYTES,
    LOAD_INSTRUCTIONS,
    SECTOR_USE_PCT,
    LOCAL_STORE_BYTES,
)

# Thresholds, in the units the counters use (percent, bytes).
BUSY_PCT = 60.0  # a unit this busy is what limits the kernel
CEILING_PCT = 85.0  # this close to DRAM's peak, the schedule has little left to win
IDLE_PCT = 40.0  # both units below this: latency, not throughput, limits the kernel
VECTOR_BYTES = 512  # a warp's load of 16 bytes a thread
SECTOR_USE_LOW_PCT = 60.0  # of each 32-byte sector fetched, the share the threads use
OCCUPANCY_LOW_PCT = 50.0
WAVE_TAIL_LOW = 0.5  # a last wave less full than this costs a visible share of the time
MANY_WAVES = 4.0  # past this many waves the last one's share is small


@dataclass(frozen=True, slots=True)
class KernelProfile:
    """One profiled launch: the kernel's name and its counters (base units)."""

    kernel: str
    counters: Mapping[str, float]


# The diagnosis kinds, as the rules name them (skills say which ones they relieve)
KINDS = ("memory-bound", "compute-bound", "latency-bound", "unvectorised", "uncoalesced",
         "spills", "occupancy", "tail")


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """What limits one kernel, as ``kind`` (one of the rules above) and a sentence."""

    kernel: str
    kind: str
    text: str


@dataclass(slots=True)
class Findings:
    """The diagnoses of every kernel of an export, and the counters it lacked."""

    diagnoses: list[Diagnosis] = field(default_factory=list)
    missing: set[str] = field(default_factory=set)

    def for_prompt(self) -> str:
        """The diagnoses as lines a planner (or an LLM's prompt) reads."""
        return "\n".join(f"- {d.kernel}: {d.text}" for d in self.diagnoses)


class ExportError(ValueError):
    """The text is not a raw-page CSV export of Nsight Compute."""


def parse_raw_csv(text: str) -> list[KernelProfile]:
    """Profiles from ``ncu --csv --page raw`` output (the profiler's own ``==PROF==`` lines and
    the program's output before the table are skipped; the units row is dropped)."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if not rows or "Kernel Name" not in rows[0]:
        raise ExportError(
            "no Nsight Compute raw-page table in the text (a header with "
            "'Kernel Name' is expected; export with --csv --page raw)"
        )
    header = rows[0]
    name_at = header.index("Kernel Name")
    id_at = header.index("ID") if "ID" in header else None
    profiles = []
    for row in rows[1:]:
        if len(row) != len(header):
            continue
        if id_at is not None and not row[id_at].strip().isdigit():
            continue  # the units row
        counters = {}
        for key, cell in zip(header, row, strict=True):
            value = _number(cell)
            if value is not None and "__" in key:
                counters[key] = value
        profiles.append(KernelProfile(row[name_at], counters))
    return profiles


def diagnose(profiles: Iterable[KernelProfile]) -> Findings:
    """Every rule on every profile; see the module docstring."""
    findings = Findings()
    for profile in profiles:
        for rule in RULES:
            kind, text, missing = rule(profile.counters)
            findings.missing.update(missing)
            if text:
                findings.diagnoses.append(Diagnosis(profile.kernel, kind, text))
    return findings


# -- the rules: each returns (kind, sentence or "", counters it needed and lacked) --------------

Verdict = tuple[str, str, list[str]]


def _lacking(counters: Mapping[str, float], *names: str) -> list[str]:
    return [n for n in names if n not in counters]


def _throughput(c: Mapping[str, float]) -> Verdict:
    missing = _lacking(c, DRAM_PCT, SM_PCT)
    if missing:
        return "", "", missing
    dram, sm = c[DRAM_PCT], c[SM_PCT]
    if dram >= CEILING_PCT:
        return (
            "memory-bound",
            (
                f"memory-bound at {dram:.0f}% of DRAM peak: near the ceiling, only moving "
                "fewer bytes (fusion, narrower storage) makes it faster"
            ),
            [],
        )
    if dram >= BUSY_PCT and dram >= sm:
        return (
            "memory-bound",
            (
                f"memory-bound at {dram:.0f}% of DRAM peak (SM {sm:.0f}%): wider loads, more "
                "bytes in flight per program, or fewer bytes moved"
            ),
            [],
        )
    if sm >= BUSY_PCT:
        return (
            "compute-bound",
            (
                f"compute-bound at {sm:.0f}% of SM peak (DRAM {dram:.0f}%): fewer or cheaper "
                "instructions per element, or tensor-core math where the policy allows"
            ),
            [],
        )
    if dram < IDLE_PCT and sm < IDLE_PCT:
        return (
            "latency-bound",
            (
                f"latency-bound: DRAM at {dram:.0f}% and SM at {sm:.0f}% of peak: more work "
                "in flight (more programs, more loads per program, pipelining)"
            ),
            [],
        )
    return "", "", []


def _unvectorised(c: Mapping[str, float]) -> Verdict:
    missing = _lacking(c, LOAD_BYTES, LOAD_INSTRUCTIONS)
    if missing or c[LOAD_INSTRUCTIONS] <= 0:
        return "", "", missing
    per_warp = c[LOAD_BYTES] / c[LOAD_INSTRUCTIONS]
    if per_warp >= VECTOR_BYTES / 2:
        return "", "", []
    return (
        "unvectorised",
        (
            f"unvectorised loads: {per_warp:.0f} bytes per warp load ({per_warp / 32:.0f} "
            "bytes a thread); 16-byte loads (contiguous, aligned blocks) move the same bytes in "
            f"{max(1, round(VECTOR_BYTES / max(per_warp, 1.0)))}x fewer instructions"
        ),
        [],
    )


def _uncoalesced(c: Mapping[str, float]) -> Verdict:
    if SECTOR_USE_PCT not in c:
        return "", "", [SECTOR_USE_PCT]
    used = c[SECTOR_USE_PCT]
    if used >= SECTOR_USE_LOW_PCT:
        return "", "", []
    return (
        "uncoalesced",
        (
            f"uncoalesced loads: threads use {used:.0f}% of each 32-byte sector fetched; "
            "make neighbouring lanes read neighbouring addresses (the contiguous axis "
            "innermost, or a transposed tile)"
        ),
        [],
    )


def _spills(c: Mapping[str, float]) -> Verdict:
    if LOCAL_STORE_BYTES not in c:
        return "", "", [LOCAL_STORE_BYTES]
    spilled = c[LOCAL_STORE_BYTES]
    if spilled <= 0:
        return "", "", []
    regs = f" at {c[REGISTERS]:.0f} registers a thread" if REGISTERS in c else ""
    return (
        "spills",
        (
            f"register spills: {spilled:.0f} bytes stored to local memory{regs}; smaller "
            "tiles, fewer values live at once, or more warps per program"
        ),
        [],
    )


def _occupancy(c: Mapping[str, float]) -> Verdict:
    missing = _lacking(c, THEORETICAL_OCCUPANCY)
    if missing:
        return "", "", missing
    theoretical = c[THEORETICAL_OCCUPANCY]
    if theoretical >= OCCUPANCY_LOW_PCT:
        achieved = c.get(ACHIEVED_OCCUPANCY)
        if achieved is not None and achieved < OCCUPANCY_LOW_PCT * theoretical / 100:
            return (
                "occupancy",
                (
                    f"occupancy: {achieved:.0f}% of warps resident of {theoretical:.0f}% "
                    "possible: programs end unevenly or too few are launched"
                ),
                [],
            )
        return "", "", []
    limits = {name: c[key] for name, key in LIMITS.items() if key in c}
    if not limits:
        return "", "", list(LIMITS.values())
    cap = min(limits, key=lambda name: limits[name])
    return (
        "occupancy",
        (
            f"occupancy limited by {cap} to {theoretical:.0f}% of the warps "
            f"({limits[cap]:.0f} blocks per SM): "
            + {
                "registers": "fewer registers a thread (smaller tiles) or fewer warps",
                "shared memory": "fewer pipeline stages or smaller tiles in shared memory",
                "blocks per SM": "more warps per program",
                "warps per SM": "fewer warps per program",
            }[cap]
        ),
        [],
    )


def _tail(c: Mapping[str, float]) -> Verdict:
    if WAVES not in c:
        return "", "", [WAVES]
    waves = c[WAVES]
    grid = f" ({c[GRID]:.0f} programs)" if GRID in c else ""
    if 0 < waves < 1:
        return (
            "tail",
            (
                f"tail: the grid{grid} fills {waves * 100:.0f}% of one wave: smaller programs "
                "or split the work (split-K, split rows) so every SM has some"
            ),
            [],
        )
    last = waves - math.floor(waves)
    if 1 <= waves < MANY_WAVES and 0 < last < WAVE_TAIL_LOW:
        idle = (1 - last) / math.ceil(waves)
        return (
            "tail",
            (
                f"tail: {waves:.2f} waves{grid}, the last {last * 100:.0f}% full; up to "
                f"{idle * 100:.0f}% of the time with most SMs idle: a persistent grid or "
                "a program size that divides the work into whole waves"
            ),
            [],
        )
    return "", "", []


RULES = (_throughput, _unvectorised, _uncoalesced, _spills, _occupancy, _tail)


def _number(cell: str) -> float | None:
    text = cell.strip().replace(",", "")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
