"""An in-process :class:`ChatModel` that plays back a script."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kernelwright.agents.llm import ChatMessage, Completion, LLMError, Usage


class ScriptedChatModel:
    """Answers with the next scripted reply (an :class:`LLMError` in the script is raised).

    ``requests`` keeps every conversation it was sent. When the script runs out it raises a
    non-retryable :class:`LLMError`, so a runaway loop ends instead of spinning.
    """

    def __init__(
        self,
        script: Iterable[str | LLMError],
        *,
        name: str = "fake:scripted",
        usage: Usage | None = None,
    ) -> None:
        self.name = name
        self.script = list(script)
        self.usage = usage or Usage(100, 50)
        self.requests: list[list[ChatMessage]] = []

    def complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """The next scripted reply."""
        self.requests.append(list(messages))
        if not self.script:
            raise LLMError("the scripted model has no replies left")
        item = self.script.pop(0)
        if isinstance(item, LLMError):
            raise item
        return Completion(item, self.usage, model=self.name, finish_reason="stop")
