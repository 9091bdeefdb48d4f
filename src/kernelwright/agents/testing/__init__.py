"""Test doubles for the agents, shipped with the library (httpx's MockTransport idea).

ScriptedChatModel(["reply 1", LLMError(...), ...])    in-process, implements ChatModel
ScriptedLLMServer([Reply(...), Fail(429), Stall(1.0, Reply(...)), Garbled(), ...])
                                                      real HTTP on 127.0.0.1, for the SDKs
"""

from kernelwright.agents.testing.fake import ScriptedChatModel
from kernelwright.agents.testing.judge import ScriptedJudge, correct, rejected, wrong
from kernelwright.agents.testing.server import (
    Fail,
    Garbled,
    RecordedRequest,
    Redirect,
    Reply,
    ScriptedLLMServer,
    Stall,
)

__all__ = [
    "Fail",
    "Garbled",
    "RecordedRequest",
    "Redirect",
    "Reply",
    "ScriptedChatModel",
    "ScriptedJudge",
    "ScriptedLLMServer",
    "Stall",
    "correct",
    "rejected",
    "wrong",
]
