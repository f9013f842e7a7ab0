"""The rule language's functions against TA-Lib (and, where TA-Lib has
none, against the formula written in the docs), value by value, through
``sieve.indicator``: on backtesting.py's GOOG and EURUSD series and on a
synthetic series with flat stretches, price gaps, zero volume and a
weekend gap. On every bar where both are defined,
|sieve − reference| ≤ 1e-9 · (|reference| + 1); sieve is defined wherever
TA-Lib is (it may start earlier: the warm-ups in the docs).

Needs ``pip install ta-lib backtesting`` (CI installs both) and the
package (``pip install ./python``).
"""

import numpy as np
import pandas as pd
import pytest
import talib
from backtesting.test import EURUSD, GOOG

import sieve


def synthetic():
    """600 business days: a random walk with a 60-bar flat stretch (open =
    high = low = close, no volume), price gaps every 50 bars, and a
    stretch of 20 bars with zero volume but moving prices."""
    rng = np.random.default_rng(7)
    n = 600
    close = 100 + np.cumsum(rng.normal(0, 1, n))
    close[100:160] = close[99]
    opens = np.r_[close[0], close[:-1]] + np.where(np.arange(n) % 50 == 25, 5.0, 0.0)
    spread = np.abs(rng.normal(0, 0.5, n))
    high = np.maximum(opens, close) + spread
    low = np.minimum(opens, close) - spread
    volume = rng.integers(1_000, 100_000, n).astype(float)
    flat = slice(101, 160)
    opens[flat] = high[flat] = low[flat] = close[flat]
    volume[flat] = 0.0
    volume[300:320] = 0.0
    index = pd.bdate_range("2020-01-01", periods=n)
    return pd.DataFrame({"Open": opens, "High": high, "Low": low, "Close": close, "Volume": volume}, index=index)


DATA = {"GOOG": GOOG, "EURUSD": EURUSD, "synthetic": synthetic()}


def supertrend(h, l, c, n, mult):
    """The formula in docs/config.md, written out bar by bar."""
    atr = talib.ATR(h, l, c, n)
    value, direction = np.full(len(c), np.nan), np.full(len(c), np.nan)
    first = int(np.flatnonzero(~np.isnan(atr))[0])
    for t in range(first, len(c)):
        mid = (h[t] + l[t]) / 2
        bu, bl = mid + mult * atr[t], mid - mult * atr[t]
        if t == first:
            upper, lower, up = bu, bl, True
        else:
            upper = bu if (bu < upper or c[t - 1] > upper) else upper
            lower = bl if (bl > lower or c[t - 1] < lower) else lower
            if up and c[t] < lower:
                up = False
            elif not up and c[t] > upper:
                up = True
        value[t], direction[t] = (lower, 1.0) if up else (upper, -1.0)
    return value, direction


def since(c, x, fold):
    """Restart at x where c is true, else fold; NaN before the first c."""
    out, value = np.full(len(c), np.nan), np.nan
    for t in range(len(c)):
        value = x[t] if c[t] else fold(value, x[t])
        out[t] = value
    return out


def barssince(c):
    out, last = np.full(len(c), np.nan), None
    for t in range(len(c)):
        if c[t]:
            last = t
        if last is not None:
            out[t] = t - last
    return out


CASES = {
    "sma(close, 20)": lambda h, l, c, v: talib.SMA(c, 20),
    "ema(close, 20)": lambda h, l, c, v: talib.EMA(c, 20),
    "wma(close, 20)": lambda h, l, c, v: talib.WMA(c, 20),
    "sum(close, 20)": lambda h, l, c, v: talib.SUM(c, 20),
    "rsi(close, 14)": lambda h, l, c, v: talib.RSI(c, 14),
    "atr(14)": lambda h, l, c, v: talib.ATR(h, l, c, 14),
    "highest(high, 20)": lambda h, l, c, v: talib.MAX(h, 20),
    "lowest(low, 20)": lambda h, l, c, v: talib.MIN(l, 20),
    "roc(close, 10)": lambda h, l, c, v: talib.ROCR(c, 10) - 1,
    "cci(14)": lambda h, l, c, v: talib.CCI(h, l, c, 14),
    "willr(14)": lambda h, l, c, v: talib.WILLR(h, l, c, 14),
    "plus_di(14)": lambda h, l, c, v: talib.PLUS_DI(h, l, c, 14),
    "minus_di(14)": lambda h, l, c, v: talib.MINUS_DI(h, l, c, 14),
    "adx(14)": lambda h, l, c, v: talib.ADX(h, l, c, 14),
    "adx(5)": lambda h, l, c, v: talib.ADX(h, l, c, 5),
    "obv()": lambda h, l, c, v: talib.OBV(c, v),
    "mfi(14)": lambda h, l, c, v: talib.MFI(h, l, c, v, 14),
    "mfi(5)": lambda h, l, c, v: talib.MFI(h, l, c, v, 5),
    "stoch_k(14, 3)": lambda h, l, c, v: talib.STOCH(h, l, c, 14, 3, 0, 3, 0)[0],
    "stoch_d(14, 3, 3)": lambda h, l, c, v: talib.STOCH(h, l, c, 14, 3, 0, 3, 0)[1],
    "stoch_k(5, 1)": lambda h, l, c, v: talib.STOCH(h, l, c, 5, 1, 0, 5, 0)[0],
    "stoch_d(5, 1, 5)": lambda h, l, c, v: talib.STOCH(h, l, c, 5, 1, 0, 5, 0)[1],
    "sar(0.02, 0.2)": lambda h, l, c, v: talib.SAR(h, l, 0.02, 0.2),
    "sar(0.05, 0.1)": lambda h, l, c, v: talib.SAR(h, l, 0.05, 0.1),
    # No TA-Lib function: the documented formulas.
    "supertrend(10, 3)": lambda h, l, c, v: supertrend(h, l, c, 10, 3.0)[0],
    "supertrend_dir(10, 3)": lambda h, l, c, v: supertrend(h, l, c, 10, 3.0)[1],
    "supertrend_dir(7, 1.5)": lambda h, l, c, v: supertrend(h, l, c, 7, 1.5)[1],
    # Conditions of exact data only: a comparison with a rounded average
    # can flip on its last bit.
    "barssince(high > shift(high, 1))": lambda h, l, c, v: barssince(h > np.r_[np.inf, h[:-1]]),
    "valuewhen(cross_above(close, shift(close, 5)), low)": lambda h, l, c, v: since(
        crossed_above(c, np.r_[np.full(5, np.nan), c[:-5]]), l, lambda kept, x: kept
    ),
    "sum_since(close > open, volume)": lambda h, l, c, v: since(c > opens(h, l, c), v, lambda s, x: s + x),
    "highest_since(close < open, high)": lambda h, l, c, v: since(c < opens(h, l, c), h, max),
    "lowest_since(close < open, low)": lambda h, l, c, v: since(c < opens(h, l, c), l, min),
    "shift(close > open, 3)": lambda h, l, c, v: np.r_[np.zeros(3), (c > opens(h, l, c))[:-3]],
}

