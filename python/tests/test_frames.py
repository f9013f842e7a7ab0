"""``tf(…)`` and ``informative(…)`` against a pandas reference, on real bars
(``tests/data/frames``: SPY five-minute bars across New York's 2011 clock
change with a day missing bars, EUR/USD hourly bars across London's 2017
clock change, ETH daily bars from a Wednesday, ETH five-minute bars from
mid-day with BTC four-hour bars as the informative instrument).

The reference, written from pandas' documented calls only:

- higher bars: ``resample(rule, label="left", closed="left",
  origin="start_day")`` in ``data.timezone`` (first open, highest high,
  lowest low, last close, summed volume; empty bins dropped);
- each higher bar ends at its label plus the rule (a calendar day, week or
  month; a day ends at ``data.session_end`` where that is set);
- each base bar (stamped at its open, closing one bar length later) reads
  the value of the last higher bar that has ended by its close:
  ``merge_asof(base close, higher end, direction="backward")``;
- an informative bar ends at its open plus its own length.

Every value equals the reference (same undefined bars, numbers within
1e-12 relative: pandas' rolling mean and TA-Lib's RSI sum in another
order), and a rule strategy using them trades exactly as vectorbt's
``Portfolio.from_signals`` does on the reference signals (the conventions
of ``test_vectorbt.py``: fill at the close, all cash, fees).
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import talib
import vectorbt as vbt
from test_vectorbt import sieve_trades, vbt_trades

import sieve

FRAMES = Path(__file__).resolve().parents[2] / "tests" / "data" / "frames"
SIEVE = os.environ.get("SIEVE_BIN") or str(Path(__file__).resolve().parents[2] / "target" / "release" / "sieve")
OHLCV = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
CASH = 10000.0
FEE = 0.001


def load(name):
    df = pd.read_csv(FRAMES / name)
    df.index = pd.to_datetime(df.pop("time"), utc=True)
    return df


def higher(df, rule, tz):
    """The higher bars of `df` in zone `tz`, as pandas resamples them."""
    local = df.tz_convert(tz)
    agg = local.resample(rule, label="left", closed="left", origin="start_day").agg(OHLCV)
    return agg.dropna(subset=["close"])


def ends(labels, rule, session_end=None):
    """When each higher bar ends: its label plus the rule, on the calendar."""
    if rule == "1D":
        if session_end is not None:
            return labels.normalize() + pd.Timedelta(session_end + ":00")
        return labels + pd.DateOffset(days=1)
    if rule == "W-MON":
        return labels + pd.DateOffset(weeks=1)
    if rule == "MS":
        return labels + pd.offsets.MonthBegin(1)
    return labels + pd.Timedelta(rule)


def as_of(base_index, bar, values, end):
    """`values` (ending at `end`) on base bars opening at `base_index`,
    `bar` long: the last that has ended by each base bar's close."""
    left = pd.DataFrame({"t": (base_index + bar).tz_convert("UTC")})
    right = pd.DataFrame({"t": pd.DatetimeIndex(end).tz_convert("UTC"), "v": np.asarray(values, dtype=float)})
    right = right.sort_values("t", kind="stable")
    # Units must agree for merge_asof.
    left["t"] = left["t"].astype("datetime64[ns, UTC]")
    right["t"] = right["t"].astype("datetime64[ns, UTC]")
    return pd.merge_asof(left, right, on="t", direction="backward")["v"].to_numpy()


def on_higher(df, rule, tz, bar, f, session_end=None):
    """f(higher bars) seen from each base bar."""
    h = higher(df, rule, tz)
    return as_of(df.index, bar, f(h), ends(h.index, rule, session_end))


def sma(x, n):
    return x.rolling(n).mean().to_numpy()


def rsi(x, n):
    return talib.RSI(x.to_numpy(dtype=float), timeperiod=n)


def assert_same(got, want, what):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, what
    assert np.array_equal(np.isnan(got), np.isnan(want)), "%s: undefined on other bars (first: %s)" % (
        what,
        np.flatnonzero(np.isnan(got) != np.isnan(want))[:5],
    )
    ok = ~np.isnan(want)
    assert ok.sum() > 0, what
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-12, atol=0, err_msg=what)


