#!/usr/bin/env python3
"""Benchmarks of `[search]` (issue: search beyond the grid).

Three parts, each writing JSON under --work and printing a Markdown table:

  rank     The exhaustive rankings: `sieve sweep` of every combination of
           each enumerable case (~10^8), keeping the top 0.01 %. Minutes per
           case; the results are committed (scripts/bench_search/*.ranking.json:
           the grid size, the combinations the constraints allow, the top
           0.01 %'s scores and its first 100 rows with their settings), so
           `quality` never recomputes them.

  quality  `sieve optimize` with search.method = "random" and "evolve", 5
           seeds, at 0.2 % and 2 % of the allowed combinations (10
           generations each: batch = budget / 10): the rank of each run's
           best verified combination in the exhaustive ranking. The screen
           window is the score window and the CPU screen is exact, so the
           ranking's scores are the verified objective.

  peers    On ~10^12 spaces (a 10-parameter rule strategy on real daily
           data and on synthetic data): Optuna's TPE and CMA-ES samplers,
           each trial one exact `sieve.backtest` of the same strategy, data
           and config, at 10^3 and 10^4 trials (the first 10^3 trials of the
           10^4 run: both samplers are sequential and seeded, so this is
           the 10^3 run) against sieve's evolve and random searches at the
           same budgets and at 10^6 evaluations, 5 seeds each.

Protocol for `peers`, fixed before the first run:
  * objective: the score window's objective of the config (sharpe), as
    `best.json`'s `score`; a trial with fewer than `score.min_trades` trades
    scores -1e9 for Optuna (sieve ranks it last too);
  * per (case, seed) pair: sieve's best verified objective vs Optuna's best
    trial value, one-sided Wilcoxon signed-rank (scipy, alternative =
    "greater": sieve better), 10 pairs per comparison;
  * throughput: combinations evaluated per wall second of the whole run;
  * out of sample: each method's chosen best's holdout objective minus the
    grid + zoom's (the default optimize loop on the space coarsened to
    about 10^6 combinations, the way a grid user would run it), two-sided
    Wilcoxon signed-rank against 0.

Usage:
  python3 scripts/bench_search.py rank
  python3 scripts/bench_search.py quality --seeds 5
  python3 scripts/bench_search.py peers --seeds 5
  (or one case per process, then: report --from WORK1 WORK2)

Needs a release build (`cargo build --release`), and for `peers` the Python
package (`pip install ./python`) with optuna and scipy.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "scripts" / "bench_search"
SIEVE = os.environ.get("SIEVE_BIN", str(ROOT / "target" / "release" / "sieve"))

# Enumerable cases: (name, config, data).
CASES = [
    ("sma_rsi_bracket", "sma_rsi_bracket.toml", "goog"),
    ("breakout_filtered", "breakout_filtered.toml", "spy"),
    ("activation", "activation.toml", "synth"),
]
# ~10^12 cases for the comparison with Optuna.
BIG = [
    ("weighted_score_goog", "weighted_score_1e12.toml", "goog"),
    ("weighted_score_synth", "weighted_score_1e12.toml", "synth"),
]
TOP_SHARE = 1e-4


def data_file(work: Path, name: str) -> Path:
    """The case's bars as a CSV in `work`: GOOG (daily 2004–2013, from
    backtesting.py's test data), SPY (daily 2015–2018, this repository's
    tests/data/portfolio) or 3,000 synthetic daily bars (seed 7)."""
    path = work / f"{name}.csv"
    if path.exists():
        return path
    if name == "goog":
        from backtesting.test import GOOG

        GOOG.to_csv(path, index_label="date")
    elif name == "spy":
        shutil.copy(ROOT / "tests" / "data" / "portfolio" / "SPY.csv", path)
    elif name == "synth":
        subprocess.run([SIEVE, "synth", "--bars", "3000", "--seed", "7", "--out", str(path)],
                       check=True, capture_output=True)
    else:
        raise ValueError(name)
    return path


def sieve(*args, quiet=True):
    t = time.perf_counter()
    out = subprocess.run([SIEVE, *args], capture_output=quiet, text=True)
    if out.returncode != 0:
        sys.exit("sieve %s failed:\n%s" % (" ".join(args), out.stderr))
    return time.perf_counter() - t


def ranking_path(case: str) -> Path:
    return HERE / f"{case}.ranking.json"


def cmd_rank(args):
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    for case, config, data in CASES:
        if args.cases and case not in args.cases:
            continue
        out = work / f"{case}.sweep.csv"
        # Generous K: the allowed count is known only after the sweep.
        wall = sieve("sweep", "-c", str(HERE / config), "--data", str(data_file(work, data)),
                     "--out", str(out), "--top", "40000", quiet=False)
        meta = json.loads(Path(str(out)[:-4] + ".meta.json").read_text())
        allowed = meta["objective_stats"]["combinations_evaluated"]
        keep = math.ceil(allowed * TOP_SHARE)
        lines = out.read_text().splitlines()
        header = lines[0].split(",")
        rows = [dict(zip(header, line.split(","))) for line in lines[1:keep + 1]]
        record = {
            "case": case,
            "config": config,
            "data": data,
            "grid_size": meta["grid_size"],
            "allowed": allowed,
            "top_share": TOP_SHARE,
            "top_count": keep,
            "sweep_s": round(wall, 1),
            "machine": machine(),
            # The top 0.01 %'s scores, best first (9 significant digits).
            "scores": [float("%.9g" % float(r["score"])) for r in rows],
            "top": rows[:100],
        }
        write_ranking(record)
        print(f"{case}: {allowed} allowed of {meta['grid_size']}, top {keep} kept, sweep {wall:.0f} s")


def write_ranking(record):
    """The ranking as JSON: a row of the top per line, the scores on one."""
    head = {k: v for k, v in record.items() if k not in ("top", "scores")}
    text = json.dumps(head, indent=1)[:-2] + ',\n "top": [\n  '
    text += ",\n  ".join(json.dumps(r) for r in record["top"])
    text += '\n ],\n "scores": ' + json.dumps(record["scores"]) + "\n}\n"
    ranking_path(record["case"]).write_text(text)


def rank_of(score: float, scores) -> int:
    """1 + the exhaustive ranking's scores above `score` (scores beyond the
    kept top count as below: a rank past the top is reported as such)."""
    s = float("%.9g" % score)
    return 1 + sum(1 for x in scores if x > s)


def optimize(config: Path, data: Path, out: Path, *opts):
    if out.exists():
        shutil.rmtree(out)
    args = ["optimize", "-c", str(config), "--data", str(data), "--out", str(out)]
    for o in opts:
        args += ["-O", o]
    wall = sieve(*args)
    return json.loads((out / "best.json").read_text()), wall


def cmd_quality(args):
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results = []
    for case, config, data in CASES:
        ranking = json.loads(ranking_path(case).read_text())
        allowed, keep = ranking["allowed"], ranking["top_count"]
        for share in (0.002, 0.02):
            budget = int(allowed * share)
            batch = max(1, budget // 10)
            for method in ("random", "evolve"):
                for seed in range(args.seeds):
                    best, wall = optimize(
                        HERE / config, data_file(work, data), work / "run",
                        f'search.method="{method}"', f"search.seed={seed}",
                        f"search.evaluations={budget}", f"search.batch={batch}")
                    rank = rank_of(best["score"], ranking["scores"])
                    results.append(dict(case=case, share=share, method=method, seed=seed,
                                        budget=budget, score=best["score"], rank=rank,
                                        inside=rank <= keep, wall_s=wall))
                    print(f"{case} {share:.1%} {method} seed {seed}: score {best['score']:.6g} rank {rank} ({wall:.1f} s)",
                          file=sys.stderr)
    (work / "quality.json").write_text(json.dumps(results, indent=1))
    print("| case | allowed | budget | method | median rank | median top % | inside top 0.01 % | median wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for case, _, _ in CASES:
        ranking = json.loads(ranking_path(case).read_text())
        for share in (0.002, 0.02):
            for method in ("random", "evolve"):
                rs = [r for r in results if r["case"] == case and r["share"] == share and r["method"] == method]
                med = statistics.median(r["rank"] for r in rs)
                print(f"| {case} | {ranking['allowed']:,} | {share:.1%} | {method} | {med:g} | "
                      f"{100 * med / ranking['allowed']:.5f} | {sum(r['inside'] for r in rs)}/{len(rs)} | "
                      f"{statistics.median(r['wall_s'] for r in rs):.1f} |")


def coarse_config(config: Path, dest: Path, values_per_axis: int = 4) -> Path:
    """The config with each axis thinned to about `values_per_axis` values
    across its range: the grid a user would screen whole."""
    import re

    text = config.read_text()

    def thin(m):
        name, start, stop, step = m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))
        n = round((stop - start) / step)
        k = max(1, round(n / (values_per_axis - 1)))
        return f"{name} = {{ start = {m.group(2)}, stop = {start + (n // k) * k * step:.10g}, step = {k * step:.10g} }}"

    dest.write_text(re.sub(r"^(\w+) = \{ start = ([-\d.]+), stop = ([-\d.]+), step = ([-\d.]+) \}",
                           thin, text, flags=re.M))
    return dest


def grid_values(config: Path):
    """Each swept parameter's (start, stop, step) from the config."""
    import tomllib

    params = tomllib.loads(config.read_text())["strategy"]["params"]
    return {k: (v["start"], v["stop"], v["step"]) for k, v in params.items() if isinstance(v, dict)}


