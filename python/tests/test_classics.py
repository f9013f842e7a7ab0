"""The 16 classics of examples/strategies/classics/ against references
written here: every signal from TA-Lib or pandas (not the rule language),
traded by a bar-by-bar simulator of the engine as docs/config.md states it
(fill at the next open, no fees, fractional units, stops and targets inside
the bar, `max_bars`, `size`). Every trade must match: its entry and exit
bars, prices, units and exit reason.

Real data: backtesting.py's GOOG (daily) and, for the intraday session
VWAP, its EURUSD (hourly, with volume). Needs TA-Lib and backtesting (CI
installs both) and the CLI binary only through the package.
"""

import os

import numpy as np
import pandas as pd
import pytest
import talib
from backtesting.test import EURUSD, GOOG

import sieve
from test_talib import crossed_above, since, supertrend

CLASSICS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "examples",
    "strategies",
    "classics",
)


def on_defined(f, x, *args):
    """TA-Lib's `f` over x from its first defined value (TA-Lib carries a
    leading NaN through everything)."""
    out = np.full(len(x), np.nan)
    first = int(np.flatnonzero(~np.isnan(x))[0])
    out[first:] = f(x[first:], *args)
    return out


def shift(x, n):
    return np.r_[np.full(n, np.nan), x[:-n]]


def below(a, b):
    """cross_below(a, b) is cross_above(b, a)."""
    return crossed_above(b, a)


def simulate(bars, entry, exit, stop=None, target=None, max_bars=None, size=None, max_leverage=1.0):
    """The engine as docs/config.md states it, long only, fill at the next
    open, no fees: what a close decides fills at the next open; then, for
    the open position, a stop or target the open gapped through fills at
    the open, else the stop if the low reaches it, else the target if the
    high does; then the close decides from the position held. `stop` and
    `target` are (values per bar, as a fraction?) read on the deciding
    close; `max_bars` and `size` values per bar, likewise."""
    o, h, l = bars.Open.values, bars.High.values, bars.Low.values
    n = len(o)
    on = lambda x, t: x is not None and np.isfinite(x[t]) and x[t] > 0
    trades, cash, units, pending = [], 10_000.0, 0.0, None
    for t in range(n):
        if pending is not None:
            kind, d = pending
            pending = None
            if kind == "exit":
                cash += units * o[t]
                trades[-1].update(exit_time=t, exit_price=o[t], exit_reason=d)
                units = 0.0
            else:
                fraction = min(size[d], max_leverage) if on(size, d) else 1.0
                units = fraction * cash / o[t]
                cash -= units * o[t]
                price = o[t]
                levels = []
                for spec, sign in ((stop, -1), (target, 1)):
                    if spec is not None and on(spec[0], d):
                        v = spec[0][d]
                        levels.append(price * (1 + sign * v) if spec[1] else price + sign * v)
                    else:
                        levels.append(None)
                stop_level, target_level = levels
                hold = max_bars[d] if on(max_bars, d) else None
                trades.append(dict(entry_time=t, entry_price=price, units=units, exit_time=None))
        if units:
            hit = None
            if stop_level is not None and o[t] <= stop_level:
                hit = (o[t], "stop_loss")
            elif target_level is not None and o[t] >= target_level:
                hit = (o[t], "take_profit")
            elif stop_level is not None and l[t] <= stop_level:
                hit = (stop_level, "stop_loss")
            elif target_level is not None and h[t] >= target_level:
                hit = (target_level, "take_profit")
            if hit:
                cash += units * hit[0]
                trades[-1].update(exit_time=t, exit_price=hit[0], exit_reason=hit[1])
                units = 0.0
        if t == n - 1:
            break
        if units:
            held = t - trades[-1]["entry_time"]
            if exit[t]:
                pending = ("exit", "rule")
            elif hold is not None and held >= hold:
                pending = ("exit", "max_bars")
        elif entry[t]:
            pending = ("enter", t)
    return trades


