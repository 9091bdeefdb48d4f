"""Bounded retries with exponential backoff around any :class:`ChatModel`.

The SDKs' own retries are switched off (``max_retries=0``) so that one policy, visible and
testable here, covers both providers: the wait before retry ``k`` (1-based) is
``min(max_s, initial_s * factor ** (k - 1))``, or the server's ``Retry-After`` when it sent one
(capped at ``max_s``). Only errors marked ``retryable`` are retried.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from kernelwright.agents.llm import ChatMessage, ChatModel, Completion, LLMError


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most ``attempts`` requests per call; waits grow by ``factor`` from ``initial_s``."""

    attempts: int = 4
    initial_s: float = 2.0
    factor: float = 2.0
    max_s: float = 60.0

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after_s is not None and retry_after_s >= 0:
            return min(self.max_s, retry_after_s)
        return min(self.max_s, self.initial_s * self.factor ** (retry - 1))


class RetryingModel:
    """A :class:`ChatModel` that retries its inner model's retryable errors.

    ``sleep`` is injectable so tests run without waiting; ``on_retry(error, wait_s)`` lets a
    display say what is happening.
    """

    def __init__(
        self,
        inner: ChatModel,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        on_retry: Callable[[LLMError, float], None] | None = None,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._on_retry = on_retry

    def complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """Call the inner model, retrying retryable errors up to ``policy.attempts`` times."""
        attempts = max(1, self.policy.attempts)
        for attempt in range(1, attempts + 1):
            try:
                completion = self.inner.complete(messages)
            except LLMError as exc:
                if not exc.retryable or attempt == attempts:
                    raise LLMError(
                        f"{self.name}: {exc} (after {attempt} attempt(s))",
                        retryable=exc.retryable,
                    ) from exc
                wait = self.policy.delay(attempt, exc.retry_after_s)
                if self._on_retry is not None:
                    self._on_retry(exc, wait)
                self._sleep(wait)
                continue
            return replace(completion, attempts=attempt)
        raise AssertionError("unreachable: the loop returns or raises")