def values(path, expression, config):
    return sieve.indicator(str(FRAMES / path), expression, config=config).to_numpy()


SPY = "spy-5m-2011-03.csv"
NY = {"data": {"timezone": "America/New_York"}}
FIVE = pd.Timedelta("5min")
HOUR = pd.Timedelta("1h")


def test_the_fixtures_have_what_the_cases_need():
    spy = load(SPY).tz_convert("America/New_York")
    days = spy.groupby(spy.index.date).size()
    assert (days == 78).sum() == 22 and days.min() == 54, "one day misses bars"
    assert spy.index[0].utcoffset() != spy.index[-1].utcoffset(), "a clock change"
    eur = load("eurusd-1h-2017h1.csv").tz_convert("Europe/London")
    assert eur.index[0].utcoffset() != eur.index[-1].utcoffset()
    assert load("eth-1d-2021-2023.csv").index[0].day_of_week == 2, "a Wednesday: a partial first week"
    assert load("eth-5m-2023-03.csv").index[0].hour == 18, "a partial first day"


def test_a_session_end_shows_the_day_on_its_last_bar():
    df = load(SPY)
    config = {"data": {"timezone": "America/New_York", "session_end": "16:00"}}
    want = on_higher(df, "1D", "America/New_York", FIVE, lambda h: h.close, session_end="16:00")
    got = values(SPY, 'tf("1d", close)', config)
    assert_same(got, want, "session end")
    # The last bar of a day (15:55, closing 16:00) shows its own day's close.
    local = df.index.tz_convert("America/New_York")
    last = np.flatnonzero((local.hour == 15) & (local.minute == 55))
    assert np.array_equal(got[last], df.close.to_numpy()[last])
    # Without it, only the next day's first bar does.
    plain = values(SPY, 'tf("1d", close)', NY)
    assert np.isnan(plain[last[0]]) and plain[last[0] + 1] == df.close.iloc[last[0]]


EUR = "eurusd-1h-2017h1.csv"
LONDON = {"data": {"timezone": "Europe/London"}}


@pytest.mark.parametrize(
    "path, zone, bar, expression, rule, f",
    [
        # SPY's five-minute bars on New York's clock.
        (SPY, "America/New_York", FIVE, 'tf("1d", sma(close, 5))', "1D", lambda h: sma(h.close, 5)),
        (SPY, "America/New_York", FIVE, 'tf("1d", high - low)', "1D", lambda h: h.high - h.low),
        (SPY, "America/New_York", FIVE, 'tf("1d", volume)', "1D", lambda h: h.volume),
        (SPY, "America/New_York", FIVE, 'tf("1h", close)', "1h", lambda h: h.close),
        (SPY, "America/New_York", FIVE, 'tf("4h", rsi(close, 5))', "4h", lambda h: rsi(h.close, 5)),
        (SPY, "America/New_York", FIVE, 'tf("1w", open)', "W-MON", lambda h: h.open),
        # EUR/USD's hours on London's.
        (EUR, "Europe/London", HOUR, 'tf("4h", rsi(close, 14))', "4h", lambda h: rsi(h.close, 14)),
        (EUR, "Europe/London", HOUR, 'tf("1d", sma(close, 10))', "1D", lambda h: sma(h.close, 10)),
        (EUR, "Europe/London", HOUR, 'tf("1d", low)', "1D", lambda h: h.low),
        (EUR, "Europe/London", HOUR, 'tf("1M", close)', "MS", lambda h: h.close),
    ],
)
def test_higher_bars_as_pandas_resamples_them(path, zone, bar, expression, rule, f):
    df = load(path)
    want = on_higher(df, rule, zone, bar, f)
    assert_same(values(path, expression, {"data": {"timezone": zone}}), want, expression)


def test_eth_days_under_a_weekly_regime():
    df = load("eth-1d-2021-2023.csv")
    want = on_higher(df, "W-MON", "UTC", pd.Timedelta("1D"), lambda h: (h.close > sma(h.close, 10)).astype(float))
    # Before ten weeks the comparison with an undefined average is false.
    got = values("eth-1d-2021-2023.csv", 'tf("1w", close > sma(close, 10))', {})
    seen = ~np.isnan(want)
    assert np.array_equal(got[seen], want[seen]) and (got[~seen] == 0).all()
    assert 0 < got.sum() < len(got)