def arrays(bars):
    return tuple(bars[k].values.astype(float) for k in ("Open", "High", "Low", "Close", "Volume"))


def sma_cross(bars):
    _, _, _, c, _ = arrays(bars)
    fast, slow = talib.SMA(c, 10), talib.SMA(c, 30)
    return {"fast": 10, "slow": 30}, dict(entry=crossed_above(fast, slow), exit=below(fast, slow))


def macd(bars):
    _, _, _, c, _ = arrays(bars)
    line = talib.EMA(c, 12) - talib.EMA(c, 26)
    signal = on_defined(talib.EMA, line, 9)
    return {"fast": 12, "slow": 26, "sig": 9}, dict(entry=crossed_above(line, signal), exit=below(line, signal))


def bollinger_reversion(bars):
    _, _, _, c, _ = arrays(bars)
    _, middle, lower = talib.BBANDS(c, 20, 2, 2, 0)
    return {"n": 20, "k": 2}, dict(entry=c < lower, exit=c > middle)


def connors_rsi2(bars):
    _, _, _, c, _ = arrays(bars)
    entry = (c > talib.SMA(c, 200)) & (talib.RSI(c, 2) < 10)
    return {"trend": 200, "lo": 10}, dict(entry=entry, exit=c > talib.SMA(c, 5))


def turtle(bars):
    _, h, l, c, _ = arrays(bars)
    entry = c > shift(talib.MAX(h, 20), 1)
    exit = c < shift(talib.MIN(l, 10), 1)
    stop = (2 * talib.ATR(h, l, c, 20), False)
    return {"entry_len": 20, "exit_len": 10, "stop_atr": 2}, dict(entry=entry, exit=exit, stop=stop)


def keltner_breakout(bars):
    _, h, l, c, _ = arrays(bars)
    middle = talib.EMA(c, 20)
    return {"n": 20, "atr_n": 10, "mult": 2}, dict(entry=c > middle + 2 * talib.ATR(h, l, c, 10), exit=c < middle)


def stochastic(bars):
    _, h, l, c, _ = arrays(bars)
    k, d = talib.STOCH(h, l, c, 14, 3, 0, 3, 0)
    return {"n": 14, "lo": 20, "hi": 80}, dict(entry=crossed_above(k, d) & (k < 20), exit=below(k, d) & (k > 80))


def adx_di(bars):
    _, h, l, c, _ = arrays(bars)
    plus, minus = talib.PLUS_DI(h, l, c, 14), talib.MINUS_DI(h, l, c, 14)
    entry = crossed_above(plus, minus) & (talib.ADX(h, l, c, 14) > 25)
    return {"n": 14, "level": 25}, dict(entry=entry, exit=below(plus, minus))


def supertrend_dir(bars):
    _, h, l, c, _ = arrays(bars)
    _, direction = supertrend(h, l, c, 10, 3.0)
    return {"n": 10, "mult": 3}, dict(entry=direction > 0, exit=direction < 0)


def parabolic_sar(bars):
    _, h, l, c, _ = arrays(bars)
    sar = talib.SAR(h, l, 0.02, 0.2)
    return {"step": 0.02, "cap": 0.2}, dict(entry=c > sar, exit=c < sar)


def ichimoku(bars):
    _, h, l, c, _ = arrays(bars)
    high, low = bars.High.rolling, bars.Low.rolling
    mid = lambda n: ((high(n).max() + low(n).min()) / 2).values
    tenkan, kijun = mid(9), mid(26)
    span_a, span_b = shift((tenkan + kijun) / 2, 26), shift(mid(52), 26)
    entry = (c > np.maximum(span_a, span_b)) & (tenkan > kijun)
    return {"tenkan": 9, "kijun": 26, "senkou": 52}, dict(entry=entry, exit=c < np.minimum(span_a, span_b))


def obv_trend(bars):
    _, _, _, c, v = arrays(bars)
    obv = talib.OBV(c, v)
    average = on_defined(talib.EMA, obv, 20)
    return {"n": 20}, dict(entry=crossed_above(obv, average), exit=below(obv, average))


