"""``sieve.backtest_signals(dict_of_frames, ..., portfolio=True)`` against
vectorbt's ``Portfolio.from_signals`` with one account for every
instrument (``group_by=True, cash_sharing=True``), on five instruments with
different calendars (two trade every day, three miss random days).

vectorbt fills an order on the bar its signal sits on; sieve fills at the
instrument's next open. So vectorbt gets each instrument's signals shifted
one bar within that instrument's own bars, then reindexed to the union of
the times (a missing bar has no price: no order), ``price = open``:

| sieve                                    | vectorbt                            |
|------------------------------------------|-------------------------------------|
| `size = s`, `size_of = "cash"`           | `size = s`, `size_type = "percent"` |
| exits, then entries in instrument order  | `call_seq = "auto"` (same sizes)    |
| `rank=` values, highest first            | `call_seq=` exits, then by rank     |
| `fee`, `slippage`, `initial_cash`        | `fees`, `slippage`, `init_cash`     |

Every order must match (time, instrument, side, price and units to 1e-9
relative), and the portfolio's value at every time (1e-9 relative).
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import vectorbt as vbt

import sieve

FEE, SLIPPAGE, CASH = 0.001, 0.0005, 10_000.0
NAMES = ["A", "B", "C", "D", "E"]


def market(seed=3, days=300):
    rng = np.random.default_rng(seed)
    every = pd.date_range("2020-01-01", periods=days, freq="D")
    frames = {}
    for k, name in enumerate(NAMES):
        index = every[rng.random(days) > 0.15] if k % 2 else every
        close = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, len(index))))
        open_ = close * np.exp(rng.normal(0, 0.005, len(index)))
        frames[name] = pd.DataFrame(
            {"open": open_, "high": np.maximum(open_, close) * 1.01, "low": np.minimum(open_, close) * 0.99, "close": close},
            index=index,
        )
    signals = [
        pd.DataFrame({n: pd.Series(rng.random(len(f)) < 0.08, index=f.index) for n, f in frames.items()})
        .reindex(every)
        .fillna(False)
        .astype(bool)
        for _ in range(2)
    ]
    rank = pd.DataFrame({n: pd.Series(rng.integers(0, 3, len(f)).astype(float), index=f.index) for n, f in frames.items()}).reindex(every)
    return every, frames, signals[0], signals[1], rank


def wide(frames, every, column):
    return pd.DataFrame({n: f[column] for n, f in frames.items()}).reindex(every)


def shifted(signal, frames, every):
    """Each instrument's signals one of its own bars later, on the union."""
    return (
        pd.DataFrame({n: signal[n].reindex(f.index).shift(1, fill_value=False) for n, f in frames.items()})
        .reindex(every)
        .fillna(False)
        .astype(bool)
    )


def orders_of(out, frames):
    """sieve's trades as vectorbt's order list: (time, instrument, side,
    price, units), buys and sells, sorted like vectorbt's records."""
    rows = []
    for t in out["trades"].itertuples():
        opening, closing = ("Buy", "Sell") if t.side == "long" else ("Sell", "Buy")
        rows.append((t.entry_time, t.instrument, opening, t.entry_price, t.units))
        if not pd.isna(t.exit_time):
            rows.append((t.exit_time, t.instrument, closing, t.exit_price, t.units))
    return rows


def assert_same(out, pf, frames):
    assert_orders_and_value(out, pf, least=20)
    # Gross exposure: the positions' value over the portfolio's.
    np.testing.assert_allclose(out["exposure"].to_numpy(), pf.gross_exposure().to_numpy(), rtol=1e-9, atol=1e-12)


def assert_orders_and_value(out, pf, least=40):
    """sieve's trades as orders equal vectorbt's (time, instrument, side,
    price and units to 1e-9), more than `least` of them, and the value at
    every time."""
    ours = sorted(orders_of(out, None), key=lambda r: (r[0], r[1], r[2]))
    theirs = sorted(
        ((r.Timestamp, r.Column, r.Side, r.Price, r.Size) for r in pf.orders.records_readable.itertuples()),
        key=lambda r: (r[0], r[1], r[2]),
    )
    assert len(ours) == len(theirs) > least
    for a, b in zip(ours, theirs):
        assert a[:3] == b[:3], (a, b)
        assert a[3] == pytest.approx(b[3], rel=1e-9), (a, b)
        assert a[4] == pytest.approx(b[4], rel=1e-9), (a, b)
    value = pf.value()
    assert list(out["equity"].index) == list(value.index)
    np.testing.assert_allclose(out["equity"].to_numpy(), value.to_numpy(), rtol=1e-9)


def assert_same_weight_orders(out, pf, least=30):
    """backtest_weights' orders equal vectorbt's from_orders (time,
    instrument, signed units, price and fee), and the value at every time."""
    theirs = sorted((r.Timestamp, r.Column, r.Size if r.Side == "Buy" else -r.Size, r.Price, r.Fees) for r in pf.orders.records_readable.itertuples())
    ours = sorted((r.time, r.instrument, r.units, r.price, r.fee) for r in out["orders"].itertuples())
    assert len(ours) == len(theirs) > least
    for a, b in zip(ours, theirs):
        assert a[:2] == b[:2], (a, b)
        for x, y in zip(a[2:], b[2:]):
            assert x == pytest.approx(y, rel=1e-9, abs=1e-9), (a, b)
    np.testing.assert_allclose(out["equity"].to_numpy(), pf.value().to_numpy(), rtol=1e-9)


