"""Fixtures for the agents' unit tests: no provider keys, URLs or proxies leak in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kernelwright.archive import Archive
from kernelwright.records import Task
from kernelwright.task import load_task

AGENT_FIXTURES = Path(__file__).parents[2] / "fixtures" / "agents"
LLM_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture(autouse=True)
def no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def task() -> Task:
    return load_task(AGENT_FIXTURES / "vector_add.py")


@pytest.fixture
def replies() -> dict[str, str]:
    return {p.stem: p.read_text() for p in (AGENT_FIXTURES / "replies").glob("*.md")}


@pytest.fixture
def archive() -> Iterator[Archive]:
    store = Archive(":memory:")
    yield store
    store.close()
