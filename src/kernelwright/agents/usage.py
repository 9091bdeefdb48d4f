"""Token and cost accounting per run.

Prices are the user's to give (kernelwright ships none, because published prices change and a
wrong number is worse than none): a TOML file, by default ``$KERNELWRIGHT_HOME/llm_prices.toml``,
one table per spec or bare model name, in US dollars per million tokens::

    ["openai:gpt-4o"]
    input_per_mtok = 2.50
    output_per_mtok = 10.00

A model without a price costs ``None``; a run's total is ``None`` as soon as one request's is.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelwright.agents.llm import Usage
from kernelwright.errors import ConfigError
from kernelwright.paths import home

PRICES_FILE = "llm_prices.toml"


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million input and output tokens."""

    input_per_mtok: float
    output_per_mtok: float

    def cost(self, usage: Usage) -> float:
        """Dollars for ``usage``."""
        return (
            usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok
        ) / 1e6


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Prices by spec (``openai:gpt-4o``) or bare model name (``gpt-4o``)."""

    prices: Mapping[str, Price]

    def cost(self, spec: str, usage: Usage) -> float | None:
        """Dollars for ``usage`` of ``spec``; None when the model has no price."""
        price = self.prices.get(spec) or self.prices.get(spec.partition(":")[2])
        return price.cost(usage) if price else None


def load_prices(path: str | Path | None = None) -> PriceTable:
    """Read a prices file; ``None`` reads the default one if it exists (else an empty table).

    Raises:
        ConfigError: an unreadable file or an entry without both prices.
    """
    file = Path(path) if path is not None else home() / PRICES_FILE
    if path is None and not file.is_file():
        return PriceTable({})
    try:
        data = tomllib.loads(file.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read the LLM prices ({exc})") from exc
    prices: dict[str, Price] = {}
    for name, entry in data.items():
        try:
            prices[name] = Price(float(entry["input_per_mtok"]), float(entry["output_per_mtok"]))
        except (TypeError, KeyError, ValueError) as exc:
            raise ConfigError(
                f"{file}: [{name!r}] needs numbers input_per_mtok and output_per_mtok "
                "(US dollars per million tokens)"
            ) from exc
    return PriceTable(prices)


@dataclass(frozen=True, slots=True)
class Ledger:
    """Totals of a run's LLM calls. ``cost_usd`` is None when any call's cost is unknown."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def add(self, usage: Usage, cost_usd: float | None) -> Ledger:
        """The ledger after one more call."""
        total = None if cost_usd is None or self.cost_usd is None else self.cost_usd + cost_usd
        return Ledger(
            self.calls + 1,
            self.input_tokens + usage.input_tokens,
            self.output_tokens + usage.output_tokens,
            total,
        )

    @classmethod
    def from_messages(cls, messages: Iterable[Mapping[str, Any]]) -> Ledger:
        """Rebuild from archived replies (``meta`` holds tokens and cost), so a resumed run
        keeps counting where it stopped."""
        ledger = cls()
        for m in messages:
            meta = m.get("meta") or {}
            if m.get("role") != "assistant" or "input_tokens" not in meta:
                continue
            usage = Usage(int(meta["input_tokens"]), int(meta.get("output_tokens", 0)))
            ledger = ledger.add(usage, meta.get("cost_usd"))
        return ledger

    def describe(self) -> str:
        """``'3 call(s), 12,345 in / 2,345 out tokens, $0.0712'`` (or ``cost unknown``)."""
        cost = "cost unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"
        return (
            f"{self.calls} call(s), {self.input_tokens:,} in / {self.output_tokens:,} out "
            f"tokens, {cost}"
        )
