"""Trajectories as chat-format JSONL, one line per judged LLM candidate (fine-tuning, RL).

``kernelwright archive export --jsonl F --trajectories`` already writes every evaluation with the
raw messages of its candidate. :func:`export_trajectories` writes the form training code wants::

    {"messages": [{"role": "system", ...}, {"role": "user", ...}, {"role": "assistant", ...}],
     "agent": "debugger", "model": "openai:gpt-4o", "task": "softmax", "run_id": "...",
     "candidate_id": 7, "parent_id": 5, "evaluation_id": 9,
     "outcome": {"status": "correct", "correct": true, "speedup_vs_eager": 1.8,
                 "speedup_vs_compile": 1.1, "sol_fraction": 0.62, "representative": true,
                 "precision": "fp32"},
     "usage": {"input_tokens": 5120, "output_tokens": 900, "cost_usd": null},
     "verdict": {...}}

``messages`` ends with the reply whose code was judged (feedback turns inside the conversation
included); ``parent_id`` links a repair to the candidate it repaired, so chains rebuild.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, TextIO

from kernelwright.agents.roles import ORIGIN
from kernelwright.archive import Archive

_CHAT_ROLES = frozenset({"system", "user", "assistant"})


def export_trajectories(
    archive: Archive, out: TextIO, *, run_id: str | None = None, task_sha256: str | None = None
) -> int:
    """Write one chat-format line per evaluated LLM candidate; returns how many."""
    conversations: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for m in archive.messages(run_id):
        if m["candidate_id"] is not None and m["role"] in _CHAT_ROLES:
            conversations[int(m["candidate_id"])].append(m)
    n = 0
    for rec in archive.history(task_sha256, run_id):
        messages = conversations.get(rec.candidate_id)
        if rec.candidate.origin != ORIGIN or not messages:
            continue
        v = rec.verdict
        replies = [m for m in messages if m["role"] == "assistant"]
        cost = [m["meta"].get("cost_usd") for m in replies]
        item = {
            "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
            "agent": rec.candidate.design.get("agent"),
            "model": rec.candidate.design.get("llm"),
            "task": rec.task_name,
            "task_sha256": rec.task_sha256,
            "run_id": rec.run_id,
            "candidate_id": rec.candidate_id,
            "parent_id": rec.candidate.parent,
            "evaluation_id": rec.evaluation_id,
            "outcome": {
                "status": v.status.value,
                "correct": v.correct,
                "speedup_vs_eager": v.timing.speedup_vs_eager,
                "speedup_vs_compile": v.timing.speedup_vs_compile,
                "sol_fraction": v.sol.fraction if v.sol else None,
                "representative": v.timing.representative,
                "precision": v.precision.value,
            },
            "usage": {
                "input_tokens": sum(int(m["meta"].get("input_tokens", 0)) for m in replies),
                "output_tokens": sum(int(m["meta"].get("output_tokens", 0)) for m in replies),
                "cost_usd": None if None in cost else sum(c for c in cost if c is not None),
            },
            "verdict": v.to_dict(),
        }
        out.write(json.dumps(item) + "\n")
        n += 1
    return n