ETH = "eth-5m-2023-03.csv"
BTC_CONFIG = {"data": {"informative": {"btc": str(FRAMES / "btc-4h-2023-02.csv")}}}


@pytest.mark.parametrize(
    "expression, f",
    [
        ('informative("btc", sma(close, 20))', lambda b: sma(b.close, 20)),
        ('informative("btc", close)', lambda b: b.close),
    ],
)
def test_eth_reads_btc_as_of_each_close(expression, f):
    eth, btc = load(ETH), load("btc-4h-2023-02.csv")
    want = as_of(eth.index, FIVE, f(btc), btc.index + pd.Timedelta("4h"))
    assert_same(values(ETH, expression, BTC_CONFIG), want, expression)


def test_an_informative_instruments_own_higher_timeframe():
    eth, btc = load(ETH), load("btc-4h-2023-02.csv")
    daily = higher(btc, "1D", "UTC")
    # BTC's days as of each BTC bar's close, then as of each ETH bar's.
    on_btc = as_of(btc.index, pd.Timedelta("4h"), daily.close, ends(daily.index, "1D"))
    want = as_of(eth.index, FIVE, on_btc, btc.index + pd.Timedelta("4h"))
    assert_same(values(ETH, 'informative("btc", tf("1d", close))', BTC_CONFIG), want, "btc days")


def crossed(a, b, up=True):
    """cross_above(a, b) as the rule language defines it: a > b now and,
    at the latest earlier bar where a ≠ b (both defined), a < b; an
    undefined bar resets that memory."""
    if not up:
        a, b = -np.asarray(a), -np.asarray(b)
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    no_ties(a, b)
    out = np.zeros(len(a), dtype=bool)
    last = 0  # −1 below, +1 above, 0 unknown
    for t in range(len(a)):
        if np.isnan(a[t]) or np.isnan(b[t]):
            last = 0
            continue
        if a[t] > b[t]:
            out[t] = last == -1
            last = 1
        elif a[t] < b[t]:
            last = -1
    return out


def no_ties(a, b):
    """The reference compares `a` and `b` in floating point as sieve does:
    on a bar where they are (nearly) equal, the last bit would decide, so
    the cases use averages that are never that close."""
    both = ~np.isnan(a) & ~np.isnan(b)
    gap = np.abs(a[both] - b[both]) / np.abs(b[both])
    assert gap.min() > 1e-12, "a near tie: choose other windows"


def trades_as_vectorbt(path, config, entries, exits, close):
    """The rule strategy of `config` on `path` against vectorbt on the
    reference signals: every trade the same."""
    config = {**config, "backtest": {"fill": "close", "fee": FEE, "initial_cash": CASH}, "score": {"objective": "total_return"}}
    got = sieve.backtest(str(FRAMES / path), None, {}, config=config, trades=True)["trades"]
    index = load(path).index.tz_localize(None)
    close = pd.Series(close, index=index)
    pf = vbt.Portfolio.from_signals(
        close,
        pd.Series(entries, index=index),
        pd.Series(exits, index=index),
        fees=FEE,
        init_cash=CASH,
        size=np.inf,
        direction="longonly",
        freq="5min",
    )
    theirs = vbt_trades(pf.trades.records)
    ours = sieve_trades(got, index)
    assert len(ours) >= 3, "the case trades"
    assert len(ours) == len(theirs)
    for column in ["entry_idx", "exit_idx", "open", "short"]:
        assert np.array_equal(ours[column].to_numpy(), theirs[column].to_numpy()), column
    for column in ["entry_price", "exit_price"]:
        np.testing.assert_allclose(ours[column], theirs[column], rtol=1e-15)
    for column in ["size", "fees"]:
        np.testing.assert_allclose(ours[column], theirs[column], rtol=1e-9)
    np.testing.assert_allclose(ours["pnl"], theirs["pnl"], rtol=0, atol=1e-9 * CASH)


