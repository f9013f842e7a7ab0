#!/usr/bin/env python3
"""Times the sieve CLI end to end on synthetic data (release build).

    python3 scripts/bench_cli.py [--runs 5] [--quick]
    python3 scripts/bench_cli.py --data-only --runs 7 --baseline /path/to/old/sieve

Prints medians of several runs (wall seconds, from this script's clock) and
the throughput sieve reports in sweep.meta.json. Every number in
BENCHMARKS.md comes from this script; record the machine with it.
"""
import argparse, json, os, platform, resource, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIEVE = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "sieve")

ACTIVATION_1M = """
[strategy]
name = "activation"
[strategy.params]
trend_len = { start = 20, stop = 200, step = 20 }
rsi_len = { values = [7, 14, 21] }
dc_len = { start = 10, stop = 50, step = 10 }
atr_len = { values = [10, 14, 20] }
w_trend = { values = [0.5, 1.0] }
w_rsi = { start = 0, stop = 1, step = 0.5 }
w_dc = { values = [0.5, 1.0] }
entry = { start = 0.1, stop = 0.7, step = 0.1 }
exit = { start = -0.3, stop = 0.3, step = 0.1 }
stop_atr = { start = 0, stop = 4, step = 1 }
[score]
score_start = "2019-01-01"
"""

SMA_ALL = """
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 500, step = 1 }
slow = { start = 2, stop = 500, step = 1 }
[score]
score_start = "2019-01-01"
"""

SMA_RULES = SMA_ALL.replace(
    'name = "sma_cross"',
    'name = "sma_rules"\n'
    'entry = "cross_above(sma(close, fast), sma(close, slow))"\n'
    'exit = "cross_below(sma(close, fast), sma(close, slow))"',
)

# The rule sma_cross with a stop-loss and a take-profit swept, on a grid of
# about the same size (fast, slow every 3rd of 2..500; 3 × 3 levels).
SMA_BRACKET = SMA_RULES.replace(
    'name = "sma_rules"',
    'name = "sma_bracket"',
).replace(
    'exit = "cross_below(sma(close, fast), sma(close, slow))"',
    'exit = "cross_below(sma(close, fast), sma(close, slow))"\n'
    'stop_loss = "sl"\ntake_profit = "tp"',
).replace(
    "fast = { start = 2, stop = 500, step = 1 }\nslow = { start = 2, stop = 500, step = 1 }",
    "fast = { start = 2, stop = 500, step = 3 }\nslow = { start = 2, stop = 500, step = 3 }\n"
    "sl = { values = [0.02, 0.05, 0.1] }\ntp = { values = [0.05, 0.1, 0.2] }",
)
assert "stop_loss" in SMA_BRACKET and "sl = {" in SMA_BRACKET

# The same grid with an entry order and a moving stop (issue 49): a buy
# stop at the deciding bar's high, a stop trailing the close by `sl`.
SMA_ORDERS = SMA_BRACKET.replace('name = "sma_bracket"', 'name = "sma_orders"').replace(
    'stop_loss = "sl"', 'entry_stop = "high"\nstop_level = "close * (1 - sl)"'
)
assert "entry_stop" in SMA_ORDERS and "stop_level" in SMA_ORDERS

# examples/strategies/macd.toml's strategy on a grid of 109,200 points
# (103,200 combinations with fast < slow).
MACD_BIG = """
[strategy]
name = "macd_trend"
entry = "cross_above(macd, signal) and close > sma(close, trend)"
exit = "cross_below(macd, signal)"
constraints = ["fast < slow"]
[strategy.define]
macd = "ema(close, fast) - ema(close, slow)"
signal = "ema(macd, sig)"
[strategy.params]
fast = { start = 4, stop = 30, step = 2 }
slow = { start = 20, stop = 80, step = 5 }
sig = { values = [5, 9, 13] }
trend = { start = 50, stop = 448, step = 2 }
[score]
score_start = "40%"
holdout_start = "80%"
"""

