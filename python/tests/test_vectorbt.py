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


def vbt_trades(records, column):
    r = records[records["col"] == column]
    return pd.DataFrame(
        {
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