def optuna_run(sampler_name, seed, df, config, trials):
    import numpy as np
    import optuna
    import sieve as sv

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = grid_values(config)
    values = {k: np.round(np.arange(s, e + st / 2, st), 10) for k, (s, e, st) in space.items()}
    sampler = (optuna.samplers.TPESampler(seed=seed) if sampler_name == "tpe"
               else optuna.samplers.CmaEsSampler(seed=seed))
    study = optuna.create_study(direction="maximize", sampler=sampler)
    best = []  # best value after each trial
    params_of_best = [None]

    def objective(trial):
        # Each axis as an index into its grid values, so that every trial
        # is a grid point (sieve's search space exactly).
        p = {k: float(v[trial.suggest_int(k, 0, len(v) - 1)]) for k, v in values.items()}
        r = sv.backtest(df, None, p, config=str(config))
        obj = r["windows"]["score"]["objective"]
        obj = obj if obj is not None and math.isfinite(obj) else -1e9
        if not best or obj > best[-1]:
            params_of_best[0] = p
        best.append(max(obj, best[-1]) if best else obj)
        return obj

    t = time.perf_counter()
    walls = {}
    for n in sorted(trials):
        study.optimize(objective, n_trials=n - len(study.trials))
        walls[n] = time.perf_counter() - t
        walls[f"best_{n}"] = best[n - 1]
        walls[f"params_{n}"] = dict(params_of_best[0])
    return walls


