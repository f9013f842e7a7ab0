"""``sieve.backtest_signals`` against vectorbt's ``Portfolio.from_signals``
on the same signal arrays and a real series (backtesting.py's GOOG daily).

1,000 random signal columns (each bar an entry with probability 5 %, an
exit with 5 %, independently, so entries while long, exits while flat and
both on one bar all occur) under these matched conventions:

| sieve (`[backtest]`)                     | vectorbt (`from_signals`)          |
|------------------------------------------|------------------------------------|
| `fill = "close"`                         | `price = close` (its default)      |
| `fee = 0.001`                            | `fees = 0.001`                     |
| `slippage = 0.0005`                      | `slippage = 0.0005`                |
| `initial_cash = 10000`                   | `init_cash = 10000`                |
| fractional units (`lot_size = 0`)        | `size = inf` (all cash), no granularity |
| `direction = "long"`                     | `direction = "longonly"`           |
| `direction = "long_short"`, no short arrays | `direction = "both"` (an exit reverses) |
| `direction = "long_short"` with short arrays | `direction = "both"`, `short_entries`, `short_exits` |
| a long and a short entry on one bar cancel | its default: the conflict is ignored |
| entry and exit on one bar cancel         | its default: the conflict is ignored |
| open at the end: marked at the last close | the same                          |

Every trade must match: entry and exit bar, entry and exit price (relative
1e-15: vectorbt's trade records average their orders' prices, size × price
/ size, which can move the last bit), units and fees (relative 1e-9), profit (1e-9 of the starting cash), and
whether it is still open; and each column's final equity (relative 1e-12).

Needs ``pip install vectorbt`` (CI installs it).
"""

import numpy as np
import pandas as pd
import pytest
import vectorbt as vbt
from backtesting.test import GOOG

import sieve

COLUMNS = 1000
CASH = 10000.0
FEE = 0.001
SLIPPAGE = 0.0005


def random_signals(seed, index, columns):
    rng = np.random.default_rng(seed)
    shape = (len(index), columns)
    return (
        pd.DataFrame(rng.random(shape) < 0.05, index=index),
        pd.DataFrame(rng.random(shape) < 0.05, index=index),
    )


def sieve_trades(table, index):
    """One signal column's trades.csv as vectorbt's trade records read."""
    return pd.DataFrame(
        {
            "entry_idx": index.get_indexer(table["entry_time"]),
            "exit_idx": np.where(
                table["status"] == "open", len(index) - 1, index.get_indexer(table["exit_time"].fillna(index[-1]))
            ),
            "entry_price": table["entry_price"].to_numpy(),
            "exit_price": table["exit_price"].to_numpy(),
            "size": table["units"].to_numpy(),
            "fees": table["fees"].to_numpy(),
            "pnl": table["pnl"].to_numpy(),
            "short": (table["side"] == "short").to_numpy(),
            "open": (table["status"] == "open").to_numpy(),
        }
    )


def vbt_trades(records, column=None):
    """vectorbt's trade records (of one column, or of all with their
    `col`) as `sieve_trades` reads sieve's."""
    r = records if column is None else records[records["col"] == column]
    return pd.DataFrame(
        {
            "col": r["col"].to_numpy(),
            "entry_idx": r["entry_idx"].to_numpy(),
            "exit_idx": r["exit_idx"].to_numpy(),
            "entry_price": r["entry_price"].to_numpy(),
            "exit_price": r["exit_price"].to_numpy(),
            "size": r["size"].to_numpy(),
            "fees": (r["entry_fees"] + r["exit_fees"]).to_numpy(),
            "pnl": r["pnl"].to_numpy(),
            "short": (r["direction"] == 1).to_numpy(),
            "open": (r["status"] == 0).to_numpy(),
        }
    )


@pytest.mark.parametrize(
    "direction,vbt_direction,short",
    [("long", "longonly", False), ("long_short", "both", False), ("long_short", "both", True)],
)
def test_signals_trade_as_vectorbt(direction, vbt_direction, short):
    data = GOOG
    entries, exits = random_signals(11 if direction == "long" else 12, data.index, COLUMNS)
    shorts = random_signals(13, data.index, COLUMNS) if short else (None, None)
    config = {
        "backtest": {
            "fill": "close",
            "fee": FEE,
            "slippage": SLIPPAGE,
            "initial_cash": CASH,
            "direction": direction,
        }
    }
    ours = sieve.backtest_signals(data, entries, exits, *shorts, config=config, trades=True, equity=True)
    pf = vbt.Portfolio.from_signals(
        data.Close,
        entries,
        exits,
        short_entries=shorts[0],
        short_exits=shorts[1],
        direction=vbt_direction,
        fees=FEE,
        slippage=SLIPPAGE,
        init_cash=CASH,
        size=np.inf,
        freq="1D",
    )
    records = pf.trades.records
    assert len(records) > 10 * COLUMNS  # the comparison has trades to compare
    if direction == "long_short":
        assert records["direction"].eq(1).sum() > 5 * COLUMNS  # and shorts
    final = pf.final_value()
    trade_count = 0
    for column in range(COLUMNS):
        a = sieve_trades(ours["trades"][ours["trades"]["column"] == column], data.index)
        b = vbt_trades(records, column)
        assert len(a) == len(b), "column %d: %d trades, vectorbt %d" % (column, len(a), len(b))
        for key in ("entry_idx", "exit_idx", "short", "open"):
            np.testing.assert_array_equal(a[key], b[key], err_msg="column %d: %s" % (column, key))
        for key in ("entry_price", "exit_price"):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-15, atol=0, err_msg="column %d: %s" % (column, key))
        for key in ("size", "fees"):
            np.testing.assert_allclose(a[key], b[key], rtol=1e-9, atol=0, err_msg="column %d: %s" % (column, key))
        np.testing.assert_allclose(a["pnl"], b["pnl"], rtol=0, atol=1e-9 * CASH, err_msg="column %d: pnl" % column)
        trade_count += len(a)
        equity = ours["equity"][column].iloc[-1]
        assert equity == pytest.approx(final[column], rel=1e-12, abs=0), "column %d: final equity" % column
    assert trade_count == len(records)
    # The metrics table speaks of the same equity.
    np.testing.assert_allclose(
        ours["metrics"]["total_return"].to_numpy(), pf.total_return().to_numpy(), rtol=1e-10, atol=1e-12
    )


