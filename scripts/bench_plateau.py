#!/usr/bin/env python3
"""Does choosing from a plateau beat choosing the in-sample maximum, out of
sample? The benchmark of `robust.select` (docs/metrics.md, "Choosing the
best").

    python3 scripts/bench_plateau.py [--seeds 50] [--quick]

Needs the release CLI (`cargo build --release`) and, for the real series,
the `backtesting` package (its GOOG, EURUSD and BTCUSD series).

The decision rule, fixed before the first run: the primary test is a
paired one-sided Wilcoxon signed-rank test of `plateau` (mean of the
neighbourhood) against `argmax` on the real series' stitched out-of-sample
Sharpe ratios (`sieve walkforward`, one pair per series and strategy). The
default becomes `plateau` only if it wins there at p < 0.05. `plateau` with
`min` is reported beside it; the planted-edge synthetics are supporting
evidence only (they presuppose a plateau).

1. Planted edge, `--seeds` series of 3,000 bars: an oscillator x (a
   squashed AR(1), in (-1, 1)) whose next-bar return has a positive mean
   (+8 bp) only while 0.2 < x < 0.6, pure noise (1 % a bar) otherwise. The
   strategy holds while lo < x < lo + w; lo and w are swept (180
   combinations). Screened and verified on 30-70 %
   of the bars, judged on the holdout (the last 30 %) by `sieve optimize`.
2. Real series through `sieve walkforward` with four built-ins each.

Prints each pair, the medians, the paired differences and the tests.
"""
import argparse, json, math, os, subprocess, sys, tempfile
from itertools import product

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIEVE = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "sieve")

RULES = {"argmax": ["robust.select=\"argmax\""],
         "plateau-mean": ["robust.select=\"plateau\"", "robust.neighbour_aggregate=\"mean\""],
         "plateau-min": ["robust.select=\"plateau\"", "robust.neighbour_aggregate=\"min\""]}

PLANTED = """
[strategy]
name = "band"
entry = "x > lo and x < lo + w"
exit = "x <= lo or x >= lo + w"
[strategy.params]
lo = { start = -0.9, stop = 0.8, step = 0.1 }
w = { start = 0.1, stop = 1.0, step = 0.1 }
[backtest]
fill = "close"
[score]
objective = "sharpe"
score_start = "30%"
holdout_start = "70%"
[optimize]
iterations = 2
"""


def planted_series(path, seed, n=3000):
    import random
    rng = random.Random(seed)
    ar, x, price, rows = 0.0, [], 100.0, []
    for t in range(n):
        ar = 0.97 * ar + rng.gauss(0, 0.25)
        x.append(math.tanh(ar))
    for t in range(n):
        edge = 0.0008 if t > 0 and 0.2 < x[t - 1] < 0.6 else 0.0
        r = edge + rng.gauss(0, 0.01)
        prev, price = price, price * (1 + r)
        hi, lo = max(prev, price) * 1.002, min(prev, price) * 0.998
        rows.append((t, prev, hi, lo, price, x[t]))
    with open(path, "w") as f:
        f.write("date,open,high,low,close,x\n")
        for t, o, h, l, c, xx in rows:
            day = 1_000_000_000 + t * 86400
            f.write("%d,%r,%r,%r,%r,%r\n" % (day, o, h, l, c, xx))