_OPENS = {}


def opens(h, l, c):
    return _OPENS[id(c)]


def crossed_above(a, b):
    """cross_above as docs/config.md defines it: a above b now, below at the
    last bar where they differed (both defined); no memory across an
    undefined bar."""
    out, side = np.zeros(len(a), bool), 0
    for t in range(len(a)):
        if np.isnan(a[t]) or np.isnan(b[t]):
            side = 0
            continue
        now = 1 if a[t] > b[t] else -1 if a[t] < b[t] else 0
        out[t] = now == 1 and side == -1
        if now != 0:
            side = now
    return out


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("expression", list(CASES))
def test_matches_reference(name, expression):
    df = DATA[name]
    h, l, c, v = (df[k].to_numpy(dtype=float) for k in ("High", "Low", "Close", "Volume"))
    _OPENS[id(c)] = df["Open"].to_numpy(dtype=float)
    want = np.asarray(CASES[expression](h, l, c, v), dtype=float)
    got = sieve.indicator(df, expression).to_numpy()
    assert got.shape == want.shape
    missing = np.flatnonzero(np.isnan(got) & ~np.isnan(want))
    assert missing.size == 0, (expression, missing[:5])
    both = ~np.isnan(got) & ~np.isnan(want)
    assert both.sum() > len(c) // 2, expression
    err = np.abs(got[both] - want[both]) / (np.abs(want[both]) + 1)
    worst = int(np.argmax(err))
    assert err[worst] <= 1e-9, (expression, np.flatnonzero(both)[worst], got[both][worst], want[both][worst])


def test_flat_stretch_gives_talib_zeros():
    """On the synthetic flat stretch TA-Lib returns 0 for STOCH, WILLR,
    CCI and MFI, and so does sieve (not undefined)."""
    df = DATA["synthetic"]
    for expression in ("stoch_k(5, 1)", "willr(5)", "cci(5)", "mfi(5)"):
        got = sieve.indicator(df, expression).to_numpy()
        assert np.all(got[130:160] == 0.0), (expression, got[130:160])


def test_indicator_errors_and_types():
    df = DATA["synthetic"]
    got = sieve.indicator(df, "close > open")
    assert set(np.unique(got)) <= {0.0, 1.0}
    assert got.index.equals(df.index)
    with pytest.raises(sieve.RuleError, match="unknown function"):
        sieve.indicator(df, "sarr(0.02, 0.2)")
    with pytest.raises(sieve.SieveError, match="position"):
        sieve.indicator(df, "bars_held > 3")


def test_calendar_in_data_timezone():
    """`data.timezone` moves hour, weekday and new_day onto that clock
    (pandas' tz_convert is the reference); without it they are UTC."""
    index = pd.date_range("2020-03-05", periods=24 * 10, freq="h")  # across the US DST change
    df = pd.DataFrame({"Open": 1.0, "High": 2.0, "Low": 0.5, "Close": 1.5}, index=index)
    ny = index.tz_localize("UTC").tz_convert("America/New_York")
    config = {"data": {"timezone": "America/New_York"}}
    assert np.array_equal(sieve.indicator(df, "hour", config=config).to_numpy(), ny.hour)
    assert np.array_equal(sieve.indicator(df, "weekday", config=config).to_numpy(), ny.day_of_week)
    new_day = np.r_[True, ny.date[1:] != ny.date[:-1]]
    assert np.array_equal(sieve.indicator(df, "new_day", config=config).to_numpy(), new_day)
    assert np.array_equal(sieve.indicator(df, "hour").to_numpy(), index.hour)
    with pytest.raises(sieve.ConfigError, match="time zone"):
        sieve.indicator(df, "hour", config={"data": {"timezone": "Mars/Olympus"}})
