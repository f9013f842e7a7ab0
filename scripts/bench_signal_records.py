#!/usr/bin/env python3
"""Times sieve.backtest_signals on many columns plain, with equity=True and
with trades=True (issue 47, item 12: the records cost at most 2x the run).
Random signals (5 % of bars each) on a random walk; medians of --runs,
the three kinds interleaved.

    python3 scripts/bench_signal_records.py --bars 1956 --columns 13681 --runs 5
"""
import argparse
import statistics
import time

import numpy as np
import pandas as pd

import sieve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=int, default=1956)
    ap.add_argument("--columns", type=int, default=13681)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(7)
    close = 100 * np.cumprod(1 + rng.normal(0, 0.01, a.bars))
    data = pd.DataFrame(
        {"open": close, "high": close * 1.01, "low": close * 0.99, "close": close},
        index=pd.date_range("2015-01-01", periods=a.bars, freq="D"),
    )
    entries = rng.random((a.bars, a.columns)) < 0.05
    exits = rng.random((a.bars, a.columns)) < 0.05
    kinds = {"plain": {}, "equity": {"equity": True}, "trades": {"trades": True}}
    times = {k: [] for k in kinds}
    trades = 0
    for _ in range(a.runs):
        for kind, extra in kinds.items():
            start = time.perf_counter()
            out = sieve.backtest_signals(data, entries, exits, threads=a.threads, **extra)
            times[kind].append(time.perf_counter() - start)
            if kind == "trades":
                trades = len(out["trades"])
    plain = statistics.median(times["plain"])
    print(f"{a.bars} bars x {a.columns} columns, {trades} trades, medians of {a.runs}:")
    for kind in kinds:
        m = statistics.median(times[kind])
        print(f"  {kind:7s} {m:.3f} s  ({m / plain:.2f}x plain)")


if __name__ == "__main__":
    main()
