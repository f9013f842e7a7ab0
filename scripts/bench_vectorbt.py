#!/usr/bin/env python3
"""Times the same moving-average-crossing sweep in vectorbt and in sieve.

    python3 -m venv /tmp/vbt && /tmp/vbt/bin/pip install vectorbt
    /tmp/vbt/bin/python scripts/bench_vectorbt.py [--runs 3] [--bars 4000]
    /tmp/vbt/bin/python scripts/bench_vectorbt.py --signals [--runs 9]

`--signals --stops` adds a stop-loss (trailing in half the columns) and a
take-profit per column on both sides, sieve under `conventions = "vectorbt"`.

`--signals` (needs `pip install ./python` in the same venv) times signals of
one's own instead: 1,000 random entry/exit columns on 5,000 synthetic daily
bars through `sieve.backtest_signals` (the metrics table) and through
vectorbt's `Portfolio.from_signals` plus `total_return()`, `sharpe_ratio()`
and `max_drawdown()`, both warm, whole calls, interleaved in one process;
the medians and the median of the per-round ratios are printed.

The sweep: every pair 2 <= fast < slow <= 200 (19,701 pairs) of simple
moving averages on daily bars from `sieve synth`, long when fast crosses
above slow, flat when it crosses below, each pair's Sharpe ratio. vectorbt
runs it as its documented pipeline (MA.run_combs, crossings,
Portfolio.from_signals, sharpe_ratio); its first run compiles (numba) and is
not counted: the time quoted is the median of the warm runs. sieve runs it
as `sieve sweep` (a release build, started fresh each time: loading, the
indicators and writing the top 100 are included); both medians come from
the same run of this script. A benchmark, not a test: the two tools do not
fill at the same price (vectorbt at the signal bar's close, sieve at the
next open by default), so only the time is compared.
"""
import argparse, json, os, platform, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIEVE = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "sieve")

CONFIG = """
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 200, step = 1 }
slow = { start = 2, stop = 200, step = 1 }
"""


def vectorbt_sweep(vbt, np, close):
    fast, slow = vbt.MA.run_combs(close, window=np.arange(2, 201), r=2, short_names=["fast", "slow"])
    entries = fast.ma_crossed_above(slow)
    exits = fast.ma_crossed_below(slow)
    pf = vbt.Portfolio.from_signals(close, entries, exits, freq="1D")
    return pf.sharpe_ratio()


