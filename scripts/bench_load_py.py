#!/usr/bin/env python3
"""Times the Python package's data path (issue 53): sieve.backtest_signals on
a DataFrame of 1,000,000 one-minute bars, with one signal column and with 8
sparse columns (~100 entries each), the whole call; vectorbt's from_signals
on the same data and signals when vectorbt is installed. Medians of --runs,
sieve's cases interleaved, vectorbt's in a process of its own, each after
one warm-up call (vectorbt compiles).

    python3 scripts/bench_load_py.py --runs 7 [--no-vectorbt]

Also prints how much the process's peak RSS grew during the first sieve
call (the bars copied out of the DataFrame, the engine's work), measured in
a fresh child so the high-water mark is this call's.
"""
import argparse
import statistics
import subprocess
import sys
import time

import numpy as np
import pandas as pd

import sieve

BARS = 1_000_000


def data(bars):
    """A random walk of one-minute bars and sparse signals (seeded)."""
    rng = np.random.default_rng(1)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.0005, bars)))
    index = pd.date_range("2020-01-01", periods=bars, freq="min")
    df = pd.DataFrame(
        {"open": close, "high": close * 1.001, "low": close * 0.999, "close": close, "volume": 1.0},
        index=index,
    )
    entries = pd.DataFrame({i: rng.random(bars) < 1e-4 for i in range(8)}, index=index)
    exits = pd.DataFrame({i: rng.random(bars) < 1e-4 for i in range(8)}, index=index)
    return df, entries, exits


def peak_growth_mb(bars):
    """Peak RSS growth (MB) of a fresh process during its first sieve call:
    the kernel's high-water mark (VmHWM), reset after the data is built
    (Linux: writing 5 to /proc/self/clear_refs), less the RSS before."""
    code = (
        "import sys;sys.path.insert(0,%r);import bench_load_py as b,sieve,gc;"
        "df,e,x=b.data(%d);gc.collect();"
        "kb=lambda k:int(next(l.split()[1] for l in open('/proc/self/status') if l.startswith(k)));"
        "open('/proc/self/clear_refs','w').write('5');before=kb('VmRSS:');"
        "sieve.backtest_signals(df,e[0],x[0]);"
        "print((kb('VmHWM:')-before)/1024)"
    ) % (sys.path[0], bars)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def vectorbt_median(bars, runs):
    """vectorbt's from_signals on the same data and 8 columns, in a fresh
    process (importing vectorbt starts numba's threads, which would share
    the cores with sieve's calls): the median of `runs` after a warm-up,
    or None without vectorbt."""
    code = (
        "import sys,time,statistics;sys.path.insert(0,%r);import bench_load_py as b;import vectorbt as vbt;"
        "df,e,x=b.data(%d);f=lambda: vbt.Portfolio.from_signals(df['close'],e,x,init_cash=10_000,freq='1min');f();"
        "ts=[];[ts.append((lambda t:(f(),time.perf_counter()-t)[1])(time.perf_counter())) for _ in range(%d)];"
        "print(statistics.median(ts))"
    ) % (sys.path[0], bars, runs)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bars", type=int, default=BARS)
    ap.add_argument("--no-vectorbt", action="store_true")
    a = ap.parse_args()
    df, entries, exits = data(a.bars)
    cases = {
        "sieve 1 column": lambda: sieve.backtest_signals(df, entries[0], exits[0]),
        "sieve 8 columns": lambda: sieve.backtest_signals(df, entries, exits),
    }
    for f in cases.values():
        f()
    times = {k: [] for k in cases}
    for _ in range(a.runs):
        for name, f in cases.items():
            t = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t)
    print(f"{a.bars:,} one-minute bars, sieve {sieve.__version__}, medians of {a.runs} (interleaved):")
    for name, ts in times.items():
        print(f"  {name:34} {statistics.median(ts) * 1000:8.1f} ms")
    if not a.no_vectorbt:
        t = vectorbt_median(a.bars, a.runs)
        shown = "not installed" if t is None else f"{t * 1000:8.1f} ms"
        print(f"  {'vectorbt from_signals 8 columns':34} {shown}")
    bars_mb = a.bars * 6 * 8 / 1e6
    print(f"peak RSS growth of the first call: {peak_growth_mb(a.bars):.0f} MB (the bars' own size: {bars_mb:.0f} MB)")


if __name__ == "__main__":
    main()
