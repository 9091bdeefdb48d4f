import pytest

from kernelwright.agents.llm import Usage
from kernelwright.agents.usage import Ledger, load_prices
from kernelwright.errors import ConfigError


def test_prices_by_spec_or_model_and_unknown_is_none(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('["openai:gpt-x"]\ninput_per_mtok = 2.0\noutput_per_mtok = 8.0\n')
    table = load_prices(path)
    assert table.cost("openai:gpt-x", Usage(1_000_000, 500_000)) == pytest.approx(6.0)
    assert table.cost("anthropic:claude", Usage(10, 10)) is None


def test_default_prices_file_is_optional(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELWRIGHT_HOME", str(tmp_path))
    assert load_prices().prices == {}
    (tmp_path / "llm_prices.toml").write_text('["m"]\ninput_per_mtok = 1\n')
    with pytest.raises(ConfigError, match="output_per_mtok"):
        load_prices()


def test_ledger_totals_and_unknown_cost():
    ledger = Ledger().add(Usage(10, 5), 0.5).add(Usage(1, 1), 0.25)
    assert (ledger.calls, ledger.input_tokens, ledger.output_tokens) == (2, 11, 6)
    assert ledger.cost_usd == pytest.approx(0.75)
    assert ledger.add(Usage(), None).cost_usd is None
    assert "cost unknown" in ledger.add(Usage(), None).describe()


def test_ledger_rebuilds_from_archived_replies():
    messages = [
        {"role": "user", "meta": {}},
        {"role": "assistant", "meta": {"input_tokens": 7, "output_tokens": 3, "cost_usd": None}},
        {"role": "assistant", "meta": {"agent": "planner"}},
    ]
    ledger = Ledger.from_messages(messages)
    assert (ledger.calls, ledger.input_tokens, ledger.cost_usd) == (1, 7, None)