# The seed's two-window screen (issue 34): the screen ranks by the full
# window, verification reads the score window; and a full-window screen
# with no score window (the very bars the default screen reads).
SCORE_40 = 'score_start = "40%"'
SMA_SCREEN = {
    "score window": SMA_ALL.replace('score_start = "2019-01-01"', SCORE_40),
    "full + score window": SMA_ALL.replace('score_start = "2019-01-01"', SCORE_40 + '\nscreen_window = "full"'),
    "full, no score window": SMA_ALL.replace('score_start = "2019-01-01"', 'screen_window = "full"'),
}
RULE_SCREEN = {name: text.replace('name = "sma_cross"', SMA_RULES.split("[strategy]\n")[1].split("constraints")[0].strip())
               for name, text in SMA_SCREEN.items()}
ACT_SCREEN = {
    "score window": ACTIVATION_1M.replace('score_start = "2019-01-01"', SCORE_40),
    "full + score window": ACTIVATION_1M.replace('score_start = "2019-01-01"', SCORE_40 + '\nscreen_window = "full"'),
}


# The stateful functions against `ema` of the same windows (issue 32): one
# rule shape, `close` against the line (or the ADX against a level), every
# window 2..400 and ten thresholds k.
def function_grid(name, line, setting):
    return f"""
[strategy]
name = "{name}"
entry = "{line} * k > {'25' if name == 'adx' else 'close'}"
exit = "{line} < {'20' if name == 'adx' else 'close'}"
[strategy.params]
{setting}
k = {{ start = 0.9, stop = 1.35, step = 0.05 }}
[score]
score_start = "40%"
"""


WINDOWS = "n = { start = 2, stop = 400, step = 1 }"
FUNCTION_GRIDS = {
    "ema": function_grid("ema", "ema(close, n)", WINDOWS),
    "supertrend": function_grid("supertrend", "supertrend(n, 3)", WINDOWS),
    "adx": function_grid("adx", "adx(n)", WINDOWS),
    # sar has no window: as many settings of its step (within its cap, 0.2).
    "sar": function_grid("sar", "sar(a, 0.2)", "a = { start = 0.0005, stop = 0.1995, step = 0.0005 }"),
}

DEFAULT_GRID = """
[strategy]
name = "activation"
[score]
score_start = "2019-01-01"
"""