def test_a_daily_filter_on_five_minutes_trades_as_the_reference():
    df = load(SPY)
    # (Averages of 6 and 24 closes on a cent grid tie exactly twice.)
    fast, slow = sma(df.close, 7), sma(df.close, 25)
    daily = on_higher(df, "1D", "America/New_York", FIVE, lambda h: sma(h.close, 5))
    no_ties(df.close.to_numpy(), daily)
    entries = crossed(fast, slow) & (df.close.to_numpy() > daily)
    exits = crossed(fast, slow, up=False)
    config = {
        **NY,
        "strategy": {
            "name": "daily_filter",
            "entry": 'cross_above(sma(close, 7), sma(close, 25)) and close > tf("1d", sma(close, 5))',
            "exit": "cross_below(sma(close, 7), sma(close, 25))",
        },
    }
    trades_as_vectorbt(SPY, config, entries, exits, df.close.to_numpy())


def test_an_informative_pair_trades_as_the_reference():
    eth, btc = load(ETH), load("btc-4h-2023-02.csv")
    fast, slow = sma(eth.close, 6), sma(eth.close, 24)
    no_ties(btc.close.to_numpy(), sma(btc.close, 20))
    trend = as_of(eth.index, FIVE, btc.close > sma(btc.close, 20), btc.index + pd.Timedelta("4h"))
    entries = crossed(fast, slow) & (trend == 1.0)
    exits = crossed(fast, slow, up=False)
    config = {
        **BTC_CONFIG,
        "strategy": {
            "name": "btc_filter",
            "entry": 'cross_above(sma(close, 6), sma(close, 24)) and informative("btc", close > sma(close, 20))',
            "exit": "cross_below(sma(close, 6), sma(close, 24))",
        },
    }
    trades_as_vectorbt(ETH, config, entries, exits, eth.close.to_numpy())


def test_informative_frames_in_backtest_and_a_reportable_optimize(tmp_path):
    """``informative=`` in ``backtest`` equals the config's file; an
    ``optimize`` run keeps the DataFrame in its folder, so its report can
    be written again from the folder alone."""
    eth, btc = load(ETH), load("btc-4h-2023-02.csv")
    config = {
        "strategy": {
            "name": "btc_filter",
            "entry": 'cross_above(sma(close, fast), sma(close, 24)) and informative("btc", close > sma(close, 20))',
            "exit": "cross_below(sma(close, fast), sma(close, 24))",
            "params": {"fast": {"values": [4, 6, 8]}},
        },
        "score": {"objective": "total_return", "min_trades": 1},
        "optimize": {"iterations": 1},
    }
    a = sieve.backtest(eth, None, {"fast": 6}, config=config, informative={"btc": btc}, trades=True)
    b = sieve.backtest(str(FRAMES / ETH), None, {"fast": 6}, config={**config, **BTC_CONFIG}, trades=True)
    assert len(a["trades"]) > 0
    naive = a["trades"].copy()
    for column in ("entry_time", "exit_time"):
        naive[column] = naive[column].dt.tz_localize(None)
    pd.testing.assert_frame_equal(naive, b["trades"], check_dtype=False)
    out = tmp_path / "run"
    best = sieve.optimize(eth, config, out, informative={"btc": btc})
    assert (out / "informative" / "btc.parquet").exists()
    # `sieve report` rebuilds the page from the folder's files alone.
    (out / "report.html").unlink()
    subprocess.run([SIEVE, "report", str(out)], check=True, capture_output=True)
    assert (out / "report.html").exists()
    # The same call resumes the finished run.
    assert sieve.optimize(eth, config, out, informative={"btc": btc})["params"] == best["params"]


