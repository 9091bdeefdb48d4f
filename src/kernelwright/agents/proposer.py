"""The LLM proposer: planner -> coder -> (harness) -> debugger or tuner -> ...

    ask(task, history, n, seed)
      step = next_step(history)                  roles.py: decided from the history alone
      planner once per run (its reply is archived and read back on resume)
      conversation = [system rules, the role's prompt]
      up to max_turns replies: extract the ModelNew; no code or a duplicate -> a feedback turn
      candidate(parent = the trial repaired or improved) -> archived with its conversation
    the next ask reads the verdicts from the history (refusals by the constraints included)

A provider failure that survives the retries stops the proposer with a message
(``stop_reason``) and an empty answer, which ends the search cleanly; it never raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kernelwright.agents.context import describe_verdict, profile_summary
from kernelwright.agents.extract import extract_code, strip_reasoning
from kernelwright.agents.llm import ChatMessage, ChatModel, LLMError, Role
from kernelwright.agents.prompting import render, system_prompt
from kernelwright.agents.review import Reviewer, ReviewGate
from kernelwright.agents.roles import (
    ORIGIN,
    AgentRole,
    Step,
    attempts_from,
    next_step,
    recent_failures,
)
from kernelwright.agents.skills import SkillHint, SkillSource
from kernelwright.agents.usage import Ledger, PriceTable
from kernelwright.archive import Archive
from kernelwright.constraints import Constraints, Reference
from kernelwright.hardware.energy import Objective
from kernelwright.records import Candidate, Precision, Task
from kernelwright.search.constants import tunables
from kernelwright.search.dedup import canonical_key
from kernelwright.search.proposer import Proposal, Trial


@dataclass
class _Conversation:
    """One role's exchange, archived when it produced a candidate (or gave up)."""

    role: AgentRole
    messages: list[ChatMessage] = field(default_factory=list)
    metas: list[dict[str, Any]] = field(default_factory=list)

    def add(self, role: Role, content: str, **meta: Any) -> None:
        self.messages.append(ChatMessage(role, content))
        self.metas.append({"agent": self.role.value, **meta})


class _Stop(Exception):
    """Internal: the proposer must stop (budget, provider failure, no usable code)."""


