"""Pinned outputs of Python-only runs (the CLI's are in tests/golden/):
an `indicators=` sweep and optimize, compared by size and FNV-1a hash with
python/tests/golden/indicators.txt. A refactor must leave them as they were;
`SIEVE_BLESS=1` rewrites the pins (the commit says why)."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pandas as pd

import sieve

PINS = pathlib.Path(__file__).parent / "golden" / "indicators.txt"
SIEVE = os.environ.get("SIEVE_BIN") or str(
    pathlib.Path(__file__).resolve().parents[2] / "target" / "release" / "sieve"
)


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def masked_json(text: str) -> str:
    """A JSON document with every timing (a key ending in `_s`) set to 0,
    as tests/cli/golden.rs masks them."""

    def mask(v):
        if isinstance(v, dict):
            return {k: (0 if k.endswith("_s") and isinstance(x, (int, float)) else mask(x)) for k, x in v.items()}
        if isinstance(v, list):
            return [mask(x) for x in v]
        return v

    return json.dumps(mask(json.loads(text)), indent=2, sort_keys=True)


def test_an_indicators_run_is_byte_identical_to_the_pinned_one(tmp_path):
    prices = tmp_path / "prices.csv"
    subprocess.run([SIEVE, "synth", "--bars", "1200", "--seed", "21", "--out", str(prices)], check=True, capture_output=True)
    frame = pd.read_csv(prices, parse_dates=["date"]).set_index("date")

    def band(df, n, k):
        mean = df["close"].rolling(n).mean()
        return mean + k * df["close"].rolling(n).std()

    def slope(df, n):
        return df["close"].diff(n) / n

    yours = {"band": (band, [("n", int), "k"]), "slope": (slope, [("n", int)])}
    config = {
        "strategy": {
            "name": "yours",
            "entry": "close > band(n, k) and slope(m) > 0",
            "exit": "close < band(n, 0)",
            "params": {
                "n": {"start": 10, "stop": 60, "step": 10},
                "k": {"values": [0.0, 0.5, 1.0]},
                "m": {"values": [3, 8]},
            },
        },
        "backtest": {"fee": 0.0005},
        "score": {"score_start": "40%", "holdout_start": "85%"},
        "sweep": {"top": 30},
        "verify": {"top": 10},
        "optimize": {"iterations": 2},
    }
    lines = []

    def pin(name, data: bytes):
        lines.append("%s %d %016x" % (name, len(data), fnv1a(data)))

    top = sieve.sweep(frame, config, indicators=yours)
    pin("sweep.csv", top.to_csv(index=False, float_format=repr).encode())
    out = tmp_path / "run"
    sieve.optimize(frame, config, out=out, indicators=yours)
    for rel in ["best.json", "run.json", "iter-001/sweep.csv", "iter-001/verified.csv", "iter-002/sweep.csv", "iter-002/verified.csv"]:
        data = (out / rel).read_bytes()
        if rel.endswith(".json"):
            data = masked_json(data.decode()).replace(str(tmp_path), "$TMP").encode()
        pin(rel, data)
    text = "\n".join(lines) + "\n"
    if os.environ.get("SIEVE_BLESS"):
        PINS.parent.mkdir(exist_ok=True)
        PINS.write_text(text)
        return
    assert text == PINS.read_text(), "outputs differ from python/tests/golden/indicators.txt:\n" + text