def take_profit_stop_loss(bars):
    _, _, _, c, _ = arrays(bars)
    fraction = lambda v: (np.full(len(c), v), True)
    entry = crossed_above(c, talib.SMA(c, 20))
    return {"n": 20, "tp": 0.1, "sl": 0.05}, dict(
        entry=entry, exit=np.zeros(len(c), bool), stop=fraction(0.05), target=fraction(0.1)
    )


def exit_after_n_bars(bars):
    _, _, _, c, _ = arrays(bars)
    entry = c < shift(talib.MIN(c, 10), 1)
    return {"look": 10, "hold": 5}, dict(entry=entry, exit=np.zeros(len(c), bool), max_bars=np.full(len(c), 5.0))


def session_vwap(bars):
    _, _, _, c, v = arrays(bars)
    day = bars.index.normalize()
    new_day = np.r_[True, day[1:] != day[:-1]]
    add = lambda s, x: s + x
    vwap = since(new_day, c * v, add) / since(new_day, v, add)
    hour = bars.index.hour.values
    return {"k": 0.001, "last_hour": 20}, dict(
        entry=(c < vwap * (1 - 0.001)) & (hour < 20), exit=(c > vwap) | (hour >= 20)
    )


def vol_target_trend(bars):
    _, _, _, c, _ = arrays(bars)
    returns = np.r_[np.nan, c[1:] / c[:-1] - 1]
    size = 0.01 / on_defined(talib.STDDEV, returns, 20, 1)
    trend = talib.SMA(c, 100)
    return {"trend": 100, "target": 0.01}, dict(entry=c > trend, exit=c < trend, size=size, max_leverage=2.0)


REFERENCES = {
    "sma_cross": (GOOG, sma_cross),
    "macd": (GOOG, macd),
    "bollinger_reversion": (GOOG, bollinger_reversion),
    "connors_rsi2": (GOOG, connors_rsi2),
    "turtle": (GOOG, turtle),
    "keltner_breakout": (GOOG, keltner_breakout),
    "stochastic": (GOOG, stochastic),
    "adx_di": (GOOG, adx_di),
    "supertrend": (GOOG, supertrend_dir),
    "parabolic_sar": (GOOG, parabolic_sar),
    "ichimoku": (GOOG, ichimoku),
    "obv_trend": (GOOG, obv_trend),
    "take_profit_stop_loss": (GOOG, take_profit_stop_loss),
    "exit_after_n_bars": (GOOG, exit_after_n_bars),
    "session_vwap": (EURUSD, session_vwap),
    "vol_target_trend": (GOOG, vol_target_trend),
}


def test_every_classic_has_a_reference():
    files = sorted(f[: -len(".toml")] for f in os.listdir(CLASSICS) if f.endswith(".toml"))
    assert files == sorted(REFERENCES)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_classic_matches_its_reference_trade_by_trade(name):
    bars, reference = REFERENCES[name]
    params, signals = reference(bars)
    want = simulate(bars, **signals)
    got = sieve.backtest(bars, None, params, config=os.path.join(CLASSICS, name + ".toml"), trades=True)["trades"]
    assert len(want) >= 5, "a reference with trades to compare"
    assert len(got) == len(want), (len(got), len(want))
    times = bars.index
    for i, (ours, ref) in enumerate(zip(got.itertuples(), want)):
        where = "%s trade %d" % (name, i)
        assert ours.entry_time == times[ref["entry_time"]], where
        assert ours.entry_price == ref["entry_price"], where
        assert abs(ours.units - ref["units"]) <= 1e-9 * ref["units"], where
        if ref["exit_time"] is None:
            assert ours.status == "open", where
            continue
        assert ours.exit_time == times[ref["exit_time"]], where
        assert abs(ours.exit_price - ref["exit_price"]) <= 1e-12 * ref["exit_price"], where
        assert ours.exit_reason == ref["exit_reason"], where