class LLMProposer:
    """A :class:`~kernelwright.search.Proposer` backed by a chat model (see module docstring).

    Attributes:
        name: ``llm:<spec>``.
        stop_reason: why it stopped proposing (None while it is running).
        evaluate_fn: the review gate to pass to ``run_search`` when a reviewer was given,
            else None.
    """

    def __init__(
        self,
        *,
        model: ChatModel,
        task: Task,
        archive: Archive,
        run_id: str,
        constraints: Constraints,
        skills: SkillSource,
        notes: str | None = None,
        references: Sequence[Reference] = (),
        precision: Precision = Precision.FP32,
        objective: Objective = Objective.TIME,
        prices: PriceTable | None = None,
        reviewer: Reviewer | None = None,
        max_turns: int = 3,
        max_repairs: int = 3,
    ) -> None:
        self.model = model
        self.name = f"llm:{model.name}"
        self.task = task
        self.archive = archive
        self.run_id = run_id
        self.constraints = constraints
        self.notes = notes.strip() if notes and notes.strip() else None
        self.references = tuple(references)
        self.precision = constraints.precision or precision
        self.objective = objective
        self.prices = prices or PriceTable({})
        self.max_turns = max(1, max_turns)
        self.max_repairs = max_repairs
        self.stop_reason: str | None = None
        self.evaluate_fn = ReviewGate(reviewer, archive, run_id) if reviewer else None
        self._skills_source = skills
        self._skills: tuple[SkillHint, ...] | None = None
        self._plan: str | None = None
        self._ledger: Ledger | None = None

    # -- the Proposer protocol -------------------------------------------------------------------

    def ask(self, task: Task, history: Sequence[Trial], n: int, seed: int) -> list[Proposal]:
        """Up to ``n`` candidates from the model; empty once stopped (``seed`` is unused: the
        model's sampling is the provider's)."""
        proposals: list[Proposal] = []
        seen = {
            canonical_key(t.candidate.source): (t.candidate_id, t.verdict.status.value)
            for t in history
        }
        while len(proposals) < n and self.stop_reason is None:
            step = next_step(history, max_repairs=self.max_repairs)
            try:
                proposal = self._propose(task, step, history, seen)
            except _Stop as stop:
                self._stop(str(stop))
                break
            proposals.append(proposal)
        return proposals

    @property
    def ledger(self) -> Ledger:
        """Calls, tokens and known cost of this run so far (resumed runs included)."""
        if self._ledger is None:
            self._ledger = Ledger.from_messages(self.archive.messages(self.run_id))
        return self._ledger

    # -- one proposal ----------------------------------------------------------------------------

    def _propose(
        self, task: Task, step: Step, history: Sequence[Trial], seen: dict[str, tuple[int, str]]
    ) -> Proposal:
        plan = self._planned(task, ask=step.role is AgentRole.CODER)
        convo = _Conversation(step.role)
        convo.add("system", self._system())
        convo.add("user", self._prompt(task, step, history, plan))
        parent = step.subject.candidate_id if step.subject else None
        for turn in range(1, self.max_turns + 1):
            try:
                reply = self._call(convo, turn)
            except _Stop:
                self._log(convo, None)
                raise
            found = extract_code(reply)
            if found.code is None:
                convo.add("user", render("no_code", problem=found.problem), turn=turn)
                continue
            twin = seen.get(canonical_key(found.code))
            if twin is not None:
                convo.add(
                    "user",
                    render("duplicate", candidate_id=twin[0], status=twin[1]),
                    turn=turn,
                )
                continue
            candidate = Candidate(
                source=found.code,
                origin=ORIGIN,
                parent=parent,
                design={
                    "agent": step.role.value,
                    "llm": self.model.name,
                    "skills": [s.id for s in self._chosen_skills(plan)],
                },
                params=tunables(found.code),
            )
            candidate_id = self.archive.add_candidate(task, candidate)
            self._log(convo, candidate_id)
            seen[canonical_key(found.code)] = (candidate_id, "proposed, not yet judged")
            return Proposal(candidate, self._note(step, candidate_id))
        self._log(convo, None)
        raise _Stop(
            f"{self.model.name} gave no new usable code in {self.max_turns} replies as "
            f"{step.role.value}"
        )

    def _call(self, convo: _Conversation, turn: int) -> str:
        ledger = self.ledger
        caps = self.constraints
        if caps.llm_calls is not None and ledger.calls >= caps.llm_calls:
            raise _Stop(f"the LLM call budget ({caps.llm_calls} calls) is spent")
        if (
            caps.cost_usd is not None
            and ledger.cost_usd is not None
            and ledger.cost_usd >= caps.cost_usd
        ):
            raise _Stop(f"the LLM cost budget (${caps.cost_usd:g}) is spent")
        try:
            completion = self.model.complete(convo.messages)
        except LLMError as exc:
            raise _Stop(str(exc)) from exc
        cost = self.prices.cost(self.model.name, completion.usage)
        self._ledger = ledger.add(completion.usage, cost)
        convo.add(
            "assistant",
            completion.text,
            turn=turn,
            model=completion.model or self.model.name,
            spec=self.model.name,
            input_tokens=completion.usage.input_tokens,
            output_tokens=completion.usage.output_tokens,
            cost_usd=cost,
            latency_s=round(completion.latency_s, 3),
            attempts=completion.attempts,
            finish_reason=completion.finish_reason,
        )
        return completion.text

    def _planned(self, task: Task, *, ask: bool) -> str | None:
        """The run's plan: the archived planner reply, else (when ``ask``) a new one."""
        if self._plan is not None:
            return self._plan or None
        for m in reversed(self.archive.messages(self.run_id)):
            if m["role"] == "assistant" and m["meta"].get("agent") == AgentRole.PLANNER.value:
                self._plan = m["content"]
                return self._plan or None
        if not ask:
            return None
        convo = _Conversation(AgentRole.PLANNER)
        convo.add("system", self._system())
        convo.add(
            "user",
            render(
                "planner",
                task_source=task.source,
                skills=self._hints(task),
                references=self.references,
                notes=self.notes,
            ),
        )
        try:
            self._plan = strip_reasoning(self._call(convo, 1))
        finally:
            self._log(convo, None)
        return self._plan or None

    # -- prompts ---------------------------------------------------------------------------------

    def _system(self) -> str:
        return system_prompt(
            backends=self.constraints.backends,
            precision=self.precision,
            constraint_lines=self.constraints.rules(),
            objective=self.objective,
        )

    def _prompt(self, task: Task, step: Step, history: Sequence[Trial], plan: str | None) -> str:
        subject = step.subject
        pitfalls = [p for s in self._chosen_skills(plan, subject) for p in s.pitfalls]
        if step.role is AgentRole.CODER or subject is None:
            return render(
                "coder",
                task_source=task.source,
                plan=plan,
                pitfalls=pitfalls,
                references=self.references,
                failures=recent_failures(history),
            )
        common = dict(
            task_source=task.source,
            candidate_id=subject.candidate_id,
            source=subject.candidate.source,
            feedback=describe_verdict(subject.verdict),
            pitfalls=pitfalls,
        )
        if step.role is AgentRole.DEBUGGER:
            return render("debugger", **common)
        device = subject.verdict.device
        return render(
            "tuner",
            **common,
            device=device.name if device and not device.interpreter else None,
            profile=profile_summary(subject.verdict),
            attempts=attempts_from(subject, history),
        )

    def _hints(self, task: Task) -> tuple[SkillHint, ...]:
        if self._skills is None:
            self._skills = tuple(self._skills_source.hints(task))
        return self._skills

    def _chosen_skills(self, plan: str | None, subject: Trial | None = None) -> list[SkillHint]:
        """Skills named by the subject's design, else by the plan, else none."""
        hints = self._hints(self.task)
        named = subject.candidate.design.get("skills") if subject is not None else None
        if isinstance(named, list) and named:
            return [h for h in hints if h.id in named]
        return [h for h in hints if plan and h.id in plan]

    # -- bookkeeping -----------------------------------------------------------------------------

    def _log(self, convo: _Conversation, candidate_id: int | None) -> None:
        for message, meta in zip(convo.messages, convo.metas, strict=True):
            self.archive.log_message(
                message.role,
                message.content,
                run_id=self.run_id,
                candidate_id=candidate_id,
                meta=meta,
            )
        convo.messages.clear()
        convo.metas.clear()

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        self.archive.log_message(
            "stop", reason, run_id=self.run_id, meta={"agent": "proposer", **_ledger(self.ledger)}
        )

    def _note(self, step: Step, candidate_id: int) -> str:
        what = {
            AgentRole.CODER: "first draft",
            AgentRole.DEBUGGER: f"repairs #{step.subject.candidate_id}" if step.subject else "",
            AgentRole.TUNER: f"tunes #{step.subject.candidate_id}" if step.subject else "",
        }.get(step.role, "")
        return f"{step.role.value}: {what} ({self.ledger.describe()})"


def _ledger(ledger: Ledger) -> dict[str, Any]:
    return {
        "calls": ledger.calls,
        "input_tokens_total": ledger.input_tokens,
        "output_tokens_total": ledger.output_tokens,
        "cost_usd_total": ledger.cost_usd,
    }