def vectorbt_run(frames, every, entries, exits, size, call_seq="auto"):
    o = wide(frames, every, "open")
    return vbt.Portfolio.from_signals(
        close=wide(frames, every, "close"),
        entries=shifted(entries, frames, every),
        exits=shifted(exits, frames, every),
        price=o,
        open=o,
        high=wide(frames, every, "high"),
        low=wide(frames, every, "low"),
        size=size,
        size_type="percent",
        group_by=True,
        cash_sharing=True,
        call_seq=call_seq,
        fees=FEE,
        slippage=SLIPPAGE,
        init_cash=CASH,
    )


CONFIG = {"backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH}}


@pytest.mark.parametrize("size", [0.3, 1.0])
def test_shared_cash_equals_vectorbt(size):
    every, frames, entries, exits, _ = market()
    out = sieve.backtest_signals(frames, entries, exits, portfolio=True, size=size, size_of="cash", config=CONFIG)
    assert_same(out, vectorbt_run(frames, every, entries, exits, size), frames)
    # The instruments' contributions add up to the portfolio's gain.
    assert list(out["contribution"].index) == NAMES
    assert out["contribution"].sum() == pytest.approx(out["equity"].iloc[-1] - CASH, rel=1e-9)


def test_rank_equals_vectorbt_with_its_call_sequence():
    every, frames, entries, exits, rank = market(seed=8)
    size = 0.4
    out = sieve.backtest_signals(frames, entries, exits, portfolio=True, size=size, size_of="cash", rank=rank, config=CONFIG)
    # vectorbt's per-row order: the exits, then the entries by rank
    # (decided on the instrument's bar before), highest first, ties in
    # instrument order.
    e, x = shifted(entries, frames, every), shifted(exits, frames, every)
    decided = pd.DataFrame({n: rank[n].reindex(f.index).shift(1) for n, f in frames.items()}).reindex(every)
    seq = np.empty((len(every), len(NAMES)), dtype=np.int64)
    for i in range(len(every)):
        def key(c):
            exiting = bool(x.iat[i, c]) and not bool(e.iat[i, c])
            r = decided.iat[i, c]
            return (0 if exiting else 1, -(r if r == r else -np.inf), c)
        seq[i] = sorted(range(len(NAMES)), key=key)
    assert_same(out, vectorbt_run(frames, every, entries, exits, size, call_seq=seq), frames)


def test_a_portfolio_of_one_equals_the_single_backtest():
    every, frames, entries, exits, _ = market()
    one = {"A": frames["A"]}
    out = sieve.backtest_signals(one, entries[["A"]], exits[["A"]], portfolio=True, size=1.0, size_of="cash", config=CONFIG)
    single = sieve.backtest_signals(
        frames["A"], entries["A"].reindex(frames["A"].index), exits["A"].reindex(frames["A"].index), equity=True, config=CONFIG
    )
    np.testing.assert_allclose(out["equity"].to_numpy(), single["equity"].iloc[:, 0].to_numpy(), rtol=1e-12)


def test_portfolio_needs_a_dict_and_a_column_per_instrument():
    every, frames, entries, exits, _ = market()
    with pytest.raises(sieve.DataError, match="dict of DataFrames"):
        sieve.backtest_signals(frames["A"], entries, exits, portfolio=True)
    with pytest.raises(sieve.DataError, match="no column for instrument 'E'"):
        sieve.backtest_signals(frames, entries.drop(columns="E"), exits, portfolio=True)
    with pytest.raises(TypeError, match="stop_loss"):
        sieve.backtest_signals(frames, entries, exits, portfolio=True, stop_loss=0.05)


def simulate(frames, entries, exits, rank, size, size_of, max_positions):
    """An independent simulator written from docs/config.md's
    "Portfolios" section, plainly, a time and an instrument at a time."""
    names = list(frames)
    times = sorted(set().union(*[set(f.index) for f in frames.values()]))
    units = {n: 0.0 for n in names}
    last_close = {n: 0.0 for n in names}
    cash = value = CASH
    equity, trades = [], 0
    for now in times:
        leaving, joining = [], []
        for k, n in enumerate(names):
            f = frames[n]
            if now not in f.index:
                continue
            at = f.index.get_loc(now)
            if at == 0:
                continue
            decided = f.index[at - 1]
            e, x = bool(entries.at[decided, n]), bool(exits.at[decided, n])
            if x and not e and units[n] > 0:
                leaving.append(n)
            elif e and not x and units[n] == 0:
                r = rank.at[decided, n] if rank is not None else 0.0
                joining.append((0 if r == r else 1, -(r if r == r else 0.0), k, n))
        # The largest position first.
        for n in sorted(leaving, key=lambda n: -units[n] * frames[n].at[now, "open"]):
            price = frames[n].at[now, "open"] * (1 - SLIPPAGE)
            cash += units[n] * price - units[n] * price * FEE
            units[n] = 0.0
        held = sum(1 for n in names if units[n] > 0)
        for *_, n in sorted(joining):
            if max_positions is not None and held >= max_positions:
                continue
            commit = min(size * (cash if size_of == "cash" else value), cash)
            price = frames[n].at[now, "open"] * (1 + SLIPPAGE)
            u = commit / (price * (1 + FEE))
            if u > 0:
                cash -= u * price + u * price * FEE
                units[n] = u
                held += 1
                trades += 1
        for n in names:
            if now in frames[n].index:
                last_close[n] = frames[n].at[now, "close"]
        value = cash + sum(units[n] * last_close[n] for n in names)
        equity.append(value)
    return np.array(equity), trades


@pytest.mark.parametrize(
    "size, size_of, max_positions, ranked",
    [(0.5, "equity", 2, True), (0.25, "equity", None, False), (0.6, "cash", 3, True), (1.0, "equity", 1, False)],
)
def test_position_limits_and_equity_sizing_equal_a_plain_simulator(size, size_of, max_positions, ranked):
    every, frames, entries, exits, rank = market(seed=11, days=200)
    out = sieve.backtest_signals(
        frames, entries, exits, portfolio=True, size=size, size_of=size_of, max_positions=max_positions,
        rank=rank if ranked else None, config=CONFIG,
    )
    want, trades = simulate(frames, entries, exits, rank if ranked else None, size, size_of, max_positions)
    np.testing.assert_allclose(out["equity"].to_numpy(), want, rtol=1e-9)
    assert len(out["trades"]) == trades > 5
    if max_positions is not None:
        assert out["positions"].max() == max_positions


def test_target_weights_equal_vectorbt_from_orders():
    every, frames, _, _, _ = market(seed=21, days=260)
    rng = np.random.default_rng(4)
    # Every 20th day of the union, random weights summing to at most 1
    # (some instruments 0), decided at that day's close; NaN otherwise.
    weights = pd.DataFrame(np.nan, index=every, columns=NAMES)
    for day in every[::20]:
        w = rng.random(len(NAMES)) * (rng.random(len(NAMES)) < 0.7)
        weights.loc[day] = w / max(w.sum(), 1e-9) * rng.uniform(0.5, 1.0)
    out = sieve.backtest_weights(frames, weights, config=CONFIG)
    # vectorbt: each instrument's weights one of its own bars later.
    W = pd.DataFrame({n: weights[n].reindex(f.index).shift(1) for n, f in frames.items()}).reindex(every)
    o, c = wide(frames, every, "open"), wide(frames, every, "close")
    pf = vbt.Portfolio.from_orders(
        close=c, size=W, size_type="targetpercent", price=o, val_price=o.fillna(c.ffill()),
        group_by=True, cash_sharing=True, call_seq="auto", fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert_same_weight_orders(out, pf)


def test_negative_weights_are_refused_naming_the_instrument():
    every, frames, _, _, _ = market()
    weights = pd.DataFrame(0.1, index=every, columns=NAMES)
    weights.iloc[5, 2] = -0.2
    with pytest.raises(sieve.DataError, match="instrument 'C' at .*-0.2"):
        sieve.backtest_weights(frames, weights)


def test_instruments_that_share_no_time_are_refused():
    every, frames, entries, exits, _ = market()
    later = frames["B"].copy()
    later.index = later.index + pd.Timedelta(days=400)
    apart = {"A": frames["A"], "B": later}
    union = frames["A"].index.union(later.index)
    e = pd.DataFrame(False, index=union, columns=["A", "B"])
    with pytest.raises(sieve.DataError, match="share no time: 'A' ends at 2020-10-26 before 'B' starts"):
        sieve.backtest_signals(apart, e, e, portfolio=True)
    with pytest.raises(sieve.DataError, match="share no time"):
        sieve.backtest_weights(apart, e.astype(float))


def test_arguments_and_indexes_are_checked():
    every, frames, entries, exits, _ = market()
    for bad in (float("nan"), 0, -0.5, "0.5"):
        with pytest.raises(sieve.ParameterError, match="size"):
            sieve.backtest_signals(frames, entries, exits, portfolio=True, size=bad)
    for bad in (0, -1, 1.7):
        with pytest.raises(sieve.ParameterError, match="max_positions"):
            sieve.backtest_signals(frames, entries, exits, portfolio=True, max_positions=bad)
    # Every bar of every instrument needs its row: half the rows missing,
    # or a plain index, is an error rather than signals read as False.
    with pytest.raises(sieve.DataError, match="lacks .* of the bars of instrument 'A'"):
        sieve.backtest_signals(frames, entries.iloc[::2], exits, portfolio=True)
    with pytest.raises(sieve.DataError, match="DatetimeIndex"):
        sieve.backtest_signals(frames, entries.reset_index(drop=True), exits, portfolio=True)
    twice = pd.concat([entries, entries[["A"]]], axis=1)
    with pytest.raises(sieve.DataError, match="column 'A' appears twice"):
        sieve.backtest_signals(frames, twice, exits, portfolio=True)
    with pytest.raises(sieve.SieveError, match="lot_size"):
        sieve.backtest_weights(frames, entries.astype(float), config={"backtest": {"lot_size": 1}})


def test_open_trades_are_marked_at_the_last_close():
    every, frames, entries, exits, _ = market()
    never = exits & False
    out = sieve.backtest_signals(frames, entries, never, portfolio=True, size=0.2, size_of="cash", config=CONFIG)
    assert len(out["trades"]) > 0
    for t in out["trades"].itertuples():
        assert pd.isna(t.exit_time)
        last = frames[t.instrument]["close"].iloc[-1]
        assert t.pnl == pytest.approx(t.units * (last - t.entry_price) - t.fees, rel=1e-9)


def test_a_portfolio_call_does_not_warn_about_per_instrument_scoring():
    import warnings

    every, frames, entries, exits, _ = market()
    with warnings.catch_warnings():
        warnings.simplefilter("error", sieve.SieveWarning)
        sieve.backtest_signals(frames, entries, exits, portfolio=True)
        sieve.backtest_weights(frames, entries.astype(float) * 0.1)


def crossings(frames, every, fast, slow):
    """sma_cross's signals written from its docs in pandas: an entry where
    SMA(fast) crosses above SMA(slow), an exit where it crosses below."""
    up, down = {}, {}
    for n, f in frames.items():
        a, b = f["close"].rolling(fast).mean(), f["close"].rolling(slow).mean()
        defined = a.notna() & b.notna() & a.shift(1).notna() & b.shift(1).notna()
        up[n] = defined & (a > b) & (a.shift(1) <= b.shift(1))
        down[n] = defined & (a < b) & (a.shift(1) >= b.shift(1))
    as_frame = lambda d: pd.DataFrame(d).reindex(every).fillna(False).astype(bool)
    return as_frame(up), as_frame(down)


@pytest.mark.parametrize("size", [0.3, 1.0])
def test_a_config_portfolio_equals_vectorbt(size):
    """`[portfolio]` through `sieve.backtest`: each instrument runs
    sma_cross on its own bars, its entries and exits trade from one
    account; vectorbt gets the same crossings computed in pandas."""
    every, frames, *_ = market()
    config = {
        "backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH},
        "portfolio": {"size": size, "size_of": "cash"},
    }
    out = sieve.backtest(frames, "sma_cross", {"fast": 5, "slow": 20}, config, equity=True, trades=True)
    entries, exits = crossings(frames, every, 5, 20)
    pf = vectorbt_run(frames, every, entries, exits, size)
    ours = sorted(orders_of(out, frames), key=lambda r: (r[0], r[1], r[2]))
    theirs = sorted(
        ((r.Timestamp, r.Column, r.Side, r.Price, r.Size) for r in pf.orders.records_readable.itertuples()),
        key=lambda r: (r[0], r[1], r[2]),
    )
    assert len(ours) == len(theirs) > 20
    for a, b in zip(ours, theirs):
        assert a[:3] == b[:3], (a, b)
        assert a[3] == pytest.approx(b[3], rel=1e-9), (a, b)
        assert a[4] == pytest.approx(b[4], rel=1e-9), (a, b)
    value = pf.value()
    assert list(out["equity"].index) == list(value.index)
    np.testing.assert_allclose(out["equity"].to_numpy(), value.to_numpy(), rtol=1e-9)
    assert out["windows"]["full"]["total_return"] == pytest.approx(value.iloc[-1] / CASH - 1, rel=1e-9)


# Real daily data on three calendars (tests/data/portfolio/SOURCE.md): US
# ETFs and a stock (weekdays less US holidays), Bitcoin (every day) and the
# Shanghai Composite (weekdays less Chinese holidays), 2015-2018.
REAL = Path(__file__).resolve().parents[2] / "tests" / "data" / "portfolio"
TICKERS = ["SPY", "QQQ", "AAPL", "BTCUSD", "SSEC"]


def real_market():
    frames = {t: pd.read_csv(REAL / f"{t}.csv", index_col="date", parse_dates=True) for t in TICKERS}
    every = frames[TICKERS[0]].index
    for f in frames.values():
        every = every.union(f.index)
    return every, frames


def call_seq_by_rank(entries, exits, rank, frames, every):
    """vectorbt's per-row order for sieve's: the exits, then the entries by
    rank (decided on the instrument's bar before), highest first, ties in
    instrument order."""
    e, x = shifted(entries, frames, every), shifted(exits, frames, every)
    decided = pd.DataFrame({n: rank[n].reindex(f.index).shift(1) for n, f in frames.items()}).reindex(every)
    seq = np.empty((len(every), len(frames)), dtype=np.int64)
    for i in range(len(every)):
        def key(c):
            exiting = bool(x.iat[i, c]) and not bool(e.iat[i, c])
            r = decided.iat[i, c]
            return (0 if exiting else 1, -(r if r == r else -np.inf), c)
        seq[i] = sorted(range(len(frames)), key=key)
    return seq


@pytest.mark.parametrize("size", [0.3, 1.0])
def test_real_data_a_config_portfolio_equals_vectorbt(size):
    """sma_cross on five real instruments with three calendars from one
    account, through `[portfolio]`, and the same crossings through
    backtest_signals: both equal vectorbt trade for trade."""
    every, frames = real_market()
    config = {
        "backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH},
        "portfolio": {"size": size, "size_of": "cash"},
    }
    out = sieve.backtest(frames, "sma_cross", {"fast": 10, "slow": 40}, config, equity=True, trades=True)
    entries, exits = crossings(frames, every, 10, 40)
    pf = vectorbt_run(frames, every, entries, exits, size)
    assert_orders_and_value(out, pf)
    assert set(out["trades"]["instrument"]) == set(TICKERS)
    signals = sieve.backtest_signals(frames, entries, exits, portfolio=True, size=size, size_of="cash", config=CONFIG)
    assert_orders_and_value(signals, pf)


def test_real_data_rank_equals_vectorbt_with_its_call_sequence():
    every, frames = real_market()
    entries, exits = crossings(frames, every, 5, 20)
    # 20-bar momentum on each instrument's own bars.
    rank = pd.DataFrame({n: f["close"] / f["close"].shift(20) for n, f in frames.items()}).reindex(every)
    size = 0.5
    out = sieve.backtest_signals(frames, entries, exits, portfolio=True, size=size, size_of="cash", rank=rank, config=CONFIG)
    seq = call_seq_by_rank(entries, exits, rank, frames, every)
    assert_orders_and_value(out, vectorbt_run(frames, every, entries, exits, size, call_seq=seq))


def test_real_data_monthly_momentum_rotation_equals_vectorbt_from_orders():
    """Top 2 of 5 by 60-bar momentum, half each, decided on each
    instrument's first bar of a month."""
    every, frames = real_market()
    momentum = pd.DataFrame({n: f["close"] / f["close"].shift(60) for n, f in frames.items()}).reindex(every).ffill()
    first = pd.Series(every.to_period("M"), index=every)
    rebalance = first != first.shift(1)
    top = momentum.rank(axis=1, ascending=False) <= 2
    weights = (top * 0.5).where(rebalance, np.nan).where(momentum.notna().all(axis=1), np.nan)
    # Only on an instrument's own bars.
    weights = pd.DataFrame({n: weights[n].where(weights.index.isin(f.index)) for n, f in frames.items()})
    out = sieve.backtest_weights(frames, weights, config=CONFIG)
    W = pd.DataFrame({n: weights[n].reindex(f.index).shift(1) for n, f in frames.items()}).reindex(every)
    o, c = wide(frames, every, "open"), wide(frames, every, "close")
    pf = vbt.Portfolio.from_orders(
        close=c, size=W, size_type="targetpercent", price=o, val_price=o.fillna(c.ffill()),
        group_by=True, cash_sharing=True, call_seq="auto", fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert_same_weight_orders(out, pf, least=40)


def across(values, frames, every):
    """Each instrument's series (on its own bars) on the union, each as of
    its latest bar: what rank(), count() and total() compare."""
    return pd.DataFrame({n: values[n] for n in frames}).reindex(every).ffill(limit_area="inside")


def on_own_bars(wide_values, frames):
    return {n: wide_values[n].reindex(f.index) for n, f in frames.items()}


def monthly(frames):
    """Each instrument's first bar of a month (in UTC), as the rule `month
    != shift(month, 1)` reads it: false on its first bar."""
    out = {}
    for n, f in frames.items():
        month = pd.Series(f.index.month, index=f.index)
        out[n] = (month != month.shift(1)) & month.shift(1).notna()
    return out


def weights_vs_vectorbt(frames, every, weights, out):
    """`out` (a config's weights portfolio) is backtest_weights of the
    `weights` computed in pandas, bit for bit, and both equal vectorbt's
    from_orders order for order; its round trips add up to the gain."""
    wide_weights = pd.DataFrame(weights).reindex(every)
    mine = sieve.backtest_weights(frames, wide_weights, config=CONFIG)
    np.testing.assert_array_equal(out["equity"].to_numpy(), mine["equity"].to_numpy())
    W = pd.DataFrame({n: weights[n].shift(1) for n in frames}).reindex(every)
    o, c = wide(frames, every, "open"), wide(frames, every, "close")
    pf = vbt.Portfolio.from_orders(
        close=c, size=W, size_type="targetpercent", price=o, val_price=o.fillna(c.ffill()),
        group_by=True, cash_sharing=True, call_seq="auto", fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert_same_weight_orders(mine, pf, least=40)
    gain = out["trades"]["pnl"].sum()
    assert gain == pytest.approx(out["equity"].iloc[-1] - CASH, rel=1e-9)


def test_real_data_weights_by_rank_in_the_config_equal_vectorbt():
    """`portfolio.weight` with rank() across the instruments: the top 2 of
    5 by 60-bar momentum, half each, rebalanced on each instrument's first
    bar of a month; equal to the weights written in pandas from the docs."""
    every, frames = real_market()
    config = {
        **CONFIG,
        "strategy": {"params": {"top": {"values": [1, 2, 3]}, "lookback": {"values": [60, 120]}}},
        "portfolio": {
            "weight": "if(rank(close / shift(close, lookback)) <= top, 1 / top, 0)",
            "rebalance": "month != shift(month, 1)",
        },
    }
    out = sieve.backtest(frames, None, {"top": 2, "lookback": 60}, config, equity=True, trades=True)
    momentum = across({n: f["close"] / f["close"].shift(60) for n, f in frames.items()}, frames, every)
    rank = on_own_bars(momentum.rank(axis=1, ascending=False, method="first"), frames)
    when = monthly(frames)
    weights = {n: (rank[n] <= 2).astype(float).mul(0.5).where(when[n]) for n in frames}
    weights_vs_vectorbt(frames, every, weights, out)
    assert set(out["trades"]["instrument"]) == set(frames)


def test_real_data_weights_at_the_close_equal_vectorbt():
    """`backtest.fill = "close"`: the weights decided on a close fill at it,
    as from_orders at its default price (the close), weights unshifted."""
    every, frames = real_market()
    config = {
        "backtest": {**CONFIG["backtest"], "fill": "close"},
        "portfolio": {"weight": "if(rank(close / shift(close, 60)) <= 2, 0.5, 0)", "rebalance": "month != shift(month, 1)"},
    }
    out = sieve.backtest(frames, None, {}, config, equity=True, trades=True)
    momentum = across({n: f["close"] / f["close"].shift(60) for n, f in frames.items()}, frames, every)
    rank = on_own_bars(momentum.rank(axis=1, ascending=False, method="first"), frames)
    when = monthly(frames)
    W = pd.DataFrame({n: (rank[n] <= 2).astype(float).mul(0.5).where(when[n]) for n in frames}).reindex(every)
    c = wide(frames, every, "close")
    pf = vbt.Portfolio.from_orders(
        close=c, size=W, size_type="targetpercent", val_price=c.ffill(),
        group_by=True, cash_sharing=True, call_seq="auto", fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert len(pf.orders.records) > 40
    np.testing.assert_allclose(out["equity"].to_numpy(), pf.value().to_numpy(), rtol=1e-9)


def test_real_data_inverse_volatility_weights_equal_vectorbt():
    """`total()`: each instrument at its inverse 20-bar volatility over the
    instruments' sum, monthly, at most 0.95 of the portfolio (the cap does
    not bind: the weights sum to 1 less what no bar rebalanced)."""
    every, frames = real_market()
    vol = "stdev(close / shift(close, 1), 20)"
    config = {
        **CONFIG,
        "portfolio": {"weight": f"(1 / {vol}) / total(1 / {vol})", "rebalance": "month != shift(month, 1)"},
    }
    out = sieve.backtest(frames, None, {}, config, equity=True, trades=True)
    inverse = {n: 1 / (f["close"] / f["close"].shift(1)).rolling(20).std(ddof=0) for n, f in frames.items()}
    summed = across(inverse, frames, every).sum(axis=1, min_count=1)
    total = {n: summed.reindex(f.index) for n, f in frames.items()}
    when = monthly(frames)
    weights = {n: (inverse[n] / total[n]).where(when[n]) for n in frames}
    wide_weights = pd.DataFrame(weights).reindex(every)
    mine = sieve.backtest_weights(frames, wide_weights, config=CONFIG)
    # The sums may differ in the last bit from pandas': equal to 1e-12.
    np.testing.assert_allclose(out["equity"].to_numpy(), mine["equity"].to_numpy(), rtol=1e-12)
    W = pd.DataFrame({n: weights[n].shift(1) for n in frames}).reindex(every)
    o, c = wide(frames, every, "open"), wide(frames, every, "close")
    pf = vbt.Portfolio.from_orders(
        close=c, size=W, size_type="targetpercent", price=o, val_price=o.fillna(c.ffill()),
        group_by=True, cash_sharing=True, call_seq="auto", fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert_same_weight_orders(mine, pf, least=100)
    np.testing.assert_allclose(out["equity"].to_numpy(), pf.value().to_numpy(), rtol=1e-9)


def test_weights_above_max_exposure_are_scaled_down():
    """Three instruments each wanting 0.5 under max_exposure = 0.75 hold a
    quarter each: the same as weights of 0.25."""
    every, frames = real_market()
    three = {n: frames[n] for n in list(frames)[:3]}
    base = {**CONFIG, "portfolio": {"rebalance": "month != shift(month, 1)"}}
    capped = sieve.backtest(three, None, {}, {**base, "portfolio": {**base["portfolio"], "weight": "0.5", "max_exposure": 0.75}}, equity=True)
    quarter = sieve.backtest(three, None, {}, {**base, "portfolio": {**base["portfolio"], "weight": "0.25"}}, equity=True)
    np.testing.assert_allclose(capped["equity"].to_numpy(), quarter["equity"].to_numpy(), rtol=1e-12)
    free = sieve.backtest(three, None, {}, {**base, "portfolio": {**base["portfolio"], "weight": "0.5"}}, equity=True)
    assert free["equity"].iloc[-1] != pytest.approx(quarter["equity"].iloc[-1], rel=1e-6)


def test_real_data_rank_by_in_the_config_equals_vectorbt():
    """`portfolio.rank_by`: on a bar with several entries, the highest
    close over its 50-bar average goes first (so gets the most cash)."""
    every, frames = real_market()
    size = 0.5
    config = {
        "backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH},
        "portfolio": {"size": size, "size_of": "cash", "rank_by": "close / sma(close, 50)"},
    }
    out = sieve.backtest(frames, "sma_cross", {"fast": 5, "slow": 20}, config, equity=True, trades=True)
    entries, exits = crossings(frames, every, 5, 20)
    rank = pd.DataFrame({n: f["close"] / f["close"].rolling(50).mean() for n, f in frames.items()}).reindex(every)
    seq = call_seq_by_rank(entries, exits, rank, frames, every)
    assert_orders_and_value(out, vectorbt_run(frames, every, entries, exits, size, call_seq=seq))
    # Without the ranking the order differs, and so do the sizes.
    plain = sieve.backtest(frames, "sma_cross", {"fast": 5, "slow": 20}, {**config, "portfolio": {"size": size, "size_of": "cash"}}, equity=True)
    assert plain["equity"].iloc[-1] != pytest.approx(out["equity"].iloc[-1], rel=1e-6)


def test_a_config_portfolio_is_in_the_first_instruments_zone():
    every, frames, *_ = market()
    zoned = {"A": frames["A"].tz_localize("Asia/Tokyo"), "B": frames["B"].tz_localize("UTC"), "C": frames["C"].tz_localize("UTC")}
    out = sieve.backtest(zoned, "sma_cross", {"fast": 5, "slow": 20}, {"portfolio": {}}, equity=True, trades=True)
    assert str(out["equity"].index.tz) == "Asia/Tokyo"
    assert str(out["trades"]["entry_time"].dt.tz) == "Asia/Tokyo"


def test_a_grid_of_portfolios_equals_each_alone():
    """Signal columns with an instrument level beside a parameter level:
    one portfolio per parameter value, each what it gives alone."""
    every, frames = real_market()
    grid = {}
    for fast, slow in [(5, 20), (10, 40), (20, 100)]:
        grid[(fast, slow)] = crossings(frames, every, fast, slow)
    entries = pd.concat({k: v[0] for k, v in grid.items()}, axis=1, names=["fast", "slow", "instrument"])
    exits = pd.concat({k: v[1] for k, v in grid.items()}, axis=1, names=["fast", "slow", "instrument"])
    out = sieve.backtest_signals(frames, entries, exits, portfolio=True, size=0.3, size_of="cash", config=CONFIG)
    assert list(out["equity"].columns) == list(grid)
    for k, (e, x) in grid.items():
        alone = sieve.backtest_signals(frames, e, x, portfolio=True, size=0.3, size_of="cash", config=CONFIG)
        np.testing.assert_array_equal(out["equity"][k].to_numpy(), alone["equity"].to_numpy())
        mine = out["trades"][(out["trades"]["fast"] == k[0]) & (out["trades"]["slow"] == k[1])]
        assert len(mine) == len(alone["trades"]) > 5
        np.testing.assert_array_equal(mine["units"].to_numpy(), alone["trades"]["units"].to_numpy())
    assert list(out["trades"].columns[:3]) == ["fast", "slow", "instrument"]


def test_real_data_rank_by_reading_a_parameter_equals_vectorbt():
    """`rank_by` may read the strategy's parameters: here the slow
    average's length, 20."""
    every, frames = real_market()
    size = 0.5
    config = {
        "backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH},
        "portfolio": {"size": size, "size_of": "cash", "rank_by": "close / sma(close, slow)"},
    }
    out = sieve.backtest(frames, "sma_cross", {"fast": 5, "slow": 20}, config, equity=True, trades=True)
    entries, exits = crossings(frames, every, 5, 20)
    rank = pd.DataFrame({n: f["close"] / f["close"].rolling(20).mean() for n, f in frames.items()}).reindex(every)
    seq = call_seq_by_rank(entries, exits, rank, frames, every)
    assert_orders_and_value(out, vectorbt_run(frames, every, entries, exits, size, call_seq=seq))


def test_real_data_fills_at_the_close_equal_vectorbt_at_its_default_price():
    """`backtest.fill = "close"`: each order fills at the close that
    decided it, vectorbt's default price, with the signals unshifted."""
    every, frames = real_market()
    size = 0.3
    config = {
        "backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH, "fill": "close"},
        "portfolio": {"size": size, "size_of": "cash"},
    }
    out = sieve.backtest(frames, "sma_cross", {"fast": 10, "slow": 40}, config, equity=True, trades=True)
    entries, exits = crossings(frames, every, 10, 40)
    pf = vbt.Portfolio.from_signals(
        close=wide(frames, every, "close"), entries=entries, exits=exits, size=size, size_type="percent",
        group_by=True, cash_sharing=True, call_seq="auto", fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert_orders_and_value(out, pf)
    own = {"backtest": config["backtest"]}
    signals = sieve.backtest_signals(frames, entries, exits, portfolio=True, size=size, size_of="cash", config=own)
    assert_orders_and_value(signals, pf)
    # The account's rules are keywords there, not a config table.
    with pytest.raises(sieve.SieveError, match="portfolio table"):
        sieve.backtest_signals(frames, entries, exits, portfolio=True, config=config)


def test_real_data_shorts_share_the_cash_as_vectorbt():
    """Longs on three instruments and shorts on two from one account:
    vectorbt's from_signals with short entries and exits, cash shared (a
    short's proceeds come in; twice its value is held back)."""
    every, frames = real_market()
    up, down = crossings(frames, every, 10, 40)
    longs, shorts = ["SPY", "QQQ", "SSEC"], ["AAPL", "BTCUSD"]
    none = pd.DataFrame(False, index=every, columns=TICKERS)
    entries, exits = none.copy(), none.copy()
    short_entries, short_exits = none.copy(), none.copy()
    entries[longs], exits[longs] = up[longs], down[longs]
    short_entries[shorts], short_exits[shorts] = down[shorts], up[shorts]
    size = 0.3
    out = sieve.backtest_signals(
        frames, entries, exits, short_entries=short_entries, short_exits=short_exits,
        portfolio=True, size=size, size_of="cash", config=CONFIG,
    )
    o = wide(frames, every, "open")
    pf = vbt.Portfolio.from_signals(
        close=wide(frames, every, "close"),
        entries=shifted(entries, frames, every), exits=shifted(exits, frames, every),
        short_entries=shifted(short_entries, frames, every), short_exits=shifted(short_exits, frames, every),
        price=o, open=o, high=wide(frames, every, "high"), low=wide(frames, every, "low"),
        size=size, size_type="percent", group_by=True, cash_sharing=True, call_seq="auto",
        fees=FEE, slippage=SLIPPAGE, init_cash=CASH,
    )
    assert any(t == "short" for t in out["trades"]["side"])
    assert_orders_and_value(out, pf)


def test_max_exposure_and_shorts_through_signals_equal_the_config_portfolio():
    """backtest_signals(portfolio=True) with max_exposure and short signals
    runs the account `[portfolio]` runs on sma_cross's crossings."""
    every, frames = real_market()
    up, down = crossings(frames, every, 10, 40)
    backtest = {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH, "direction": "long_short"}
    config = {"backtest": backtest, "portfolio": {"size": 0.6, "max_exposure": 0.7}}
    out = sieve.backtest(frames, "sma_cross", {"fast": 10, "slow": 40}, config, equity=True, trades=True)
    # long_short: a crossing below is a short entry, a crossing above covers.
    signals = sieve.backtest_signals(
        frames, up, down, short_entries=down, short_exits=up, portfolio=True, size=0.6,
        max_exposure=0.7, config={"backtest": backtest},
    )
    assert (out["trades"]["side"] == "short").sum() > 5
    np.testing.assert_array_equal(signals["equity"].to_numpy(), out["equity"].to_numpy())
    assert list(signals["trades"]["units"]) == list(out["trades"]["units"])
    with pytest.raises(sieve.ParameterError, match="max_exposure"):
        sieve.backtest_signals(frames, up, down, portfolio=True, max_exposure=0)


def test_real_data_a_rotation_by_rank_in_the_rules_equals_vectorbt():
    """`rank` in the rules (each instrument's place among the instruments
    by `rank_by`, 1 the highest): hold the top 2 by close over its 50-bar
    average, decided on each instrument's own bars; written in pandas from
    the docs for vectorbt."""
    every, frames = real_market()
    size = 0.5
    config = {
        "strategy": {"entry": "rank <= top", "exit": "rank > top", "params": {"top": {"values": [2]}}},
        "backtest": {"fee": FEE, "slippage": SLIPPAGE, "initial_cash": CASH},
        "portfolio": {"size": size, "size_of": "cash", "rank_by": "close / sma(close, 50)"},
    }
    out = sieve.backtest(frames, None, {"top": 2}, config, equity=True, trades=True)
    score = pd.DataFrame({n: f["close"] / f["close"].rolling(50).mean() for n, f in frames.items()}).reindex(every).ffill(limit_area="inside")
    names = list(frames)
    # The rank at each time of the union: 1 + the instruments above (ties:
    # those listed before); undefined where its own value is.
    ranks = pd.DataFrame(np.nan, index=every, columns=names)
    values = score.to_numpy()
    for t in range(len(every)):
        row = values[t]
        for i in range(len(names)):
            if row[i] == row[i]:
                above = sum(1 for j in range(len(names)) if row[j] == row[j] and (row[j] > row[i] or (row[j] == row[i] and j < i)))
                ranks.iat[t, i] = above + 1
    entries, exits = {}, {}
    for n, f in frames.items():
        r = ranks[n].reindex(f.index)
        long, held = [], False
        for v in r:
            if not held and v <= 2:
                held = True
            elif held and v > 2:
                held = False
            long.append(held)
        pos = pd.Series(long, index=f.index)
        before = pos.shift(1, fill_value=False)
        entries[n], exits[n] = pos & ~before, ~pos & before
    entries = pd.DataFrame(entries).reindex(every).fillna(False).astype(bool)
    exits = pd.DataFrame(exits).reindex(every).fillna(False).astype(bool)
    rank_by = pd.DataFrame({n: f["close"] / f["close"].rolling(50).mean() for n, f in frames.items()}).reindex(every)
    seq = call_seq_by_rank(entries, exits, rank_by, frames, every)
    assert entries.to_numpy().sum() > 50
    assert_orders_and_value(out, vectorbt_run(frames, every, entries, exits, size, call_seq=seq))