def run(args, check=True):
    p = subprocess.run([SIEVE] + [str(a) for a in args], capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit("sieve %s failed:\n%s" % (" ".join(map(str, args)), p.stderr))
    return p


def overrides(rule):
    return [x for o in RULES[rule] for x in ("-O", o)]


def planted(seeds, work):
    config = os.path.join(work, "band.toml")
    with open(config, "w") as f:
        f.write(PLANTED)
    out = {r: [] for r in RULES}
    for seed in range(seeds):
        data = os.path.join(work, "planted-%d.csv" % seed)
        planted_series(data, seed)
        for rule in RULES:
            folder = os.path.join(work, "planted-%d-%s" % (seed, rule))
            run(["optimize", "--config", config, "--data", data, "--out", folder, "--restart"] + overrides(rule))
            with open(os.path.join(folder, "best.json")) as f:
                best = json.load(f)
            out[rule].append(best["windows"]["holdout"]["objective"])
    return out


REAL = {
    # series: (walkforward train, test)
    "GOOG": ("3y", "1y"),
    "EURUSD": ("3m", "1m"),
    "BTCUSD": ("5y", "2y"),
}
STRATEGIES = {
    "sma_cross": "[strategy]\nname = \"sma_cross\"\nconstraints = [\"fast < slow\"]\n[strategy.params]\nfast = { start = 2, stop = 40, step = 2 }\nslow = { start = 10, stop = 120, step = 5 }\n",
    "ema_cross": "[strategy]\nname = \"ema_cross\"\nconstraints = [\"fast < slow\"]\n[strategy.params]\nfast = { start = 2, stop = 40, step = 2 }\nslow = { start = 10, stop = 120, step = 5 }\n",
    "rsi_reversion": "[strategy]\nname = \"rsi_reversion\"\n",
    "donchian_breakout": "[strategy]\nname = \"donchian_breakout\"\n",
}


def real(work):
    from backtesting.test import BTCUSD, EURUSD, GOOG
    frames = {"GOOG": GOOG, "EURUSD": EURUSD, "BTCUSD": BTCUSD}
    out = {r: [] for r in RULES}
    labels = []
    for name, df in frames.items():
        data = os.path.join(work, name + ".csv")
        df.rename(columns=str.lower).rename_axis("date").to_csv(data)
        train, test = REAL[name]
        for strategy, text in STRATEGIES.items():
            config = os.path.join(work, "%s-%s.toml" % (name, strategy))
            with open(config, "w") as f:
                f.write(text + "[score]\nobjective = \"sharpe\"\n[optimize]\niterations = 2\n"
                        "[walkforward]\ntrain = \"%s\"\ntest = \"%s\"\n" % (train, test))
            row = {}
            for rule in RULES:
                folder = os.path.join(work, "wf-%s-%s-%s" % (name, strategy, rule))
                p = run(["walkforward", "--config", config, "--data", data, "--out", folder, "--restart"]
                        + overrides(rule), check=False)
                if p.returncode != 0:
                    print("  %s %s %s: %s" % (name, strategy, rule, p.stderr.strip().splitlines()[-1]))
                    break
                with open(os.path.join(folder, "walkforward.json")) as f:
                    row[rule] = json.load(f)["stitched"]["sharpe"]
            if len(row) == len(RULES) and all(v is not None for v in row.values()):
                labels.append("%s %s" % (name, strategy))
                for rule in RULES:
                    out[rule].append(row[rule])
    return labels, out


def wilcoxon_greater(d):
    """One-sided exact Wilcoxon signed-rank p-value that the differences
    `d` are centred above 0 (zeros dropped, average ranks for ties)."""
    d = [x for x in d if x != 0]
    n = len(d)
    if n == 0:
        return float("nan"), 0
    order = sorted(range(n), key=lambda i: abs(d[i]))
    ranks = [0.0] * n
    i = 0
    while i < n:
        j = i
        while j + 1 < n and abs(d[order[j + 1]]) == abs(d[order[i]]):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    w = sum(r for r, x in zip(ranks, d) if x > 0)
    # Exact null distribution of W+ over the 2^n sign patterns (ranks
    # doubled to stay integers with ties).
    counts = {0: 1}
    for r in ranks:
        r2 = int(round(2 * r))
        nxt = dict(counts)
        for s, c in counts.items():
            nxt[s + r2] = nxt.get(s + r2, 0) + c
        counts = nxt
    w2 = int(round(2 * w))
    p = sum(c for s, c in counts.items() if s >= w2) / 2 ** n
    return p, n


def report(title, labels, out):
    import statistics
    print("\n== %s (%d pairs)" % (title, len(out["argmax"])))
    if labels:
        print("%-28s %12s %14s %13s" % ("", "argmax", "plateau-mean", "plateau-min"))
        for i, label in enumerate(labels):
            print("%-28s %12.4f %14.4f %13.4f" % (label, out["argmax"][i], out["plateau-mean"][i], out["plateau-min"][i]))
    for rule in RULES:
        print("median %-13s %.4f" % (rule, statistics.median(out[rule])))
    for rule in ("plateau-mean", "plateau-min"):
        d = [a - b for a, b in zip(out[rule], out["argmax"])]
        wins = sum(x > 0 for x in d)
        losses = sum(x < 0 for x in d)
        p, n = wilcoxon_greater(d)
        print("%s - argmax: median difference %+.4f, %d wins, %d losses, %d ties; one-sided Wilcoxon p = %.4f (n = %d)"
              % (rule, statistics.median(d), wins, losses, len(d) - wins - losses, p, n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--quick", action="store_true", help="5 seeds, and the real series")
    a = ap.parse_args()
    seeds = 5 if a.quick else a.seeds
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="sieve-plateau-")
    print("work folder:", work)
    labels, out = real(work)
    report("real series, stitched walk-forward Sharpe (primary)", labels, out)
    report("planted edge, holdout Sharpe (%d seeds, supporting)" % seeds, [], planted(seeds, work))


if __name__ == "__main__":
    main()
