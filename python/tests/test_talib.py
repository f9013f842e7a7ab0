"""The rule language's indicators against TA-Lib, bar for bar, on
backtesting.py's GOOG series: for each indicator, window and threshold, a
rule strategy long while `f(n) > k` (filled on the close, so the position
of each bar is that bar's comparison) must hold exactly where TA-Lib's
value is above k.

Needs ``pip install ta-lib backtesting`` (CI installs both) and the CLI
binary (``$SIEVE_BIN``, else target/release/sieve).
"""

import os
import subprocess

import numpy as np
import pandas as pd
import pytest
import talib
from backtesting.test import GOOG

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIEVE = os.environ.get("SIEVE_BIN") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "sieve"
)

H, L, C, V = (GOOG[c].to_numpy(dtype=float) for c in ("High", "Low", "Close", "Volume"))

CASES = {
    "cci": (lambda n: talib.CCI(H, L, C, n), [-100, 0, 100]),
    "willr": (lambda n: talib.WILLR(H, L, C, n), [-80, -50, -20]),
    "plus_di": (lambda n: talib.PLUS_DI(H, L, C, n), [15, 25, 35]),
    "minus_di": (lambda n: talib.MINUS_DI(H, L, C, n), [15, 25, 35]),
    "adx": (lambda n: talib.ADX(H, L, C, n), [15, 25, 40]),
}


def held(tmp_path, expression, k):
    csv = tmp_path / "goog.csv"
    if not csv.exists():
        frame = GOOG.copy()
        frame.index.name = "time"
        frame.to_csv(csv)
    config = tmp_path / "c.toml"
    config.write_text(
        f'[data]\npath = "{csv}"\n[strategy]\nname = "t"\n'
        f'entry = "{expression} > {k}"\nexit = "{expression} <= {k}"\n'
        '[backtest]\nfill = "close"\n'
    )
    equity = tmp_path / "e.csv"
    subprocess.run([SIEVE, "backtest", "-c", str(config), "--equity", str(equity)], check=True, capture_output=True)
    return pd.read_csv(equity)["position"].to_numpy()


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("n", [5, 14, 30])
def test_indicator_matches_talib(name, n, tmp_path):
    reference, thresholds = CASES[name]
    values = reference(n)
    for k in thresholds:
        want = np.where(np.isnan(values), 0, values > k).astype(int)
        got = held(tmp_path, f"{name}({n})", k)
        assert 10 < want.sum() < len(want) - 10, (name, n, k)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (name, n, k, bad[:5], values[bad[:5]])


def test_obv_matches_talib(tmp_path):
    values = talib.OBV(C, V)
    for k in np.percentile(values, [20, 50, 80]).round():
        want = (values > k).astype(int)
        got = held(tmp_path, "obv()", int(k))
        assert 10 < want.sum() < len(want) - 10, k
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (k, bad[:5], values[bad[:5]])
