"""What a harness child inherits: an allow-list of the parent's environment, plus the settings
every child needs (PyTorch's allocator kept from splitting large blocks, whatever the user set:
expandable segments would make CUDA IPC handles the protocol refuses)."""

from __future__ import annotations

from kernelwright.evaluate.spawn import ALLOCATOR, child_env


def test_a_child_gets_the_allocator_setting_and_not_the_parents_other_variables() -> None:
    env = child_env({"PATH": "/bin", "KERNELWRIGHT_HOME": "/secret", "HOME": "/root"}, {})
    assert env["PATH"] == "/bin" and "KERNELWRIGHT_HOME" not in env and "HOME" not in env
    assert env[ALLOCATOR[0]] == "max_split_size_mb:256"


def test_a_users_expandable_segments_do_not_reach_the_children() -> None:
    env = child_env({ALLOCATOR[0]: "expandable_segments:True"}, {})
    assert env[ALLOCATOR[0]] == "max_split_size_mb:256"
