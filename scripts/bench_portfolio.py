#!/usr/bin/env python3
"""Times one signal portfolio (issue 48): sieve.backtest_signals(...,
portfolio=True) against vectorbt's from_signals(group_by=True,
cash_sharing=True) on the same 10 instruments × 5,000 daily bars (three
with holidays) and random signals; vectorbt also computes total return,
Sharpe and max drawdown, as a screen would. Medians of --runs after a
warm-up (vectorbt compiles); the final values are compared.

    python scripts/bench_portfolio.py --runs 7

With --grid N --files F1 F2 ... (what scripts/bench_cli.py's portfolio
section runs): vectorbt per combination on a grid of N sma_cross portfolios
of those CSV files (fast 2..201 x slow 210..709, every k-th combination),
one group per combination with cash sharing, signals computed beforehand
(untimed): from_signals plus total return, Sharpe and max drawdown.
"""
import argparse
import statistics
import time

import numpy as np
import pandas as pd

import sieve


def market(instruments, bars, seed=1):
    rng = np.random.default_rng(seed)
    every = pd.date_range("2000-01-01", periods=bars, freq="D")
    frames = {}
    for k in range(instruments):
        index = every[rng.random(bars) > 0.1] if k % 3 == 1 else every
        close = 100 * np.exp(np.cumsum(rng.normal(0, 0.015, len(index))))
        open_ = close * np.exp(rng.normal(0, 0.004, len(index)))
        frames[f"I{k}"] = pd.DataFrame(
            {"open": open_, "high": np.maximum(open_, close) * 1.01, "low": np.minimum(open_, close) * 0.99, "close": close},
            index=index,
        )
    flags = lambda p: pd.DataFrame(  # noqa: E731
        {n: pd.Series(rng.random(len(f)) < p, index=f.index) for n, f in frames.items()}
    ).reindex(every).fillna(False).astype(bool)
    return every, frames, flags(0.02), flags(0.02)


def vectorbt_grid(files, n, runs):
    import vectorbt as vbt

    frames = {f"I{k}": pd.read_csv(path, index_col=0, parse_dates=True) for k, path in enumerate(files)}
    every = frames["I0"].index
    for f in frames.values():
        every = every.union(f.index)
    grid = [(fast, slow) for fast in range(2, 202) for slow in range(210, 710)]
    picked = grid[:: len(grid) // n][:n]
    wide = lambda c: pd.DataFrame({k: f[c] for k, f in frames.items()}).reindex(every)  # noqa: E731
    o, c, h, l = wide("open"), wide("close"), wide("high"), wide("low")
    entries, exits = [], []
    for fast, slow in picked:
        e, x = {}, {}
        for k, f in frames.items():
            a_, b_ = f["close"].rolling(fast).mean(), f["close"].rolling(slow).mean()
            up = (a_ > b_) & (a_.shift(1) <= b_.shift(1))
            down = (a_ < b_) & (a_.shift(1) >= b_.shift(1))
            e[k], x[k] = up.shift(1, fill_value=False), down.shift(1, fill_value=False)
        entries.append(pd.DataFrame(e).reindex(every).fillna(False).astype(bool))
        exits.append(pd.DataFrame(x).reindex(every).fillna(False).astype(bool))
    keys = [f"{fast}_{slow}" for fast, slow in picked]
    E, X = pd.concat(entries, axis=1, keys=keys), pd.concat(exits, axis=1, keys=keys)
    tile = lambda d: pd.concat([d] * len(picked), axis=1, keys=keys)  # noqa: E731
    O, C, H, L = tile(o), tile(c), tile(h), tile(l)

    def theirs():
        pf = vbt.Portfolio.from_signals(
            close=C, entries=E, exits=X, price=O, open=O, high=H, low=L, size=0.2, size_type="percent",
            group_by=0, cash_sharing=True, call_seq="auto", fees=0.001, slippage=0.0005, init_cash=10_000, freq="1D",
        )
        return pf.total_return(), pf.sharpe_ratio(), pf.max_drawdown()

    theirs()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        theirs()
        times.append(time.perf_counter() - t)
    t = statistics.median(times)
    print(f"vectorbt, {len(picked)} portfolios of {len(files)} instruments: median {t:.2f} s; "
          f"per combination: {t / len(picked) * 1e6:.0f} us")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--instruments", type=int, default=10)
    ap.add_argument("--bars", type=int, default=5000)
    ap.add_argument("--grid", type=int, help="vectorbt per combination on a grid of this many portfolios")
    ap.add_argument("--files", nargs="*", help="the instruments' CSV files (with --grid)")
    a = ap.parse_args()
    if a.grid:
        return vectorbt_grid(a.files, a.grid, a.runs)
    every, frames, entries, exits = market(a.instruments, a.bars)
    config = {"backtest": {"fee": 0.001, "slippage": 0.0005, "initial_cash": 10_000}}

    def ours():
        return sieve.backtest_signals(frames, entries, exits, portfolio=True, size=0.2, size_of="cash", config=config)

    import vectorbt as vbt

    wide = lambda c: pd.DataFrame({n: f[c] for n, f in frames.items()}).reindex(every)  # noqa: E731
    o, c, h, l = wide("open"), wide("close"), wide("high"), wide("low")
    shift = lambda s: pd.DataFrame(  # noqa: E731
        {n: s[n].reindex(f.index).shift(1, fill_value=False) for n, f in frames.items()}
    ).reindex(every).fillna(False).astype(bool)
    e, x = shift(entries), shift(exits)

    def theirs():
        pf = vbt.Portfolio.from_signals(
            close=c, entries=e, exits=x, price=o, open=o, high=h, low=l, size=0.2, size_type="percent",
            group_by=True, cash_sharing=True, call_seq="auto", fees=0.001, slippage=0.0005, init_cash=10_000, freq="1D",
        )
        return pf, pf.total_return(), pf.sharpe_ratio(), pf.max_drawdown()

    ours(), theirs()
    times = {"sieve": [], "vectorbt": []}
    for _ in range(a.runs):
        for name, f in (("sieve", ours), ("vectorbt", theirs)):
            t = time.perf_counter()
            out = f()
            times[name].append(time.perf_counter() - t)
    s, v = statistics.median(times["sieve"]), statistics.median(times["vectorbt"])
    final = ours()["equity"].iloc[-1], theirs()[0].value().iloc[-1]
    print(f"{a.instruments} instruments x {a.bars} bars, medians of {a.runs}:")
    print(f"  sieve backtest_signals(portfolio=True)        {s * 1000:8.2f} ms")
    print(f"  vectorbt from_signals(cash_sharing) + 3 metrics {v * 1000:8.2f} ms ({v / s:.1f}x)")
    print(f"  final values: sieve {final[0]:.9f}, vectorbt {final[1]:.9f}")


if __name__ == "__main__":
    main()
