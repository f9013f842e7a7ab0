"""A monthly momentum rotation: on each instrument's first bar of a month,
hold the two of five with the best 60-bar momentum, half the portfolio
each; sell the others. Weights are computed in pandas and filled by
sieve.backtest_weights at each instrument's next open.

    python examples/portfolio/rotation.py
"""
from pathlib import Path

import pandas as pd

import sieve

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "portfolio"
TICKERS = ["SPY", "QQQ", "AAPL", "BTCUSD", "SSEC"]

frames = {t: pd.read_csv(DATA / f"{t}.csv", index_col="date", parse_dates=True) for t in TICKERS}
every = frames["SPY"].index
for f in frames.values():
    every = every.union(f.index)

# 60-bar momentum on each instrument's own bars, carried to the union.
momentum = pd.DataFrame({t: f["close"] / f["close"].shift(60) for t, f in frames.items()}).reindex(every).ffill()
month = pd.Series(every.to_period("M"), index=every)
first_of_month = month != month.shift(1)
top2 = momentum.rank(axis=1, ascending=False) <= 2
weights = (top2 * 0.5).where(first_of_month & momentum.notna().all(axis=1))
# An order only where the instrument has a bar.
weights = pd.DataFrame({t: weights[t].where(weights.index.isin(f.index)) for t, f in frames.items()})

config = {"backtest": {"fee": 0.001, "slippage": 0.0005, "initial_cash": 10_000}}
out = sieve.backtest_weights(frames, weights, config=config)
equity = out["equity"]
print(f"final value {equity.iloc[-1]:,.2f} from 10,000 ({equity.iloc[-1] / 10_000 - 1:+.1%})")
print(f"max drawdown {(1 - equity / equity.cummax()).max():.1%}")
print(out["orders"].tail())
