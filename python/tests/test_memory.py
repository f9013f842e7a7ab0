"""One process running thousands of backtests of distinct rule strategies
holds its memory flat: a compiled strategy is dropped when its run ends."""

import sys

import numpy as np
import pandas as pd
import pytest

import sieve


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_distinct_rule_strategies_do_not_grow_memory():
    rng = np.random.default_rng(5)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, 300)))
    frame = pd.DataFrame(
        {"open": close, "high": close * 1.01, "low": close * 0.99, "close": close},
        index=pd.date_range("2020-01-01", periods=300, freq="D"),
    )

    def run(i):
        # A distinct rule text (and name) every call: each compiles anew.
        # Measured on the build that kept every compiled strategy for the
        # life of the process: 28 MB more after the 3,000th than after the
        # 300th; this one: 1 MB.
        k = 1 + i * 1e-7
        config = {
            "strategy": {
                "name": "r%d" % i,
                "entry": "trend > %s and cross_above(fast, slow) and momentum > 0" % k,
                "exit": "trend < %s or cross_below(fast, slow)" % (-k),
                "define": {
                    "fast": "ema(close, n)",
                    "slow": "sma(close, 2 * n)",
                    "trend": "clamp((close - slow) / (2 * atr(14)), -1, 1)",
                    "momentum": "(rsi(close, 14) - 50) / 50 + 0 * %d" % i,
                },
                "params": {"n": 10},
            }
        }
        sieve.backtest(frame, None, {}, config=config)

    for i in range(300):
        run(i)
    after_300 = rss_mb()
    for i in range(300, 3000):
        run(i)
    after_3000 = rss_mb()
    assert after_3000 <= after_300 + 10, (after_300, after_3000)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_signals_and_indicator_callbacks_do_not_grow_memory():
    rng = np.random.default_rng(6)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.01, 300)))
    frame = pd.DataFrame(
        {"open": close, "high": close * 1.01, "low": close * 0.99, "close": close},
        index=pd.date_range("2020-01-01", periods=300, freq="D"),
    )
    entries = pd.DataFrame(rng.random((300, 4)) < 0.05, index=frame.index)
    exits = pd.DataFrame(rng.random((300, 4)) < 0.05, index=frame.index)
    grid = {"strategy": {"name": "f", "entry": "close > f(n)", "exit": "close < f(n)", "params": {"n": {"values": [5, 10]}}}}
    yours = {"f": (lambda df, n: df["close"].rolling(int(n)).mean(), ["n"])}

    def run(i):
        some = i % 10 == 0
        sieve.backtest_signals(frame, entries, exits, stop_loss=0.05, trades=some, equity=some, robust=some)
        if some:
            sieve.sweep(frame, grid, top=2, indicators=yours)

    # The least RSS over a stretch of calls: the allocator keeps freed
    # memory for a while (mimalloc), which moves any one reading by a few
    # MB either way; a leak raises the floor.
    def floor(calls):
        least = float("inf")
        for i in calls:
            run(i)
            if i % 50 == 0:
                least = min(least, rss_mb())
        return least

    before = floor(range(0, 600))
    floor(range(600, 2400))
    after = floor(range(2400, 3000))
    grown = after - before
    assert grown < 8, "%.1f MB more after 3,000 calls than after 600" % grown


_SWEEP_IN_A_CHILD = r"""
import resource, sys
import numpy as np, pandas as pd, sieve
bars, settings, budget = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(5)
close = 100 * np.exp(np.cumsum(rng.normal(0, 0.001, bars)))
frame = pd.DataFrame(
    {"open": close, "high": close * 1.001, "low": close * 0.999, "close": close},
    index=pd.date_range("2000-01-01", periods=bars, freq="min"),
)
config = {
    "strategy": {"name": "s", "entry": "close - f(n) > 0", "exit": "close - f(n) < 0",
                 "params": {"n": {"start": 2, "stop": 1 + settings, "step": 1}}},
    "sweep": {"series_memory_mb": budget},
}
mine = {"f": (lambda df, n: df["close"].rolling(n).mean(), [("n", int)])}
sieve.sweep(frame, config, indicators=mine, threads=2)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_python_indicators_keep_to_the_series_budget():
    """`sweep.series_memory_mb` bounds an indicators= sweep (issue 47,
    item 1): 300 settings of 200,000 bars are 480 MB of series (held twice
    before: once as the screen's, once in the functions' cache, without
    limit); with a 16 MB budget the peak is that of a 3-setting sweep plus
    at most twice the budget (the screen's group and the results kept)."""
    import subprocess

    def peak(settings):
        out = subprocess.run(
            [sys.executable, "-c", _SWEEP_IN_A_CHILD, "200000", str(settings), "16"],
            capture_output=True, text=True, check=True,
        )
        return int(out.stdout.split()[-1])

    small, large = peak(3), peak(300)
    assert large - small <= 2 * 16 + 24, (small, large)