def signals_benchmark(runs, bars=5000, columns=1000, stops=False):
    import numpy as np
    import pandas as pd
    import vectorbt as vbt
    import sieve

    rng = np.random.default_rng(1)
    close = 100 * np.cumprod(1 + rng.normal(0, 0.01, bars))
    index = pd.date_range("2005-01-03", periods=bars, freq="B")
    opens = close * (1 + rng.normal(0, 0.003, bars))
    high = np.maximum(opens, close) * (1 + np.abs(rng.normal(0, 0.006, bars)))
    low = np.minimum(opens, close) * (1 - np.abs(rng.normal(0, 0.006, bars)))
    data = pd.DataFrame({"open": opens, "high": high, "low": low, "close": close}, index=index)
    entries = pd.DataFrame(rng.random((bars, columns)) < 0.05, index=index)
    exits = pd.DataFrame(rng.random((bars, columns)) < 0.05, index=index)
    config = {"backtest": {"fill": "close", "fee": 0.001, "annualization": 252}}
    keys, their_keys = {}, {}
    if stops:
        # Per column: a stop-loss 2-8 % (trailing in half the columns, as
        # vectorbt's sl_trail) and a take-profit 3-15 %; vectorbt's
        # conventions so that both compute the same trades.
        sl = rng.uniform(0.02, 0.08, columns)
        tp = rng.uniform(0.03, 0.15, columns)
        trail = np.arange(columns) % 2 == 0
        config["backtest"]["conventions"] = "vectorbt"
        keys = dict(stop_loss=np.where(trail, np.nan, sl), trail_loss=np.where(trail, sl, np.nan), take_profit=tp)
        their_keys = dict(open=data["open"], high=data["high"], low=data["low"], sl_stop=sl, tp_stop=tp, sl_trail=trail)

    def ours():
        return sieve.backtest_signals(data, entries, exits, config=config, **keys)

    def theirs():
        pf = vbt.Portfolio.from_signals(data["close"], entries, exits, fees=0.001, init_cash=10000.0, freq="1D",
                                        **their_keys)
        return pf.total_return(), pf.sharpe_ratio(), pf.max_drawdown()

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, {platform.platform()}")
    print(f"vectorbt {vbt.__version__}, numba {__import__('numba').__version__}, numpy {np.__version__}, pandas {pd.__version__}")
    t = time.perf_counter()
    theirs()
    cold = time.perf_counter() - t
    ours()
    a, b = [], []
    for _ in range(runs):
        t = time.perf_counter()
        ours()
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        theirs()
        b.append(time.perf_counter() - t)
    ratios = [y / x for x, y in zip(a, b)]
    with_stops = ", stop-loss (half trailing) and take-profit" if stops else ""
    print(f"{columns:,} signal columns x {bars:,} bars{with_stops}, metrics included")
    print(f"vectorbt first call {cold:.2f} s (compiles)")
    print(f"sieve.backtest_signals: median {statistics.median(a):.4f} s; vectorbt: median {statistics.median(b):.3f} s ({runs} rounds)")
    print(f"ratio vectorbt / sieve: median {statistics.median(ratios):.1f}x (min {min(ratios):.1f}x, max {max(ratios):.1f}x)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--signals", action="store_true", help="time backtest_signals against from_signals instead")
    ap.add_argument("--stops", action="store_true", help="with --signals: stop-losses, trailing stops and targets")
    ap.add_argument("--runs", type=int, default=3, help="warm vectorbt runs and sieve runs per median")
    ap.add_argument("--bars", type=int, default=4000)
    a = ap.parse_args()
    if a.signals:
        return signals_benchmark(a.runs, stops=a.stops)
    try:
        import numpy as np
        import pandas as pd
        import vectorbt as vbt
    except ImportError as e:
        sys.exit(f"needs vectorbt in this Python ({e}); see the docstring for a venv")
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    d = tempfile.mkdtemp(prefix="sieve-vbt-")
    bars = os.path.join(d, "bars.csv")
    subprocess.run([SIEVE, "synth", "--bars", str(a.bars), "--seed", "42", "--out", bars], check=True,
                   stdout=subprocess.DEVNULL)
    config = os.path.join(d, "sma.toml")
    with open(config, "w") as f:
        f.write(CONFIG)
    df = pd.read_csv(bars, parse_dates=["date"], index_col="date")
    close = df["close"]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, {platform.platform()}")
    print(f"vectorbt {vbt.__version__}, numba {__import__('numba').__version__}, numpy {np.__version__}, pandas {pd.__version__}")

    # sieve first: numba's worker threads keep spinning a while after a
    # parallel region and would take the CPUs from a process started then.
    walls, screens = [], []
    for _ in range(a.runs):
        out = os.path.join(d, "sweep.csv")
        t = time.perf_counter()
        subprocess.run([SIEVE, "sweep", "--config", config, "--data", bars, "--out", out, "--top", "100"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
        with open(os.path.join(d, "sweep.meta.json")) as f:
            meta = json.load(f)
        screens.append(meta["timings"]["screen_s"])
    t = time.perf_counter()
    sharpe = vectorbt_sweep(vbt, np, close)
    cold = time.perf_counter() - t
    pairs = len(sharpe)
    vbt_times = []
    for _ in range(a.runs):
        t = time.perf_counter()
        vectorbt_sweep(vbt, np, close)
        vbt_times.append(time.perf_counter() - t)

    evaluated = meta["objective_stats"]["combinations_evaluated"]
    assert evaluated == pairs, f"sieve screened {evaluated} pairs, vectorbt {pairs}"

    v, w, s = statistics.median(vbt_times), statistics.median(walls), statistics.median(screens)
    print(f"{pairs:,} pairs x {a.bars:,} daily bars")
    print(f"vectorbt: first run {cold:.2f} s (compiles), warm median {v:.3f} s of {a.runs}")
    print(f"sieve sweep: wall median {w:.3f} s (process, loading, writing), screen {s:.4f} s")
    print(f"ratio, vectorbt warm / sieve wall: {v / w:,.0f}x; / sieve screen: {v / s:,.0f}x")


if __name__ == "__main__":
    main()