def test_informative_frames_from_python():
    """``informative={"btc": df}`` is the config's data.informative as a
    DataFrame: the same values, trades and sweep; a DataFrame's bars with
    the config's file work too; an executor is refused clearly."""
    eth, btc = load(ETH), load("btc-4h-2023-02.csv")
    expression = 'informative("btc", sma(close, 20))'
    by_config = values(ETH, expression, BTC_CONFIG)
    by_frame = sieve.indicator(eth, expression, informative={"btc": btc}).to_numpy()
    assert_same(by_frame, by_config, "a DataFrame")
    mixed = sieve.indicator(eth, expression, config=BTC_CONFIG).to_numpy()
    assert_same(mixed, by_config, "the config's file under a DataFrame")
    config = {
        "strategy": {
            "name": "btc_filter",
            "entry": 'cross_above(sma(close, fast), sma(close, 24)) and informative("btc", close > sma(close, 20))',
            "exit": "cross_below(sma(close, fast), sma(close, 24))",
            "params": {"fast": {"values": [4, 6, 8]}},
        },
        "score": {"objective": "total_return"},
    }
    a = sieve.sweep(eth, config, informative={"btc": btc})
    b = sieve.sweep(str(FRAMES / ETH), {**config, **BTC_CONFIG})
    pd.testing.assert_frame_equal(a, b)
    entry = config["strategy"]["entry"].replace("close > sma", "close < sma")
    other = sieve.sweep(eth, {**config, "strategy": {**config["strategy"], "entry": entry}}, informative={"btc": btc})
    assert not a["trades"].equals(other["trades"]), "the informative filter decides trades"
    with pytest.raises(sieve.ConfigError, match="informative instrument 'btc'"):
        sieve.sweep(eth, config)
    with pytest.raises(TypeError, match="data.informative"):
        sieve.optimize(eth, config, "/tmp/unused-run", informative={"btc": btc}, executor=object())


def test_a_day_from_17_00_in_new_york():
    """data.day_start = "17:00": days of 17:00 to 17:00 New York time,
    each dated by the day it ends on (across the clock change of March
    2017). pandas' resample ignores `offset` for days on a zoned index, so
    the reference groups by that date: the local time plus 7 hours."""
    df = load(EUR)
    local = df.index.tz_convert("America/New_York").tz_localize(None)
    date = (local + pd.Timedelta(hours=7)).normalize()
    h = df.groupby(date.to_numpy()).agg(OHLCV)
    end = (h.index + pd.Timedelta(hours=17)).tz_localize("America/New_York")
    config = {"data": {"timezone": "America/New_York", "day_start": "17:00"}}
    want = as_of(df.index, HOUR, h.close, end)
    assert_same(values(EUR, 'tf("1d", close)', config), want, "17:00 days")
    want = as_of(df.index, HOUR, sma(h.close, 5), end)
    assert_same(values(EUR, 'tf("1d", sma(close, 5))', config), want, "17:00 days")
    # Midnight days differ: the case tests the session start.
    assert not np.array_equal(np.isnan(want), np.isnan(values(EUR, 'tf("1d", sma(close, 5))', {})))


def test_a_four_hour_rsi_trades_as_the_reference():
    df = load(EUR)
    fast, slow = sma(df.close, 10), sma(df.close, 30)
    r = on_higher(df, "4h", "Europe/London", HOUR, lambda h: rsi(h.close, 14))
    no_ties(r, np.full(len(r), 55.0))
    entries = crossed(fast, slow) & (r < 55)
    exits = crossed(fast, slow, up=False)
    config = {
        **LONDON,
        "strategy": {
            "name": "rsi_filter",
            "entry": 'cross_above(sma(close, 10), sma(close, 30)) and tf("4h", rsi(close, 14)) < 55',
            "exit": "cross_below(sma(close, 10), sma(close, 30))",
        },
    }
    trades_as_vectorbt(EUR, config, entries, exits, df.close.to_numpy())


def test_a_weekly_regime_trades_as_the_reference():
    path = "eth-1d-2021-2023.csv"
    df = load(path)
    fast, slow = sma(df.close, 5), sma(df.close, 20)
    regime = on_higher(df, "W-MON", "UTC", pd.Timedelta("1D"), lambda h: h.close - sma(h.close, 10))
    no_ties(regime, np.zeros(len(regime)) + 1e-300)
    entries = crossed(fast, slow) & (regime > 0)
    exits = crossed(fast, slow, up=False)
    config = {
        "strategy": {
            "name": "weekly_regime",
            "entry": 'cross_above(sma(close, 5), sma(close, 20)) and tf("1w", close > sma(close, 10))',
            "exit": "cross_below(sma(close, 5), sma(close, 20))",
        },
    }
    trades_as_vectorbt(path, config, entries, exits, df.close.to_numpy())
