"""``data.detail`` from Python: five-minute bars under hourly ones (made
with pandas' own resample), and each exit on an hour that touches both
the stop and the target checked against the five-minute bars here."""
import numpy as np
import pandas as pd

import sieve

SL = TP = 0.002


def bars():
    rng = np.random.default_rng(7)
    n = 12 * 1500
    index = pd.date_range("2024-01-01", periods=n, freq="5min", tz="UTC")
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.0012, n)))
    open_ = np.r_[100.0, close[:-1]]  # each bar opens at the last close
    high = np.maximum(open_, close) * (1 + rng.uniform(0, 0.0006, n))
    low = np.minimum(open_, close) * (1 - rng.uniform(0, 0.0006, n))
    fine = pd.DataFrame({"open": open_, "high": high, "low": low, "close": close}, index=index)
    hourly = fine.resample("1h", label="left", closed="left").agg(
        {"open": "first", "high": "max", "low": "min", "close": "last"})
    return fine, hourly


def config(detail):
    c = {
        "strategy": {
            "name": "level_bracket",
            "entry": "close > sma(close, n)",
            "exit": "close < sma(close, n)",
            "stop_loss": SL,
            "take_profit": TP,
            "params": {"n": 10},
        },
        "score": {"min_trades": 0, "objective": "total_return"},
    }
    if detail:
        c["data"] = {"detail": str(detail)}
    return c


def test_an_hour_touching_both_levels_exits_as_its_five_minute_bars_say(tmp_path):
    fine, hourly = bars()
    path = tmp_path / "fine.csv"
    fine.to_csv(path, index_label="time")
    ours = sieve.backtest(hourly, None, {}, config=config(path), trades=True)
    plain = sieve.backtest(hourly, None, {}, config=config(None), trades=True)
    assert ours["detail"]["uncovered"] == 0 and ours["detail"]["walked"] > 0
    assert "detail" not in plain
    checked = 0
    for trade in ours["trades"].itertuples():
        if trade.exit_reason not in ("stop_loss", "take_profit"):
            continue
        hour = pd.Timestamp(trade.exit_time)
        bar = hourly.loc[hour]
        stop, target = trade.entry_price * (1 - SL), trade.entry_price * (1 + TP)
        opened_through = bar.open <= stop or bar.open >= target
        if not (bar.low <= stop and bar.high >= target) or opened_through:
            continue
        # Both touched inside the hour: the first five-minute bar that
        # reaches one decides (the stop where one bar reaches both).
        inside = fine[(fine.index >= hour) & (fine.index < hour + pd.Timedelta("1h"))]
        first = inside[(inside.low <= stop) | (inside.high >= target)].iloc[0]
        expected = ("stop_loss", stop) if first.low <= stop else ("take_profit", target)
        assert (trade.exit_reason, trade.exit_price) == (expected[0], pytest_approx(expected[1])), hour
        checked += 1
    assert checked >= 20, checked
    # Some of those hours were stops by the OHLC rule alone.
    exits = lambda r: list(zip(r["trades"].exit_time, r["trades"].exit_reason))
    assert exits(ours) != exits(plain)


def pytest_approx(x):
    import pytest

    return pytest.approx(x, rel=1e-12)
