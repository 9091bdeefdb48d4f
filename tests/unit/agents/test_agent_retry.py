import pytest

from agent_doubles import ScriptedChatModel
from kernelwright.agents.llm import LLMError
from kernelwright.agents.retry import RetryingModel, RetryPolicy


def test_retries_retryable_errors_with_exponential_backoff():
    inner = ScriptedChatModel([LLMError("429", retryable=True)] * 3 + ["ok"])
    waits: list[float] = []
    model = RetryingModel(inner, RetryPolicy(attempts=4, initial_s=1, factor=2), sleep=waits.append)
    completion = model.complete([])
    assert completion.text == "ok" and completion.attempts == 4
    assert waits == [1, 2, 4]


def test_gives_up_after_the_bound():
    inner = ScriptedChatModel([LLMError("500", retryable=True)] * 5)
    waits: list[float] = []
    model = RetryingModel(inner, RetryPolicy(attempts=3), sleep=waits.append)
    with pytest.raises(LLMError, match=r"after 3 attempt"):
        model.complete([])
    assert len(inner.requests) == 3 and len(waits) == 2


def test_does_not_retry_permanent_errors():
    inner = ScriptedChatModel([LLMError("401 bad key"), "never"])
    model = RetryingModel(inner, sleep=lambda s: pytest.fail("slept"))
    with pytest.raises(LLMError, match="bad key"):
        model.complete([])
    assert len(inner.requests) == 1


def test_retry_after_is_honoured_and_capped():
    policy = RetryPolicy(initial_s=1, max_s=10)
    assert policy.delay(1, retry_after_s=3) == 3
    assert policy.delay(1, retry_after_s=300) == 10
    assert policy.delay(10) == 10
