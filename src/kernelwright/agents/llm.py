"""The provider seam: one small protocol every chat model implements (httpx's transport).

    ChatModel.complete([ChatMessage, ...]) -> Completion(text, usage, ...)   or raises LLMError

Providers (``openai_chat``, ``anthropic_chat``) translate their SDK's exceptions into
:class:`LLMError` with ``retryable`` set for rate limits, server errors, timeouts and malformed
replies; :class:`kernelwright.agents.retry.RetryingModel` retries those with bounded backoff.
The scripted fakes of the test suite (``tests/agent_doubles``) implement the same protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from kernelwright.errors import KernelwrightError

Role = Literal["system", "user", "assistant"]


class LLMError(KernelwrightError):
    """A provider call failed. ``retryable``: a rate limit, a 5xx, a timeout or a garbled reply."""

    def __init__(
        self, message: str, *, retryable: bool = False, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn of a conversation."""

    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one request consumed, as the provider reported them (0 when it did not say)."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True, slots=True)
class Completion:
    """A model's reply.

    Attributes:
        text: the reply's text (empty when the provider returned no content).
        usage: tokens of this call.
        model: the model that answered, as the provider named it.
        finish_reason: ``stop``, ``length``, ``end_turn``... (None when not reported).
        latency_s: wall time of the successful request.
        attempts: requests it took, retries included.
    """

    text: str
    usage: Usage = Usage()
    model: str = ""
    finish_reason: str | None = None
    latency_s: float = 0.0
    attempts: int = 1


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: a system prompt plus alternating user/assistant turns in, text out."""

    name: str  # the spec it was made from, e.g. "openai:gpt-4o"

    def complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """Answer the conversation (its first message may be the system prompt).

        Raises:
            LLMError: the call failed; ``retryable`` says whether trying again may help.
        """
        ...