# Stops under `backtest.conventions = "vectorbt"`: the same signals with a
# stop-loss (fixed, or trailing as vectorbt's `sl_trail`) and a take-profit
# that vary bar by bar and column by column, filled at the next open
# (vectorbt: the signals and stops shifted one bar, `price = open`) or at
# the deciding close (no shift, its default price). Half the columns are
# crossing events (5 % of bars), half level signals (a regime that flips
# with probability 3 % a bar: entries while it holds, exits while not).
STOP_COLUMNS = 1200


def stop_inputs(seed, index):
    rng = np.random.default_rng(seed)
    shape = (len(index), STOP_COLUMNS)
    half = STOP_COLUMNS // 2
    entries = rng.random(shape) < 0.05
    exits = rng.random(shape) < 0.05
    regime = np.cumsum(rng.random(shape) < 0.03, axis=0) % 2 == 1
    entries[:, half:], exits[:, half:] = regime[:, half:], ~regime[:, half:]
    frame = lambda a: pd.DataFrame(a, index=index)  # noqa: E731
    sl = frame(rng.uniform(0.01, 0.08, shape))
    tp = frame(np.where(rng.random(shape) < 0.2, np.nan, rng.uniform(0.02, 0.15, shape)))
    # A third of the columns trail their stop.
    trail = frame(np.broadcast_to(np.arange(STOP_COLUMNS) % 3 == 0, shape).copy())
    return frame(entries), frame(exits), sl, tp, trail


def compare_columns(ours, pf, index):
    """Every trade of every column, and every column's final equity."""
    a = sieve_trades(ours["trades"], index).assign(col=ours["trades"]["column"].to_numpy())
    b = vbt_trades(pf.trades.records)
    a = a.sort_values(["col", "entry_idx"], kind="stable").reset_index(drop=True)
    b = b.sort_values(["col", "entry_idx"], kind="stable").reset_index(drop=True)
    counts = a.groupby("col").size().reindex(range(STOP_COLUMNS), fill_value=0)
    theirs = b.groupby("col").size().reindex(range(STOP_COLUMNS), fill_value=0)
    differ = counts.index[counts != theirs]
    assert len(differ) == 0, "columns %s: trade counts differ" % list(differ[:10])
    for key in ("col", "entry_idx", "exit_idx", "short", "open"):
        bad = a[key].to_numpy() != b[key].to_numpy()
        assert not bad.any(), "%s differs in columns %s" % (key, sorted(set(a.col[bad]))[:10])
    for key, rtol in (("entry_price", 1e-15), ("exit_price", 1e-15), ("size", 1e-9), ("fees", 1e-9)):
        x, y = a[key].to_numpy(), b[key].to_numpy()
        bad = np.abs(x - y) > rtol * np.abs(y)
        assert not bad.any(), "%s differs in columns %s" % (key, sorted(set(a.col[bad]))[:10])
    bad = np.abs(a.pnl.to_numpy() - b.pnl.to_numpy()) > 1e-9 * CASH
    assert not bad.any(), "pnl differs in columns %s" % sorted(set(a.col[bad]))[:10]
    final = ours["equity"].iloc[-1].to_numpy()
    np.testing.assert_allclose(final, pf.final_value().to_numpy(), rtol=1e-12, atol=0)
    return a


@pytest.mark.parametrize("fill", ["next_open", "close"])
@pytest.mark.parametrize("direction,vbt_direction", [("long", "longonly"), ("long_short", "both")])
def test_stops_trade_as_vectorbt_under_its_conventions(fill, direction, vbt_direction):
    data = GOOG
    entries, exits, sl, tp, trail = stop_inputs(21 if fill == "close" else 22, data.index)
    config = {
        "backtest": {
            "conventions": "vectorbt",
            "fill": fill,
            "fee": FEE,
            "slippage": SLIPPAGE,
            "initial_cash": CASH,
            "direction": direction,
        }
    }
    ours = sieve.backtest_signals(
        data, entries, exits, config=config, trades=True, equity=True,
        stop_loss=sl.where(~trail), trail_loss=sl.where(trail), take_profit=tp,
    )
    shift = fill == "next_open"
    later = (lambda f: f.shift(1, fill_value=False)) if shift else (lambda f: f)  # noqa: E731
    prices = {"price": data.Open} if shift else {}
    pf = vbt.Portfolio.from_signals(
        data.Close,
        later(entries),
        later(exits),
        open=data.Open,
        high=data.High,
        low=data.Low,
        sl_stop=sl.shift(1) if shift else sl,
        tp_stop=tp.shift(1) if shift else tp,
        sl_trail=trail,
        direction=vbt_direction,
        fees=FEE,
        slippage=SLIPPAGE,
        init_cash=CASH,
        size=np.inf,
        freq="1D",
        **prices,
    )
    trades = compare_columns(ours, pf, data.index)
    assert len(trades) > 10 * STOP_COLUMNS
    # Every kind of exit is exercised.
    reasons = set(ours["trades"]["exit_reason"])
    assert {"stop_loss", "take_profit", "trail"} <= reasons, reasons
