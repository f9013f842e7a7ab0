"""The 18 classics of examples/strategies/classics/ against references
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


def simulate(bars, entry, exit, stop=None, target=None, max_bars=None, size=None, max_leverage=1.0, moving=None):
    """The engine as docs/config.md states it, long only, fill at the next
    open, no fees: what a close decides fills at the next open; then, for
    the open position, a stop or target the open gapped through fills at
    the open, else the stop if the low reaches it, else the target if the
    high does; then the close decides from the position held. `stop` and
    `target` are (values per bar, as a fraction?) read on the deciding
    close; `max_bars` and `size` values per bar, likewise; `moving`: a
    stop level per bar, read on every close of the trade that does not
    exit, moving the stop up only."""
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
            elif on(moving, t) and (stop_level is None or moving[t] > stop_level):
                stop_level = moving[t]
                trades[-1]["moved"] = True
        elif entry[t]:
            pending = ("enter", t)
    for trade in trades:
        if trade.get("moved") and trade.get("exit_reason") == "stop_loss":
            trade["exit_reason"] = "stop_level"
    return trades


def simulate_turtle(bars, flat_level, add_step, exit, stop, max_entries, size):
    """The original Turtle as docs/config.md states entry orders and
    pyramiding, long only, no fees: on each close while flat a buy stop at
    `flat_level` for the next bar (filled at max(open, level) when the high
    reaches it; its stop not checked on that bar); while held with fewer
    than `max_entries` entries, an add stop at the last entry's price +
    `add_step` (filled inside the next bar after that bar's stop check); a
    rule exit at the next open. Each entry commits `size` × equity at its
    fill (within 1 × equity for the whole position); the position's stop is
    the last entry's price − `stop` of its deciding bar. One trade per
    entry."""
    o, h, l, c = (bars[k].values for k in ("Open", "High", "Low", "Close"))
    trades, cash, units, order, leave, stop_at, since = [], 10_000.0, 0.0, None, False, None, None
    n = len(o)
    for t in range(n):
        open_units = [tr for tr in trades if tr["exit_time"] is None]
        if leave:
            cash += units * o[t]
            for tr in open_units:
                tr.update(exit_time=t, exit_price=o[t], exit_reason="rule")
            units, leave, open_units = 0.0, False, []
        filled_here = False
        if order is not None and not units:
            level, d = order
            order = None
            if h[t] >= level:
                price = max(o[t], level)
                u = size * cash / price
                cash -= u * price
                units, stop_at, since, filled_here = u, price - stop[d], t, True
                trades.append(dict(entry_time=t, entry_price=price, units=u, exit_time=None))
        if units and not filled_here:
            hit = None
            if o[t] <= stop_at:
                hit = o[t]
            elif l[t] <= stop_at:
                hit = stop_at
            if hit is not None:
                cash += units * hit
                for tr in trades:
                    if tr["exit_time"] is None:
                        tr.update(exit_time=t, exit_price=hit, exit_reason="stop_loss")
                units, order = 0.0, None
            elif order is not None:
                level, d = order
                order = None
                if h[t] >= level:
                    price = max(o[t], level)
                    equity = cash + units * price
                    fraction = min(size, 1.0 - units * price / equity)
                    if fraction > 0:
                        u = fraction * equity / price
                        cash -= u * price
                        units += u
                        stop_at = price - stop[d]
                        trades.append(dict(entry_time=t, entry_price=price, units=u, exit_time=None))
        order = None
        if t == n - 1:
            break
        if units:
            if exit[t]:
                leave = True
            else:
                held = [tr for tr in trades if tr["exit_time"] is None]
                level = held[-1]["entry_price"] + add_step[t]
                if len(held) < max_entries and np.isfinite(level) and level > 0:
                    order = (level, t)
        elif np.isfinite(flat_level[t]) and flat_level[t] > 0:
            order = (flat_level[t], t)
    return trades


def arrays(bars):
    return tuple(bars[k].values.astype(float) for k in ("Open", "High", "Low", "Close", "Volume"))


def sma_cross(bars, p):
    _, _, _, c, _ = arrays(bars)
    fast, slow = talib.SMA(c, p["fast"]), talib.SMA(c, p["slow"])
    return dict(entry=crossed_above(fast, slow), exit=below(fast, slow))


def macd(bars, p):
    _, _, _, c, _ = arrays(bars)
    line = talib.EMA(c, p["fast"]) - talib.EMA(c, p["slow"])
    signal = on_defined(talib.EMA, line, p["sig"])
    return dict(entry=crossed_above(line, signal), exit=below(line, signal))


def bollinger_reversion(bars, p):
    _, _, _, c, _ = arrays(bars)
    _, middle, lower = talib.BBANDS(c, p["n"], p["k"], p["k"], 0)
    return dict(entry=c < lower, exit=c > middle)


def connors_rsi2(bars, p):
    _, _, _, c, _ = arrays(bars)
    entry = (c > talib.SMA(c, p["trend"])) & (talib.RSI(c, 2) < p["lo"])
    return dict(entry=entry, exit=c > talib.SMA(c, 5))


def turtle(bars, p):
    _, h, l, c, _ = arrays(bars)
    entry = c > shift(talib.MAX(h, p["entry_len"]), 1)
    exit = c < shift(talib.MIN(l, p["exit_len"]), 1)
    stop = (p["stop_atr"] * talib.ATR(h, l, c, 20), False)
    return dict(entry=entry, exit=exit, stop=stop)


def turtle_original(bars, p):
    _, h, l, c, _ = arrays(bars)
    atr = talib.ATR(h, l, c, 20)
    return dict(
        simulator=simulate_turtle,
        flat_level=talib.MAX(h, p["entry_len"]),
        add_step=0.5 * atr,
        exit=c < shift(talib.MIN(l, p["exit_len"]), 1),
        stop=p["stop_atr"] * atr,
        max_entries=4,
        size=0.25,
    )


def chandelier(bars, p):
    _, h, l, c, _ = arrays(bars)
    entry = (c > shift(talib.MAX(h, p["n"]), 1)) & (c > talib.SMA(c, 200))
    return dict(entry=entry, exit=c < talib.SMA(c, 100), moving=talib.MAX(h, 22) - p["k"] * talib.ATR(h, l, c, 22))


def keltner_breakout(bars, p):
    _, h, l, c, _ = arrays(bars)
    middle = talib.EMA(c, p["n"])
    return dict(entry=c > middle + p["mult"] * talib.ATR(h, l, c, p["atr_n"]), exit=c < middle)


def stochastic(bars, p):
    _, h, l, c, _ = arrays(bars)
    k, d = talib.STOCH(h, l, c, p["n"], 3, 0, 3, 0)
    return dict(entry=crossed_above(k, d) & (k < p["lo"]), exit=below(k, d) & (k > p["hi"]))


def adx_di(bars, p):
    _, h, l, c, _ = arrays(bars)
    plus, minus = talib.PLUS_DI(h, l, c, p["n"]), talib.MINUS_DI(h, l, c, p["n"])
    entry = crossed_above(plus, minus) & (talib.ADX(h, l, c, p["n"]) > p["level"])
    return dict(entry=entry, exit=below(plus, minus))


def supertrend_dir(bars, p):
    _, h, l, c, _ = arrays(bars)
    _, direction = supertrend(h, l, c, p["n"], float(p["mult"]))
    return dict(entry=direction > 0, exit=direction < 0)


def parabolic_sar(bars, p):
    _, h, l, c, _ = arrays(bars)
    sar = talib.SAR(h, l, p["step"], p["cap"])
    return dict(entry=c > sar, exit=c < sar)


def ichimoku(bars, p):
    _, h, l, c, _ = arrays(bars)
    high, low = bars.High.rolling, bars.Low.rolling
    mid = lambda n: ((high(n).max() + low(n).min()) / 2).values
    tenkan, kijun = mid(p["tenkan"]), mid(p["kijun"])
    span_a, span_b = shift((tenkan + kijun) / 2, p["kijun"]), shift(mid(p["senkou"]), p["kijun"])
    entry = (c > np.maximum(span_a, span_b)) & (tenkan > kijun)
    return dict(entry=entry, exit=c < np.minimum(span_a, span_b))


def obv_trend(bars, p):
    _, _, _, c, v = arrays(bars)
    obv = talib.OBV(c, v)
    average = on_defined(talib.EMA, obv, p["n"])
    return dict(entry=crossed_above(obv, average), exit=below(obv, average))


def take_profit_stop_loss(bars, p):
    _, _, _, c, _ = arrays(bars)
    fraction = lambda v: (np.full(len(c), v), True)
    entry = crossed_above(c, talib.SMA(c, p["n"]))
    return dict(entry=entry, exit=np.zeros(len(c), bool), stop=fraction(p["sl"]), target=fraction(p["tp"]))


def exit_after_n_bars(bars, p):
    _, _, _, c, _ = arrays(bars)
    entry = c < shift(talib.MIN(c, p["look"]), 1)
    return dict(entry=entry, exit=np.zeros(len(c), bool), max_bars=np.full(len(c), float(p["hold"])))


def session_vwap(bars, p):
    _, _, _, c, v = arrays(bars)
    day = bars.index.normalize()
    new_day = np.r_[True, day[1:] != day[:-1]]
    add = lambda s, x: s + x
    vwap = since(new_day, c * v, add) / since(new_day, v, add)
    hour = bars.index.hour.values
    last = p["last_hour"]
    return dict(entry=(c < vwap * (1 - p["k"])) & (hour < last), exit=(c > vwap) | (hour >= last))


def vol_target_trend(bars, p):
    _, _, _, c, _ = arrays(bars)
    returns = np.r_[np.nan, c[1:] / c[:-1] - 1]
    size = p["target"] / on_defined(talib.STDDEV, returns, 20, 1)
    trend = talib.SMA(c, p["trend"])
    return dict(entry=c > trend, exit=c < trend, size=size, max_leverage=2.0)


# Each classic's usual parameters first, then another setting (a turtle
# 55/20 with a 1-ATR stop, a 5 %/2 % bracket, a vol target whose size
# reaches the leverage cap, …).
REFERENCES = {
    "sma_cross": (GOOG, sma_cross, [{"fast": 10, "slow": 30}, {"fast": 20, "slow": 100}]),
    "macd": (GOOG, macd, [{"fast": 12, "slow": 26, "sig": 9}, {"fast": 8, "slow": 21, "sig": 5}]),
    "bollinger_reversion": (GOOG, bollinger_reversion, [{"n": 20, "k": 2}, {"n": 10, "k": 1.5}]),
    "connors_rsi2": (GOOG, connors_rsi2, [{"trend": 200, "lo": 10}, {"trend": 100, "lo": 20}]),
    "turtle": (GOOG, turtle, [{"entry_len": 20, "exit_len": 10, "stop_atr": 2}, {"entry_len": 55, "exit_len": 20, "stop_atr": 1}]),
    "turtle_original": (GOOG, turtle_original, [{"entry_len": 20, "exit_len": 10, "stop_atr": 2}, {"entry_len": 55, "exit_len": 20, "stop_atr": 1}]),
    "chandelier": (GOOG, chandelier, [{"n": 50, "k": 3.0}, {"n": 20, "k": 2.0}]),
    "keltner_breakout": (GOOG, keltner_breakout, [{"n": 20, "atr_n": 10, "mult": 2}, {"n": 10, "atr_n": 20, "mult": 1.5}]),
    "stochastic": (GOOG, stochastic, [{"n": 14, "lo": 20, "hi": 80}, {"n": 5, "lo": 30, "hi": 70}]),
    "adx_di": (GOOG, adx_di, [{"n": 14, "level": 25}, {"n": 7, "level": 20}]),
    "supertrend": (GOOG, supertrend_dir, [{"n": 10, "mult": 3}, {"n": 7, "mult": 2}]),
    "parabolic_sar": (GOOG, parabolic_sar, [{"step": 0.02, "cap": 0.2}, {"step": 0.01, "cap": 0.1}]),
    "ichimoku": (GOOG, ichimoku, [{"tenkan": 9, "kijun": 26, "senkou": 52}, {"tenkan": 7, "kijun": 22, "senkou": 44}]),
    "obv_trend": (GOOG, obv_trend, [{"n": 20}, {"n": 50}]),
    "take_profit_stop_loss": (GOOG, take_profit_stop_loss, [{"n": 20, "tp": 0.1, "sl": 0.05}, {"n": 50, "tp": 0.05, "sl": 0.02}]),
    "exit_after_n_bars": (GOOG, exit_after_n_bars, [{"look": 10, "hold": 5}, {"look": 5, "hold": 3}]),
    "session_vwap": (EURUSD, session_vwap, [{"k": 0.001, "last_hour": 20}, {"k": 0.0005, "last_hour": 16}]),
    "vol_target_trend": (GOOG, vol_target_trend, [{"trend": 100, "target": 0.01}, {"trend": 50, "target": 0.02}]),
}


def test_every_classic_has_a_reference():
    files = sorted(f[: -len(".toml")] for f in os.listdir(CLASSICS) if f.endswith(".toml"))
    assert files == sorted(REFERENCES)


@pytest.mark.parametrize("setting", [0, 1], ids=["usual", "other"])
@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_classic_matches_its_reference_trade_by_trade(name, setting):
    bars, reference, settings = REFERENCES[name]
    params = settings[setting]
    signals = reference(bars, params)
    want = signals.pop("simulator", simulate)(bars, **signals)
    got = sieve.backtest(bars, None, params, config=os.path.join(CLASSICS, name + ".toml"), trades=True)["trades"]
    assert len(want) >= 5, "a reference with trades to compare"
    assert len(got) == len(want), (len(got), len(want))
    times = bars.index
    for i, (ours, ref) in enumerate(zip(got.itertuples(), want)):
        where = "%s trade %d" % (name, i)
        assert ours.entry_time == times[ref["entry_time"]], where
        # (A stop entry's level is an ATR's arithmetic: to the last bits.)
        assert abs(ours.entry_price - ref["entry_price"]) <= 1e-12 * ref["entry_price"], where
        assert abs(ours.units - ref["units"]) <= 1e-9 * ref["units"], where
        if ref["exit_time"] is None:
            assert ours.status == "open", where
            continue
        assert ours.exit_time == times[ref["exit_time"]], where
        assert abs(ours.exit_price - ref["exit_price"]) <= 1e-12 * ref["exit_price"], where
        assert ours.exit_reason == ref["exit_reason"], where


def test_the_leverage_cap_binds_in_the_vol_target_case():
    # The second vol-target setting sizes some trades above max_leverage:
    # the cap is exercised, not only the plain fraction.
    signals = vol_target_trend(GOOG, {"trend": 50, "target": 0.02})
    entries = np.flatnonzero(signals["entry"])
    assert (signals["size"][entries] > 2.0).any()


def test_the_original_turtle_pyramids_and_stops():
    # The comparison above covers positions of several units, some full
    # (4 units), and exits by both the stop and the rule.
    got = sieve.backtest(GOOG, None, {"entry_len": 20, "exit_len": 10, "stop_atr": 2},
                         config=os.path.join(CLASSICS, "turtle_original.toml"), trades=True)["trades"]
    units_per_exit = got.groupby("exit_time").size()
    assert units_per_exit.max() == 4 and (units_per_exit == 1).any()
    assert {"stop_loss", "rule"} <= set(got.exit_reason)
    assert set(got.entry_reason) == {"entry_stop", "add_stop"}