def holdout_of(df, config, params):
    import sieve as sv

    r = sv.backtest(df, None, params, config=str(config))
    return r["windows"]["holdout"]["objective"]


def cmd_peers(args):
    import pandas as pd
    from scipy.stats import wilcoxon

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    trials = [1000, 10000]
    rows = []
    path = work / "peers.json"
    done = json.loads(path.read_text()) if path.exists() else []
    for case, config, data in BIG:
        if args.cases and case not in args.cases:
            continue
        config = HERE / config
        csv = data_file(work, data)
        df = pd.read_csv(csv, index_col=0, parse_dates=True)
        coarse = coarse_config(config, work / f"{case}.coarse.toml")
        grid_best, grid_wall = optimize(coarse, csv, work / "grid")
        # The grid's trials: every combination its iterations screened.
        rows.append(dict(case=case, method="grid+zoom", seed=0,
                         budget=grid_best["robustness"]["dsr"]["trials"], best=grid_best["score"],
                         holdout=grid_best["windows"]["holdout"]["objective"], wall_s=grid_wall))
        for seed in range(args.seeds):
            for method, budget, batch in [("evolve", 1000, 100), ("evolve", 10000, 1000),
                                          ("evolve", 1000000, 100000), ("random", 10000, 1000),
                                          ("random", 1000000, 100000)]:
                best, wall = optimize(config, csv, work / "run", f'search.method="{method}"',
                                      f"search.seed={seed}", f"search.evaluations={budget}",
                                      f"search.batch={batch}")
                rows.append(dict(case=case, method=f"sieve {method}", seed=seed, budget=budget,
                                 best=best["score"], holdout=best["windows"]["holdout"]["objective"],
                                 wall_s=wall))
                print(rows[-1], file=sys.stderr)
            for sampler in ("tpe", "cmaes"):
                prior = [r for r in done if r["case"] == case and r["method"] == f"optuna {sampler}"
                         and r["seed"] == seed]
                if prior:
                    rows.extend(prior)
                    continue
                res = optuna_run(sampler, seed, df, config, trials)
                for n in trials:
                    rows.append(dict(case=case, method=f"optuna {sampler}", seed=seed, budget=n,
                                     best=res[f"best_{n}"], holdout=holdout_of(df, config, res[f"params_{n}"]),
                                     wall_s=res[n]))
                    print(rows[-1], file=sys.stderr)
                path.write_text(json.dumps(merged(rows, done), indent=1))
    rows = merged(rows, done)
    path.write_text(json.dumps(rows, indent=1))
    report_peers(rows, wilcoxon)


