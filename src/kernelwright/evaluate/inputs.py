"""Trial inputs: fresh seeds and several input distributions.

Each trial draws the task's own inputs under a fresh seed, then reshapes the distribution of its
floating tensors so a kernel that answers from the input distribution (a fixed mean, a constant
scale) or that reads one element in k cannot pass every trial:

    task          the task's own ``get_inputs()`` values
    scaled        multiplied by a large constant (tests rescaling and overflow handling)
    heavy_tailed  each element multiplied by a log-normal factor (outliers dominate reductions)
    shifted       a large common offset added (tests cancellation, e.g. one-pass variance)
    tiny          multiplied by a small constant

Transforms keep signs, so positive inputs stay positive (log, sqrt, probabilities), and skip
tensors whose values all lie in [0, 1] (probabilities, masks). A trial whose reference outputs
turn non-finite under a transform falls back to ``task`` (decided by the reference worker).
"""

from __future__ import annotations

from typing import Any

DISTRIBUTIONS = ("task", "task", "scaled", "heavy_tailed", "shifted", "tiny")


def distribution_for_trial(trial: int, enabled: bool) -> str:
    """The distribution name of trial ``trial`` (0-based)."""
    if not enabled:
        return "task"
    return DISTRIBUTIONS[trial % len(DISTRIBUTIONS)]


def trial_seed(base_seed: int, index: int) -> int:
    """A distinct, reproducible seed per trial or timing set (not secret: for tools and tests)."""
    return (base_seed * 1_000_003 + 7919 * (index + 1)) % (2**31 - 1)


def derive_seed(secret: str, *parts: object) -> int:
    """A seed only someone who knows ``secret`` can compute (HMAC-SHA256, 63 bits).

    A model's seed is visible to the code that builds the model (``torch.initial_seed()``); the
    inputs' seeds come from other parts of the same secret, so knowing the first tells nothing
    about the second.
    """
    import hashlib
    import hmac

    message = "/".join(str(p) for p in parts).encode()
    digest = hmac.new(secret.encode(), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def transform_inputs(inputs: list[Any], distribution: str, seed: int) -> list[Any]:
    """Apply ``distribution`` to every floating tensor in ``inputs`` (returns new tensors)."""
    import torch

    if distribution == "task":
        return inputs
    gens: dict[Any, Any] = {}
    out: list[Any] = []
    for value in inputs:
        if (
            isinstance(value, torch.Tensor)
            and value.is_floating_point()
            and value.numel() > 1
            and not _unit_interval(value)
        ):
            if value.device not in gens:  # draw on the tensor's own device: no host copies
                gens[value.device] = torch.Generator(device=value.device).manual_seed(seed)
            value = _transform(value, distribution, gens[value.device])
        out.append(value)
    return out


def _unit_interval(t: Any) -> bool:
    return bool(t.min() >= 0 and t.max() <= 1)


def _transform(t: Any, distribution: str, gen: Any) -> Any:
    import torch

    x = t.double()
    if distribution == "scaled":
        x = x * 64.0
    elif distribution == "tiny":
        x = x * (1.0 / 64.0)
    elif distribution == "heavy_tailed":
        noise = torch.randn(x.shape, generator=gen, dtype=torch.float64, device=x.device)
        x = x * torch.exp(1.5 * noise)
    elif distribution == "shifted":
        if bool((x < 0).any()):  # only signed tensors: an offset would flip a positive domain
            x = x + 4.0 * x.std() + x.abs().mean()
    else:
        raise ValueError(f"unknown input distribution {distribution!r}")
    return x.to(t.dtype)
