#!/usr/bin/env python3
"""A daily filter's cost: the rule sma_cross on 5-minute bars, with and
without `close > tf("1d", sma(close, n))`, screened interleaved (A, B, A,
B, ...) by one binary, so the ratio is of runs taken side by side.

    python3 scripts/bench_frames.py [--bars 105120] [--runs 7] [--threads 2] [--screen-window full]

The bars are `sieve synth --bar-seconds 300` (a year of a market open
around the clock). Prints each configuration's median
screening rate (`timings.bar_combinations_per_s` of `sieve sweep`'s meta
file), the ratio of the medians and the median of the paired ratios.
"""

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIEVE = ROOT / "target" / "release" / "sieve"

GRID = """[strategy.params]
fast = { start = 2, stop = 100, step = 1 }
slow = { start = 110, stop = 600, step = 2 }
[score]
score_start = "2015-07-01"
objective = "sharpe"
"""
PLAIN = """[strategy]
name = "sma_rules"
entry = "cross_above(sma(close, fast), sma(close, slow))"
exit = "cross_below(sma(close, fast), sma(close, slow))"
""" + GRID
FILTERED = """[strategy]
name = "sma_daily_filter"
entry = "cross_above(sma(close, fast), sma(close, slow)) and close > tf(\\"1d\\", sma(close, 20))"
exit = "cross_below(sma(close, fast), sma(close, slow))"
""" + GRID
# The filter's window swept too: one daily column per setting.
SWEPT = FILTERED.replace("sma(close, 20))", "sma(close, n))").replace(
    'step = 2 }\n', 'step = 2 }\nn = { values = [10, 20, 50] }\n', 1
)


def five_minute_bars(folder: Path, bars: int) -> Path:
    out = folder / "five.csv"
    subprocess.run([str(SIEVE), "synth", "--bars", str(bars), "--seed", "7", "--bar-seconds", "300",
                    "--out", str(out)], check=True, capture_output=True)
    return out


def rate(config: Path, data: Path, threads: int, folder: Path) -> float:
    out = folder / "sweep.csv"
    subprocess.run([str(SIEVE), "sweep", "--config", str(config), "--data", str(data), "--threads", str(threads),
                    "--top", "50", "--out", str(out)], check=True, capture_output=True)
    meta = json.loads((folder / "sweep.meta.json").read_text())
    return meta["timings"]["bar_combinations_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bars", type=int, default=105_120)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--screen-window", choices=["score", "full"], default="score",
                    help="score.screen_window of every configuration")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    d = Path(tempfile.mkdtemp(prefix="sieve-frames-"))
    data = five_minute_bars(d, a.bars)
    configs = {}
    for name, text in [("plain", PLAIN), ("daily filter", FILTERED), ("filter n swept", SWEPT)]:
        path = d / (name.replace(" ", "_") + ".toml")
        path.write_text(text.replace("[score]\n", f'[score]\nscreen_window = "{a.screen_window}"\n'))
        configs[name] = path
    rates = {name: [] for name in configs}
    for _ in range(a.runs):
        for name, path in configs.items():
            rates[name].append(rate(path, data, a.threads, d))
    plain = rates["plain"]
    print(f"{a.bars} five-minute bars, {a.threads} threads, {a.runs} runs interleaved, "
          f"screen window {a.screen_window}")
    for name, r in rates.items():
        ratio = statistics.median(r) / statistics.median(plain)
        paired = statistics.median(x / p for x, p in zip(r, plain))
        print(f"{name:16} median {statistics.median(r):.3e} bar-combinations/s  "
              f"vs plain {ratio:.2f}x (paired {paired:.2f}x)")


if __name__ == "__main__":
    main()
