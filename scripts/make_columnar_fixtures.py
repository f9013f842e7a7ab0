"""Writes the Parquet/Feather test fixtures with pandas + pyarrow, the writers
our users have, so the reader is tested against files it did not write.

    python3 -m venv /tmp/pa && /tmp/pa/bin/pip install pandas pyarrow
    /tmp/pa/bin/python scripts/make_columnar_fixtures.py

Writes tests/data/columnar/ (the same 48 hourly bars in many layouts, with the
CSV reference) and the bad Parquet/Feather files of tests/data/bad/.
"""

import decimal
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

ROOT = os.path.join(os.path.dirname(__file__), "..", "tests", "data")
GOOD = os.path.join(ROOT, "columnar")
BAD = os.path.join(ROOT, "bad")


def prices(n=48):
    """Hourly bars with two-decimal prices (exact as decimal128(10, 2) too)."""
    i = np.arange(n)
    close = np.round(100 + 5 * np.sin(i / 5) + i * 0.25, 2)
    open_ = np.round(np.concatenate([[100.0], close[:-1]]), 2)
    high = np.round(np.maximum(open_, close) + 0.75, 2)
    low = np.round(np.minimum(open_, close) - 0.5, 2)
    volume = (1000 + 37 * i).astype("float64")
    index = pd.date_range("2024-01-01", periods=n, freq="h", tz="UTC", name="date")
    return pd.DataFrame(
        {"open": open_, "high": high, "low": low, "close": close, "volume": volume},
        index=index,
    )


def main():
    os.makedirs(GOOD, exist_ok=True)
    df = prices()
    # The reference: a plain CSV with naive UTC times.
    naive = df.copy()
    naive.index = naive.index.tz_localize(None)
    naive.to_csv(os.path.join(GOOD, "prices.csv"))

    # pandas' defaults: a tz-aware DatetimeIndex, snappy.
    df.to_parquet(os.path.join(GOOD, "pandas_utc.parquet"))
    # New York times (ns, tz-aware), gzip.
    ny = df.copy()
    ny.index = ny.index.tz_convert("America/New_York")
    ny.to_parquet(os.path.join(GOOD, "pandas_new_york_gzip.parquet"), compression="gzip")
    # An unnamed index: pandas writes it as __index_level_0__.
    unnamed = naive.copy()
    unnamed.index.name = None
    unnamed.to_parquet(os.path.join(GOOD, "pandas_unnamed_index.parquet"))
    # Exchange style: unix ms integers, capitalised names, zstd, extra columns.
    klines = naive.reset_index().rename(columns=str.capitalize)
    klines.insert(0, "Open_time", (klines.pop("Date").astype("int64") // 10**6).astype("int64"))
    klines["Trades"] = np.arange(len(klines))
    klines["Symbol"] = "BTCUSDT"
    klines.to_parquet(os.path.join(GOOD, "klines_unix_ms_zstd.parquet"), compression="zstd", index=False)
    # Text times and decimal prices (pyarrow directly).
    table = pa.table(
        {
            "timestamp": [t.strftime("%Y-%m-%d %H:%M:%S") for t in naive.index],
            **{
                c: pa.array([decimal.Decimal(f"{v:.2f}") for v in naive[c]], pa.decimal128(10, 2))
                for c in ["open", "high", "low", "close"]
            },
            "volume": naive["volume"].to_numpy(),
        }
    )
    pq.write_table(table, os.path.join(GOOD, "text_time_decimal_prices.parquet"), compression="lz4")
    # Feather v2 as pandas writes it (lz4), zstd, uncompressed, and a stream.
    flat = df.reset_index()
    flat.to_feather(os.path.join(GOOD, "pandas.feather"))
    feather.write_feather(pa.Table.from_pandas(flat), os.path.join(GOOD, "zstd.feather"), compression="zstd")
    feather.write_feather(pa.Table.from_pandas(flat), os.path.join(GOOD, "uncompressed.arrow"), compression="uncompressed")
    t = pa.Table.from_pandas(flat)
    with ipc.new_stream(os.path.join(GOOD, "stream.arrow"), t.schema) as w:
        w.write_table(t, max_chunksize=10)

    # Bad files.
    small = naive.iloc[:6].copy()
    small.drop(columns=["close"]).to_parquet(os.path.join(BAD, "data_parquet_missing_close.parquet"))
    nulls = small.copy()
    nulls.iloc[2, nulls.columns.get_loc("close")] = None
    nulls.to_parquet(os.path.join(BAD, "data_parquet_null_price.parquet"))
    backwards = small.copy()
    backwards.index = pd.DatetimeIndex([small.index[i] for i in [0, 1, 2, 0, 4, 5]], name="date")
    backwards.to_parquet(os.path.join(BAD, "data_parquet_decreasing_time.parquet"))
    text_prices = small.astype({"close": "string"})
    text_prices.to_parquet(os.path.join(BAD, "data_parquet_text_prices.parquet"))
    whole = open(os.path.join(GOOD, "pandas_utc.parquet"), "rb").read()
    with open(os.path.join(BAD, "data_parquet_truncated.parquet"), "wb") as f:
        f.write(whole[: len(whole) // 2])
    dup = small.reset_index()
    dup.loc[4, "date"] = dup.loc[3, "date"]
    dup.to_feather(os.path.join(BAD, "data_feather_duplicate_time.feather"))


if __name__ == "__main__":
    main()
