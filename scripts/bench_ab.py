#!/usr/bin/env python3
"""Two sieve binaries screening the same grid, interleaved (A, B, A, B, ...).

The development machines are shared and noisy: the same command varies by
20-40 % between minutes, so a speed-up is only believable as a ratio of runs
taken side by side. This prints each binary's median and best screening
rate (`timings.bar_combinations_per_s` of `sieve sweep`'s meta file), the
ratio of the medians and the median of the paired ratios.

    python3 scripts/bench_ab.py OLD_BINARY NEW_BINARY --grid sma --runs 8
    python3 scripts/bench_ab.py target/release/sieve target/release/sieve --grid activation

Grids: `sma` (sma_cross, all 2 <= fast < slow <= 500, 124,251 combinations),
`activation` (the 1,323,000-combination grid of bench_cli.py), and rule
strategies: `sma_rules` (the `sma` grid as a rule strategy), `bracket` (the
rule sma_cross with stop_loss x take_profit swept: bench_cli.py's SMA_BRACKET), `macd`
(bench_cli.py's MACD grid, 109,200 combinations, 103,200 allowed), and the RSI, Bollinger and
weighted-score examples of examples/strategies on larger grids, on
`sieve synth --bars 4000 --seed 42`, scored as each grid says, 2 threads
unless --threads says otherwise. `NAME_full` (sma, sma_rules, macd, bracket)
screens the same grid over the full window beside a 40 % score window.
"""

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# The grids bench_cli.py times, one definition for both scripts.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cli import ACTIVATION_1M, MACD_BIG, SMA_ALL, SMA_BRACKET, SMA_RULES, meta  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "strategies"


def example(name: str, extra: str = "", **grids: str) -> str:
    """The strategy of examples/strategies/NAME with the grids of some
    parameters replaced (`key = value` lines), and `extra` appended."""
    text = (EXAMPLES / name).read_text()
    for key, value in grids.items():
        text, n = re.subn(rf"^{key} = .*$", f"{key} = {value}", text, flags=re.M)
        assert n == 1, f"{name}: {key}"
    return text + extra


# The shipped rule examples on larger grids (111,274, 29,596 and 33,516
# combinations).
RSI_RULES = example(
    "rsi_reversion.toml",
    '[score]\nscore_start = "2019-01-01"\n',
    period="{ start = 2, stop = 60, step = 1 }",
    lower="{ start = 5, stop = 45, step = 1 }",
    upper="{ start = 50, stop = 95, step = 1 }",
)
BOLLINGER = example(
    "bollinger_reversion.toml",
    n="{ start = 5, stop = 200, step = 1 }",
    k="{ start = 0.5, stop = 3.5, step = 0.02 }",
)
WEIGHTED_SCORE = example(
    "weighted_score.toml",
    trend_len="{ start = 20, stop = 200, step = 10 }",
    entry_at="{ start = 0.1, stop = 0.7, step = 0.1 }",
    exit_at="{ start = -0.3, stop = 0.3, step = 0.1 }",
)

GRIDS = {
    "sma": SMA_ALL,
    "activation": ACTIVATION_1M,
    "sma_rules": SMA_RULES,
    "bracket": SMA_BRACKET,
    "macd": MACD_BIG,
    "rsi_rules": RSI_RULES,
    "bollinger": BOLLINGER,
    "weighted_score": WEIGHTED_SCORE,
}
# The same grids screened over the full window beside a 40 % score window
# (the seed's two-window screen), for the ones users run that way too.
FULL = 'score_start = "40%"\nscreen_window = "full"'
for name in ["sma", "sma_rules", "macd", "bracket"]:
    GRIDS[name + "_full"] = re.sub(r'score_start = "[^"]*"', FULL, GRIDS[name], count=1)


def rate(binary: str, config: Path, bars: Path, threads: int, work: Path) -> float:
    out = work / "sweep.csv"
    subprocess.run(
        [binary, "sweep", "--config", str(config), "--data", str(bars),
         "--out", str(out), "--threads", str(threads)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return float(meta(work / "sweep.meta.json")["timings"]["bar_combinations_per_s"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the binary measured first in each pair (the baseline)")
    ap.add_argument("b", help="the binary compared with it")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="sma")
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bars = work / "bars.csv"
        subprocess.run(
            [args.a, "synth", "--bars", "4000", "--seed", "42", "--out", str(bars)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        config = work / "grid.toml"
        config.write_text(GRIDS[args.grid])
        a, b = [], []
        for i in range(args.runs):
            a.append(rate(args.a, config, bars, args.threads, work))
            b.append(rate(args.b, config, bars, args.threads, work))
            print(f"run {i + 1}: A {a[-1]:.3e}  B {b[-1]:.3e}", file=sys.stderr)
    med_a, med_b = statistics.median(a), statistics.median(b)
    paired = statistics.median(y / x for x, y in zip(a, b))
    print(f"{args.grid}, {args.runs} interleaved runs, {args.threads} threads "
          "(bar-combinations/s)")
    print(f"A: median {med_a:.3e}, best {max(a):.3e}")
    print(f"B: median {med_b:.3e}, best {max(b):.3e}")
    print(f"B/A: {med_b / med_a:.3f} by medians, {paired:.3f} paired")
    return 0


if __name__ == "__main__":
    sys.exit(main())
