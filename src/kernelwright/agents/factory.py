"""``make_llm_proposer``: what ``kernelwright optimize --llm SPEC`` calls.

proposer = make_llm_proposer(spec="openai:gpt-4o", base_url=None, task=task,
                             constraints="constraints.toml", notes="notes.md", review=True,
                             archive=archive, run_id=run_id, seed_candidates=templates)
result = run_search(task, proposer, options, archive, budget, run_id,
                    evaluate_fn=proposer.evaluate_fn)        # the review gate, or None
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from kernelwright.agents.llm import ChatModel
from kernelwright.agents.proposer import LLMProposer
from kernelwright.agents.providers import LLMSettings, make_chat_model
from kernelwright.agents.review import ConsoleReviewer, Reviewer
from kernelwright.agents.skills import LibrarySkills, SkillSource
from kernelwright.agents.usage import PriceTable, load_prices
from kernelwright.archive import Archive
from kernelwright.constraints import Constraints, Reference, load_constraints
from kernelwright.errors import ConfigError
from kernelwright.hardware.energy import Objective
from kernelwright.records import Candidate, Precision, Task

_MAX_SEED_REFERENCES = 2


def make_llm_proposer(
    *,
    spec: str,
    base_url: str | None,
    task: Task,
    constraints: Constraints | str | Path | None,
    notes: str | Path | None,
    review: bool,
    archive: Archive,
    run_id: str,
    seed_candidates: Sequence[Candidate] = (),
    precision: Precision | None = None,
    objective: Objective = Objective.TIME,
    reviewer: Reviewer | None = None,
    chat_model: ChatModel | None = None,
    settings: LLMSettings | None = None,
    skills: SkillSource | None = None,
    prices: PriceTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> LLMProposer:
    """An LLM-backed proposer for ``task``.

    Args:
        spec: ``openai:MODEL`` or ``anthropic:MODEL``.
        base_url: an OpenAI-compatible (or Anthropic) endpoint; None for the provider's own.
        task: the task the proposer works on.
        constraints: a :class:`Constraints`, the path of a constraints file, or None.
        notes: the engineer's notes for the planner: their text, or the path of a text file.
        review: ask a person (on the console) before promoting a new best; the gate is
            ``proposer.evaluate_fn``, to pass to ``run_search``.
        archive, run_id: where prompts, replies and candidates are recorded.
        seed_candidates: template candidates shown to the planner and coder as references.
        precision: the run's precision policy (the constraints' policy wins when set).
        objective: what the run ranks candidates by (named in the system prompt).
        reviewer: who reviews when ``review`` is set (default: :class:`ConsoleReviewer`).
        chat_model: use this model instead of building one from ``spec`` (tests, custom
            providers).
        settings: timeouts, reply limit, temperature and retry policy.
        skills: where skill hints come from (default: :mod:`kernelwright.skills` if present).
        prices: per-model prices (default: ``$KERNELWRIGHT_HOME/llm_prices.toml`` if present).
        environ: environment to read keys from (default: ``os.environ``).

    Raises:
        ConfigError: a bad spec, URL, constraints or notes file, a missing key or SDK.
    """
    rules = _constraints(constraints)
    model = chat_model or make_chat_model(spec, base_url, settings=settings, environ=environ)
    references = [
        *rules.references,
        *(_seed_reference(c, i) for i, c in enumerate(seed_candidates[:_MAX_SEED_REFERENCES])),
    ]
    return LLMProposer(
        model=model,
        task=task,
        archive=archive,
        run_id=run_id,
        constraints=rules,
        skills=skills or LibrarySkills(),
        notes=_notes(notes),
        references=references,
        precision=precision or Precision.FP32,
        objective=objective,
        prices=prices if prices is not None else load_prices(),
        reviewer=(reviewer or ConsoleReviewer()) if review else None,
    )


def _constraints(value: Constraints | str | Path | None) -> Constraints:
    if value is None:
        return Constraints()
    if isinstance(value, Constraints):
        return value
    return load_constraints(value)


def _notes(value: str | Path | None) -> str | None:
    """Notes text; a Path, or a one-line string naming an existing file, is read."""
    if value is None:
        return None
    if isinstance(value, str) and ("\n" in value or len(value) > 1024):
        return value
    path = Path(value).expanduser()
    if isinstance(value, Path) or path.is_file():
        try:
            return path.read_text()
        except OSError as exc:
            raise ConfigError(f"--notes {path}: cannot read the notes file ({exc})") from exc
    return str(value)


def _seed_reference(candidate: Candidate, index: int) -> Reference:
    design = candidate.design
    title = str(design.get("template") or design.get("name") or f"{candidate.origin} #{index + 1}")
    return Reference(title=title, source=candidate.source)