def run(args, binary=None, **kw):
    t = time.perf_counter()
    subprocess.run([binary or SIEVE] + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t


def median_time(args, runs):
    return statistics.median(run(args) for _ in range(runs))


def peak_rss_mb(args):
    """Peak RSS of one run, from the kernel's accounting of a fresh child."""
    code = (
        "import resource,subprocess,sys;"
        "subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code, SIEVE] + args, check=True, capture_output=True, text=True)
    return int(out.stdout.strip()) / 1024.0


def meta(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the 1M-combination sweeps")
    ap.add_argument("--rules-only", action="store_true", help="only the rule-strategy section")
    ap.add_argument("--windows-only", action="store_true",
                    help="only the screen-window configurations (score window, full window with and without one)")
    ap.add_argument("--functions-only", action="store_true",
                    help="only the stateful functions (sar, supertrend, adx) against ema of the same windows")
    ap.add_argument("--detail-only", action="store_true",
                    help="only data.detail: a bracket on hourly bars with and without one-minute detail bars")
    ap.add_argument("--data-only", action="store_true", help="only the data section (formats, instruments)")
    ap.add_argument("--baseline", help="an older sieve binary the data section also times, interleaved")
    ap.add_argument("--portfolio-only", action="store_true",
                    help="only the portfolio section: [portfolio] against score.aggregate, and vectorbt per combination")
    ap.add_argument("--gpu-only", action="store_true",
                    help="only the GPU section: generated rule kernel vs hand-written (builds with --features gpu)")
    a = ap.parse_args()
    build = ["cargo", "build", "--release", "-q"] + (["--features", "gpu"] if a.gpu_only else [])
    subprocess.run(build, cwd=ROOT, check=True)
    d = tempfile.mkdtemp(prefix="sieve-bench-")
    p = lambda name: os.path.join(d, name)
    for name, text in [("act1m.toml", ACTIVATION_1M), ("sma.toml", SMA_ALL), ("default.toml", DEFAULT_GRID),
                       ("sma_rules.toml", SMA_RULES), ("macd_big.toml", MACD_BIG),
                      ("sma_bracket.toml", SMA_BRACKET), ("sma_orders.toml", SMA_ORDERS)]:
        with open(p(name), "w") as f:
            f.write(text)
    run(["synth", "--bars", "4000", "--seed", "42", "--out", p("bars.csv")])
    common = ["--data", p("bars.csv")]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, {platform.platform()}")
    print(f"runs per median: {a.runs}\n")
    if a.rules_only:
        rules(p, common, a.runs)
        return
    if a.data_only:
        data(p, a.runs, a.baseline)
        return
    if a.windows_only:
        windows(p, common, a.runs, a.quick)
        return
    if a.functions_only:
        functions(p, common, a.runs)
        return
    if a.detail_only:
        detail(p, a.runs)
        return
    if a.gpu_only:
        gpu(p, common, a.runs)
        return
    if a.portfolio_only:
        portfolio(p, a.runs)
        return

    # Candidates: the top 50,000 of a real sweep of the default activation grid.
    run(["sweep", "--config", p("default.toml")] + common + ["--out", p("cands.csv"), "--top", "50000"])

    print("== verify (end to end through the CLI, loading included)")
    v5 = ["verify", "--config", p("default.toml")] + common + ["--candidates", p("cands.csv"), "--out", p("v.csv"), "--top", "5000", "--threads"]
    # 1 and 2 threads interleaved, so machine noise hits both alike.
    t1s, t2s = [], []
    for _ in range(4 * a.runs):
        t1s.append(run(v5 + ["1"]))
        t2s.append(run(v5 + ["2"]))
    t1, t2 = statistics.median(t1s), statistics.median(t2s)
    print(f"5,000 activation candidates x 4,000 bars: 1 thread {t1:.3f} s, 2 threads {t2:.3f} s, speed-up {t1 / t2:.2f}x")
    print(f"  original spec ceiling 300 s on 20 threads: {300 / t2:,.0f}x faster")
    t50 = median_time(["verify", "--config", p("default.toml")] + common + ["--candidates", p("cands.csv"), "--out", p("v.csv"), "--top", "50000", "--threads", "2"], max(1, a.runs // 2))
    print(f"50,000 candidates, 2 threads: {t50:.3f} s = {50000 / t50:,.0f} candidates/s (5,000: {5000 / t2:,.0f}/s)\n")

    print("== sweep")
    rates = []
    for _ in range(a.runs):
        run(["sweep", "--config", p("sma.toml")] + common + ["--out", p("sma.csv")])
        rates.append(meta(p("sma.meta.json"))["timings"]["bar_combinations_per_s"])
    m = meta(p("sma.meta.json"))
    print(f"sma_cross all 2 <= fast < slow <= 500 ({m['objective_stats']['combinations_evaluated']:,} combinations x 4,000 bars): median {statistics.median(rates):.3e} bar-combinations/s")

    if not a.quick:
        rates, walls = [], []
        for _ in range(max(1, a.runs // 2)):
            walls.append(run(["sweep", "--config", p("act1m.toml")] + common + ["--out", p("act.csv")]))
            rates.append(meta(p("act.meta.json"))["timings"]["bar_combinations_per_s"])
        m = meta(p("act.meta.json"))
        n = m["objective_stats"]["combinations_evaluated"]
        rate = statistics.median(rates)
        print(f"activation grid of {n:,} combinations x 4,000 bars: median {rate:.3e} bar-combinations/s, wall {statistics.median(walls):.2f} s")
        print(f"  projected 50,000,000 combinations: {50e6 * 4000 / rate / 60:.1f} min")
        rss = peak_rss_mb(["sweep", "--config", p("act1m.toml")] + common + ["--out", p("act.csv")])
        print(f"  peak RSS: {rss:.0f} MB")
        k5, k1 = [], []
        for _ in range(max(2, a.runs // 2)):  # interleaved so drift hits both
            k5.append(run(["sweep", "--config", p("act1m.toml")] + common + ["--out", p("k5.csv"), "--top", "5000"]))
            k1.append(run(["sweep", "--config", p("act1m.toml")] + common + ["--out", p("k1.csv"), "--top", "1000"]))
        a5, a1 = statistics.median(k5), statistics.median(k1)
        print(f"  K=5000 {a5:.2f} s vs K=1000 {a1:.2f} s: difference {100 * (a5 - a1) / a1:+.1f}%")

    rules(p, common, a.runs)
    functions(p, common, a.runs)
    windows(p, common, a.runs, a.quick)
    data(p, a.runs, a.baseline)
    portfolio(p, a.runs)


# 10 instruments x 5,000 daily bars, every third on weekdays only; sma_cross
# over fast 2..201 x slow 210..709: 100,000 combinations.
PORTFOLIO_GRID = """
[strategy]
name = "sma_cross"
[strategy.params]
fast = { start = 2, stop = 201, step = 1 }
slow = { start = 210, stop = 709, step = 1 }
[backtest]
fee = 0.001
slippage = 0.0005
"""

# The same instruments held at target weights: the `top` strongest by
# momentum over `n` bars, rebalanced on Mondays; 20 x 5 = 100 combinations.
WEIGHTS_GRID = """
[strategy.params]
n = { start = 10, stop = 200, step = 10 }
top = { start = 1, stop = 5, step = 1 }
[backtest]
fee = 0.001
slippage = 0.0005
[portfolio]
weight = "if(rank(close / shift(close, n)) <= top, 1 / top, 0)"
rebalance = "weekday == 0"
"""


def portfolio(p, runs):
    print("\n== portfolio: 10 instruments x 5,000 daily bars, one account ([portfolio]) vs score.aggregate")
    names = []
    for k in range(10):
        path = p(f"pf{k}.csv")
        run(["synth", "--bars", "5000", "--seed", str(100 + k), "--out", path])
        if k % 3 == 1:  # weekdays only: another calendar
            import datetime
            with open(path) as f:
                lines = f.readlines()
            keep = [lines[0]] + [l for l in lines[1:] if datetime.date.fromisoformat(l[:10]).weekday() < 5]
            with open(path, "w") as f:
                f.writelines(keep)
        names.append(path)
    paths = "[data]\npaths = [" + ", ".join(f'"{n}"' for n in names) + "]\n"
    with open(p("agg.toml"), "w") as f:
        f.write(paths + PORTFOLIO_GRID)
    with open(p("pf.toml"), "w") as f:
        f.write(paths + PORTFOLIO_GRID + '[portfolio]\nsize = 0.2\nsize_of = "cash"\nmax_positions = 5\n')
    rates = {"agg": [], "pf": []}
    walls = {"agg": [], "pf": []}
    for _ in range(runs):  # interleaved
        for c in ("agg", "pf"):
            walls[c].append(run(["sweep", "--config", p(f"{c}.toml"), "--out", p(f"{c}.csv"), "--top", "1000"]))
            rates[c].append(meta(p(f"{c}.meta.json"))["timings"]["bar_combinations_per_s"])
    m = meta(p("pf.meta.json"))
    n = m["objective_stats"]["combinations_evaluated"]
    ra, rp = statistics.median(rates["agg"]), statistics.median(rates["pf"])
    print(f"sma_cross, {n:,} combinations: score.aggregate {ra:.3e} instrument-bar-combinations/s "
          f"(wall {statistics.median(walls['agg']):.2f} s); [portfolio] {rp:.3e} "
          f"(wall {statistics.median(walls['pf']):.2f} s): ratio {rp / ra:.2f}")
    per_comb = statistics.median(walls["pf"]) / n
    print(f"  [portfolio]: {per_comb * 1e6:.1f} us per combination (whole process, 2 threads)")
    rss = peak_rss_mb(["sweep", "--config", p("pf.toml"), "--out", p("pf.csv"), "--top", "1000"])
    print(f"  peak RSS of the portfolio sweep: {rss:.0f} MB")
    # Target weights (portfolio.weight): a momentum rotation whose rank()
    # reads a parameter, so every combination computes its weights.
    with open(p("w.toml"), "w") as f:
        f.write(paths + WEIGHTS_GRID)
    wall = statistics.median(run(["sweep", "--config", p("w.toml"), "--out", p("w.csv"), "--top", "1000"])
                             for _ in range(runs))
    n = meta(p("w.meta.json"))["objective_stats"]["combinations_evaluated"]
    per_w = wall / n
    print(f"  target weights (rank of a swept momentum, weekly): {n:,} combinations, "
          f"{per_w * 1e6:.0f} us per combination (whole process, 2 threads)")
    try:
        out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_weights.py"), "--files"] + names,
                             check=True, capture_output=True, text=True).stdout
        vbt_w = float(out.split("per combination:")[1].split()[0]) / 1e6
        print(f"  vectorbt from_orders(targetpercent) + the weights in pandas + three metrics: "
              f"{vbt_w * 1e6:.0f} us per combination: sieve {vbt_w / per_w:.0f}x faster")
    except (subprocess.CalledProcessError, FileNotFoundError, IndexError) as e:
        print(f"  vectorbt weights: not timed ({e})")
    try:
        out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "bench_portfolio.py"), "--grid", "200",
                              "--runs", "3", "--files"] + names, check=True, capture_output=True, text=True).stdout
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        print(f"  vectorbt: not timed ({e})")
        return
    vbt_per = float(out.split("per combination:")[1].split()[0]) / 1e6
    print(f"  vectorbt from_signals(cash_sharing=True) + total return, Sharpe, max drawdown on 200 combinations: "
          f"{vbt_per * 1e6:.0f} us per combination: sieve {vbt_per / per_comb:.0f}x faster")


def windows(p, common, runs, quick):
    print("\n== screen windows: the seed's full-window screen with a score window, and without one")
    groups = [("sma_cross", SMA_SCREEN), ("sma_cross as rules", RULE_SCREEN)]
    outputs = {}
    if not quick:
        groups.append(("activation 1.16M", ACT_SCREEN))
    for label, configs in groups:
        rates = {name: [] for name in configs}
        walls = {name: [] for name in configs}
        files = {}
        for i, (name, text) in enumerate(configs.items()):
            files[name] = p(f"win{i}_{label.split()[0]}.toml")
            with open(files[name], "w") as f:
                f.write(text)
        for _ in range(runs if "activation" not in label else max(1, runs // 2)):  # interleaved
            for name in configs:
                out = files[name].replace(".toml", ".csv")
                walls[name].append(run(["sweep", "--config", files[name]] + common + ["--out", out]))
                rates[name].append(meta(out.replace(".csv", ".meta.json"))["timings"]["bar_combinations_per_s"])
        base = statistics.median(walls["score window"])
        for name in configs:
            w = statistics.median(walls[name])
            print(f"{label:20} {name:22} median {statistics.median(rates[name]):.3e} bar-comb/s, wall {w:.3f} s "
                  f"({w / base:.2f}x the score-window screen's time)")
        outputs[label] = {name: files[name].replace(".toml", ".csv") for name in configs}
    rows = lambda path: open(path).read().split("\n", 1)[1]
    for name, path in outputs["sma_cross"].items():
        same = rows(path) == rows(outputs["sma_cross as rules"][name])
        print(f"sweep rows of the rule sma_cross identical to the built-in's ({name}): {same}")


def functions(p, common, runs):
    print("\n== stateful functions against ema of the same windows (399 settings x 10 thresholds)")
    rates = {name: [] for name in FUNCTION_GRIDS}
    walls = {name: [] for name in FUNCTION_GRIDS}
    for name, text in FUNCTION_GRIDS.items():
        with open(p(f"fn_{name}.toml"), "w") as f:
            f.write(text)
    for _ in range(runs):  # interleaved, so noise hits every function alike
        for name in FUNCTION_GRIDS:
            walls[name].append(run(["sweep", "--config", p(f"fn_{name}.toml")] + common + ["--out", p(f"fn_{name}.csv")]))
            rates[name].append(meta(p(f"fn_{name}.meta.json"))["timings"]["bar_combinations_per_s"])
    base = statistics.median(rates["ema"])
    for name in FUNCTION_GRIDS:
        r = statistics.median(rates[name])
        n = meta(p(f"fn_{name}.meta.json"))["objective_stats"]["combinations_evaluated"]
        print(f"{name:10} {n:,} combinations: median {r:.3e} bar-comb/s, wall {statistics.median(walls[name]):.3f} s; "
              f"ema's time / this time = {r / base:.2f}")


def gpu(p, common, runs):
    print("\n== GPU: the generated kernel of the rule sma_cross vs the hand-written sma_cross kernel")
    rates = {"builtin": [], "rules": []}
    for _ in range(runs):  # interleaved
        for kind, cfg in [("builtin", "sma.toml"), ("rules", "sma_rules.toml")]:
            run(["sweep", "--backend", "gpu", "--config", p(cfg)] + common + ["--out", p("gpu_" + kind + ".csv")])
            rates[kind].append(meta(p("gpu_" + kind + ".meta.json"))["timings"]["bar_combinations_per_s"])
    same = open(p("gpu_builtin.csv")).read().split("\n", 1)[1] == open(p("gpu_rules.csv")).read().split("\n", 1)[1]
    rb, rr = statistics.median(rates["builtin"]), statistics.median(rates["rules"])
    n = meta(p("gpu_rules.meta.json"))["objective_stats"]["combinations_evaluated"]
    print(f"sma_cross all 2 <= fast < slow <= 500 ({n:,} combinations x 4,000 bars) on the GPU backend: "
          f"hand-written {rb:.3e} bar-comb/s, generated {rr:.3e} bar-comb/s: generated / hand-written = {rr / rb:.2f}; "
          f"sweep rows identical: {same}")


def data(p, runs, baseline=None):
    print("\n== data: 1,000,000 one-minute bars through `sieve backtest` (load + one backtest)")
    files = {ext: p("minute." + ext) for ext in ["csv", "parquet", "feather"]}
    for path in files.values():
        run(["synth", "--bars", "1000000", "--bar-seconds", "60", "--out", path])
    small = p("small.parquet")
    run(["synth", "--bars", "1000", "--bar-seconds", "60", "--out", small])
    bt = ["backtest", "--strategy", "sma_cross", "--set", "fast=10", "--set", "slow=50", "--json", "--data"]
    outs = {ext: subprocess.run([SIEVE] + bt + [path], check=True, capture_output=True).stdout for ext, path in files.items()}
    # With --baseline, an older binary runs each file too, interleaved.
    binaries = {"": SIEVE} | ({"baseline ": baseline} if baseline else {})
    times = {(b, ext): [] for b in binaries for ext in files}
    for _ in range(runs):  # interleaved, so noise hits every format (and binary) alike
        for b, binary in binaries.items():
            for ext, path in files.items():
                times[(b, ext)].append(run(bt + [path], binary=binary))
    csv_t = statistics.median(times[("", "csv")])
    constant = peak_rss_mb(bt + [small])
    print(f"peak RSS of the same backtest on 1,000 bars (the constant): {constant:.0f} MB; "
          f"the bars' own size (time, open, high, low, close, volume): 48 MB")
    for ext, path in files.items():
        t = statistics.median(times[("", ext)])
        line = f"{ext:8} {os.path.getsize(path) / 1e6:6.1f} MB: median {t:.3f} s ({csv_t / t:.2f}x CSV's speed)"
        if baseline:
            old = statistics.median(times[("baseline ", ext)])
            line += f"; baseline {old:.3f} s ({old / t:.2f}x)"
        rss = peak_rss_mb(bt + [path])
        line += f"; peak RSS {rss:.0f} MB ({rss - constant:.0f} MB above the constant)"
        print(line)
    print(f"backtests identical across formats: {len(set(outs.values())) == 1}")

    print("\n== one grid over 3 instruments (4,000 daily bars each) vs 3 single sweeps")
    for seed in (1, 2, 3):
        run(["synth", "--bars", "4000", "--seed", str(seed), "--out", p(f"inst{seed}.csv")])
    with open(p("multi.toml"), "w") as f:
        f.write(SMA_ALL + '[data]\npaths = ["inst1.csv", "inst2.csv", "inst3.csv"]\n')
    multi, singles = [], []
    for _ in range(runs):
        multi.append(run(["sweep", "--config", p("multi.toml"), "--out", p("multi.csv")]))
        singles.append(sum(run(["sweep", "--config", p("sma.toml"), "--data", p(f"inst{seed}.csv"), "--out", p("single.csv")])
                           for seed in (1, 2, 3)))
    tm, ts = statistics.median(multi), statistics.median(singles)
    m = meta(p("multi.meta.json"))
    print(f"sma_cross all 2 <= fast < slow <= 500 ({m['objective_stats']['combinations_evaluated']:,} combinations): "
          f"3 instruments in one sweep {tm:.3f} s vs 3 single sweeps {ts:.3f} s: ratio {tm / ts:.2f}; "
          f"{m['timings']['bar_combinations_per_s']:.3e} bar-combinations/s")


def rules(p, common, runs):
    print("\n== rule strategies")
    # The built-in and its rule version interleaved, so noise hits both.
    walls = {"builtin": [], "rules": []}
    screen = {"builtin": [], "rules": []}
    for _ in range(2 * runs):
        for kind, cfg in [("builtin", "sma.toml"), ("rules", "sma_rules.toml")]:
            walls[kind].append(run(["sweep", "--config", p(cfg)] + common + ["--out", p(kind + ".csv")]))
            screen[kind].append(meta(p(kind + ".meta.json"))["timings"]["screen_s"])
    same = open(p("builtin.csv")).read().split("\n", 1)[1] == open(p("rules.csv")).read().split("\n", 1)[1]
    wb, wr = statistics.median(walls["builtin"]), statistics.median(walls["rules"])
    sb, sr = statistics.median(screen["builtin"]), statistics.median(screen["rules"])
    print(f"sma_cross all 2 <= fast < slow <= 500, 4,000 bars: built-in wall {wb:.3f} s (screen {sb:.3f} s), "
          f"rules wall {wr:.3f} s (screen {sr:.3f} s): rules / built-in = {wr / wb:.2f}x wall, {sr / sb:.2f}x screen; "
          f"sweep rows identical: {same}")
    # Trade management: the same rule with a swept stop-loss × take-profit
    # (about as many combinations), interleaved with the plain rule.
    rates = {"rules": [], "bracket": [], "orders": []}
    for _ in range(2 * runs):
        for kind, cfg in [("rules", "sma_rules.toml"), ("bracket", "sma_bracket.toml"),
                          ("orders", "sma_orders.toml")]:
            run(["sweep", "--config", p(cfg)] + common + ["--out", p(kind + ".csv")])
            rates[kind].append(meta(p(kind + ".meta.json"))["timings"]["bar_combinations_per_s"])
    rr, rb = statistics.median(rates["rules"]), statistics.median(rates["bracket"])
    n = meta(p("bracket.meta.json"))["objective_stats"]["combinations_evaluated"]
    print(f"rule sma_cross {rr:.3e} bar-combinations/s; with stop_loss x take_profit swept ({n:,} combinations) "
          f"{rb:.3e}: {rb / rr:.2f} of the plain rule's rate")
    ro = statistics.median(rates["orders"])
    print(f"  with entry_stop and stop_level instead of the stop-loss: {ro:.3e}: {ro / rb:.2f} of the bracket's rate")
    for cfg, label in [(os.path.join(ROOT, "examples", "strategies", "macd.toml"), "MACD example grid"),
                       (p("macd_big.toml"), "MACD, grid of 109,200 (103,200 with fast < slow)")]:
        rates, walls = [], []
        for _ in range(runs):
            walls.append(run(["sweep", "--config", cfg] + common + ["--out", p("macd.csv")]))
            rates.append(meta(p("macd.meta.json"))["timings"]["bar_combinations_per_s"])
        n = meta(p("macd.meta.json"))["objective_stats"]["combinations_evaluated"]
        print(f"{label} ({n:,} combinations): median {statistics.median(rates):.3e} bar-combinations/s, wall {statistics.median(walls):.3f} s")


DETAIL_LEVEL = """
[data]
path = "hourly.csv"
detail = "detail.csv"
[strategy]
name = "sma_level_bracket"
entry = "close > sma(close, n)"
exit = "close < sma(close, n)"
stop_loss = "sl"
take_profit = "tp"
[strategy.params]
n = { start = 2, stop = 501, step = 1 }
sl = { values = [0.003, 0.0035, 0.004] }
tp = { values = [0.003, 0.0035, 0.004] }
[score]
score_start = "2016-06-01"
"""


def detail(p, runs):
    """data.detail: one-minute detail bars under 20,000 hourly bars, a
    stop-loss x take-profit tight enough that about 1 % of bars touch
    both; interleaved with the same sweep without the detail file."""
    print("\n== data.detail")
    run(["synth", "--bars", "20000", "--bar-seconds", "3600", "--detail", p("detail.csv"),
         "--detail-per-bar", "60", "--out", p("hourly.csv")])
    with open(p("detail.toml"), "w") as f:
        f.write(DETAIL_LEVEL)
    with open(p("plain.toml"), "w") as f:
        f.write(DETAIL_LEVEL.replace('detail = "detail.csv"\n', ""))
    # The share of bars walked, over a sample of the grid (whole data).
    walked = []
    for n in (20, 100, 300):
        for sl in ("0.003", "0.0035", "0.004"):
            for tp in ("0.003", "0.0035", "0.004"):
                out = subprocess.run([SIEVE, "backtest", "-c", p("detail.toml"), "--json", "--set", f"n={n}",
                                      "--set", f"sl={sl}", "--set", f"tp={tp}"],
                                     capture_output=True, text=True, check=True).stdout
                walked.append(json.loads(out)["detail"]["walked"] / 20000)
    walls = {"plain": [], "detail": []}
    rates = {"plain": [], "detail": []}
    for _ in range(runs):
        for kind in ("plain", "detail"):
            walls[kind].append(run(["sweep", "--config", p(kind + ".toml"), "--out", p(kind + ".sweep.csv")]))
            rates[kind].append(meta(p(kind + ".sweep.meta.json"))["timings"]["bar_combinations_per_s"])
    rp, rd = statistics.median(rates["plain"]), statistics.median(rates["detail"])
    wp, wd = statistics.median(walls["plain"]), statistics.median(walls["detail"])
    n = meta(p("detail.sweep.meta.json"))["objective_stats"]["combinations_evaluated"]
    print(f"level sma rule with stop_loss x take_profit ({n:,} combinations), 20,000 hourly bars: bars walked on "
          f"detail bars {statistics.mean(walked):.2%} on average (sample of 27, {min(walked):.2%} .. {max(walked):.2%})")
    print(f"  screen {rp:.3e} bar-combinations/s without detail, {rd:.3e} with 1,200,000 detail bars: "
          f"cost {rp / rd:.2f}x; wall {wp:.3f} s vs {wd:.3f} s ({wd / wp:.2f}x, the detail file's reading included)")


if __name__ == "__main__":
    main()
