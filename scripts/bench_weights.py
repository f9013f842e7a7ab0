"""vectorbt's time per combination for the target-weight rotation that
`scripts/bench_cli.py --portfolio-only` sweeps with sieve (WEIGHTS_GRID):
the `top` strongest by momentum over `n` bars, rebalanced on Mondays,
computed in pandas, then `from_orders(size_type="targetpercent",
cash_sharing=True)` and total return, Sharpe and max drawdown.

    python scripts/bench_weights.py --files pf0.csv pf1.csv ...
"""
import argparse
import statistics
import time

import pandas as pd
import vectorbt as vbt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", required=True, help="the instruments' CSV files")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    frames = {k: pd.read_csv(p, index_col=0, parse_dates=True) for k, p in enumerate(a.files)}
    every = frames[0].index
    for f in frames.values():
        every = every.union(f.index)
    o = pd.DataFrame({k: f["open"] for k, f in frames.items()}).reindex(every)
    c = pd.DataFrame({k: f["close"] for k, f in frames.items()}).reindex(every)

    def one(n, top):
        momentum = pd.DataFrame({k: f["close"] / f["close"].shift(n) for k, f in frames.items()})
        rank = momentum.reindex(every).ffill(limit_area="inside").rank(axis=1, ascending=False, method="first")
        weights = {}
        for k, f in frames.items():
            monday = pd.Series(f.index.weekday == 0, index=f.index)
            weights[k] = (rank[k].reindex(f.index) <= top).astype(float).div(top).where(monday).shift(1)
        pf = vbt.Portfolio.from_orders(
            close=c, size=pd.DataFrame(weights).reindex(every), size_type="targetpercent", price=o,
            val_price=o.fillna(c.ffill()), group_by=True, cash_sharing=True, call_seq="auto",
            fees=0.001, slippage=0.0005, init_cash=10_000.0,
        )
        return pf.total_return(), pf.sharpe_ratio(), pf.max_drawdown()

    one(20, 2)  # warm-up (numba compiles)
    times = []
    for n, top in [(20, 1), (50, 2), (100, 3), (150, 4), (200, 5)][: a.runs]:
        t = time.perf_counter()
        one(n, top)
        times.append(time.perf_counter() - t)
    print(f"per combination: {statistics.median(times) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
