"""LLM agents: an optional proposer for the search, behind one small provider seam.

    make_llm_proposer(spec="openai:MODEL", ...)  -> LLMProposer (planner, coder, debugger, tuner)
    make_chat_model(spec, base_url)              -> ChatModel over the official openai/anthropic SDK

Constraints (``kernelwright.constraints``) reach the agents' prompts; ``optimize`` enforces them
for every proposer.

Importing this package never imports an SDK: a provider imports its SDK when it is built, and a
missing one fails there with "install kernelwright[agents]". kernelwright itself never imports
this package. See docs/agents.md.
"""

from kernelwright.agents.context import describe_verdict
from kernelwright.agents.extract import Extraction, extract_code
from kernelwright.agents.factory import make_llm_proposer
from kernelwright.agents.llm import ChatMessage, ChatModel, Completion, LLMError, Usage
from kernelwright.agents.proposer import LLMProposer
from kernelwright.agents.providers import LLMSettings, make_chat_model
from kernelwright.agents.retry import RetryingModel, RetryPolicy
from kernelwright.agents.review import (
    AutoReviewer,
    ConsoleReviewer,
    ReviewDecision,
    Reviewer,
    ReviewGate,
    ReviewRequest,
)
from kernelwright.agents.roles import AgentRole
from kernelwright.agents.skills import LibrarySkills, SkillHint, SkillSource, StaticSkills
from kernelwright.agents.spec import LLMSpec, parse_spec
from kernelwright.agents.trajectories import export_trajectories
from kernelwright.agents.usage import Ledger, Price, PriceTable, load_prices

__all__ = [
    "AgentRole",
    "AutoReviewer",
    "ChatMessage",
    "ChatModel",
    "Completion",
    "ConsoleReviewer",
    "Extraction",
    "LLMError",
    "LLMProposer",
    "LLMSettings",
    "LLMSpec",
    "Ledger",
    "LibrarySkills",
    "Price",
    "PriceTable",
    "RetryPolicy",
    "RetryingModel",
    "ReviewDecision",
    "ReviewGate",
    "ReviewRequest",
    "Reviewer",
    "SkillHint",
    "SkillSource",
    "StaticSkills",
    "Usage",
    "describe_verdict",
    "export_trajectories",
    "extract_code",
    "load_prices",
    "make_chat_model",
    "make_llm_proposer",
    "parse_spec",
]