def merged(rows, done):
    """This invocation's rows, and the earlier ones of the cases it did not run."""
    ran = {r["case"] for r in rows}
    return rows + [r for r in done if r["case"] not in ran]


def report_peers(rows, wilcoxon):
    def pick(method, budget):
        rs = [r for r in rows if r["method"] == method and (budget is None or r["budget"] == budget)]
        return {(r["case"], r["seed"]): r for r in rs}

    print("| method | evaluations | median best (score window) | median holdout | evaluations per wall s |")
    print("|---|---|---|---|---|")
    keys = sorted({(r["method"], r["budget"] or 0) for r in rows})
    for method, budget in keys:
        rs = [r for r in rows if r["method"] == method and (r["budget"] or 0) == budget]
        rate = statistics.median((r["budget"] or 0) / r["wall_s"] for r in rs)
        print(f"| {method} | {budget:,} | {statistics.median(r['best'] for r in rs):.4f} | "
              f"{statistics.median(r['holdout'] for r in rs if r['holdout'] is not None):.4f} | {rate:,.0f} |")
    print()
    print("| sieve | vs Optuna | pairs | sieve better | one-sided Wilcoxon p |")
    print("|---|---|---|---|---|")
    for (sm, sb), (om, ob) in [
        (("sieve evolve", 1000), ("optuna tpe", 1000)),
        (("sieve evolve", 1000), ("optuna cmaes", 1000)),
        (("sieve evolve", 10000), ("optuna tpe", 10000)),
        (("sieve evolve", 10000), ("optuna cmaes", 10000)),
        (("sieve evolve", 1000000), ("optuna tpe", 10000)),
        (("sieve evolve", 1000000), ("optuna cmaes", 10000)),
        (("sieve random", 10000), ("optuna tpe", 10000)),
        (("sieve random", 1000000), ("optuna tpe", 10000)),
    ]:
        a, b = pick(sm, sb), pick(om, ob)
        pairs = [(a[k]["best"], b[k]["best"]) for k in sorted(a) if k in b]
        if not pairs:
            continue
        d = [x - y for x, y in pairs]
        p = wilcoxon(d, alternative="greater").pvalue if any(d) else 1.0
        print(f"| {sm} {sb:,} | {om} {ob:,} | {len(pairs)} | {sum(x > 0 for x in d)} | {p:.4f} |")
    print()
    grid = {r["case"]: r["holdout"] for r in rows if r["method"] == "grid+zoom"}
    print("| method | evaluations | holdout − grid+zoom's (median) | two-sided Wilcoxon p |")
    print("|---|---|---|---|")
    for method, budget in keys:
        if method == "grid+zoom":
            continue
        rs = [r for r in rows if r["method"] == method and r["budget"] == budget and r["holdout"] is not None]
        d = [r["holdout"] - grid[r["case"]] for r in rs]
        p = wilcoxon(d).pvalue if any(d) else 1.0
        print(f"| {method} | {budget:,} | {statistics.median(d):+.4f} | {p:.4f} |")


def cmd_report(args):
    """The peers' tables from the `peers.json` of several --from folders
    (cases run as separate processes)."""
    from scipy.stats import wilcoxon

    rows = []
    for folder in args.sources or [args.work]:
        rows += json.loads((Path(folder) / "peers.json").read_text())
    report_peers(rows, wilcoxon)


def machine():
    try:
        model = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        model = "unknown"
    return f"{os.cpu_count()} vCPU {model}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("part", choices=["rank", "quality", "peers", "report"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--cases", nargs="*", help="rank, peers: only these cases")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "bench_search"))
    ap.add_argument("--from", dest="sources", nargs="*", help="report: the work folders of peers runs")
    args = ap.parse_args()
    {"rank": cmd_rank, "quality": cmd_quality, "peers": cmd_peers, "report": cmd_report}[args.part](args)


if __name__ == "__main__":
    main()
