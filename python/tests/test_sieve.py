"""The Python package gives the CLI's numbers exactly, from a path or a
DataFrame in any of its forms; errors, threads and Ctrl-C behave.

The CLI binary is found at $SIEVE_BIN, else target/release/sieve (build it
with `cargo build --release`): the tests fail, not skip, without it.
"""

import _thread
import json
import re
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pytest

import sieve

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIEVE = os.environ.get("SIEVE_BIN") or os.path.join(
    os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "sieve"
)

CONFIG = {
    "strategy": {
        "name": "sma_cross",
        "params": {
            "fast": {"start": 2, "stop": 40, "step": 2},
            "slow": {"start": 20, "stop": 200, "step": 10},
        },
    },
    "backtest": {"fee": 0.001},
    "score": {"objective": "sharpe", "score_start": "2016-01-01", "holdout_start": "2018-06-01"},
    "sweep": {"top": 200},
    "verify": {"top": 50},
    "optimize": {"iterations": 2, "refine_top": 2},
}

# Long enough (several seconds on 2 cores) to be interrupted mid-run.
SLOW_CONFIG = {
    "strategy": {
        "name": "activation",
        "params": {
            "trend_len": {"start": 20, "stop": 200, "step": 20},
            "dc_len": {"start": 10, "stop": 60, "step": 10},
            "entry": {"start": 0.1, "stop": 0.7, "step": 0.1},
            "exit": {"start": -0.3, "stop": 0.3, "step": 0.1},
            "stop_atr": {"start": 0, "stop": 5, "step": 1},
            "w_rsi": {"values": [0.0, 0.5, 1.0]},
            "rsi_len": {"values": [7, 14, 21]},
            "w_dc": {"values": [0.5, 1.0]},
        },
    },
    "score": {"objective": "calmar", "score_start": "2019-01-01", "holdout_start": "2024-01-01"},
    "optimize": {"iterations": 3, "refine_top": 3},
}


def cli(*args, cwd=None):
    if not os.path.isfile(SIEVE):
        pytest.fail("the sieve CLI is not built at %s (cargo build --release)" % SIEVE)
    out = subprocess.run([SIEVE, *map(str, args)], capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout


def write_toml(path, config):
    """The config as TOML for the CLI: one table per section, nested
    tables (strategy.params) as their own, grids as inline tables."""

    def value(v):
        if isinstance(v, dict):
            return "{ " + ", ".join("%s = %s" % (k, value(x)) for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, str):
            return json.dumps(v)
        return repr(v)

    lines = []
    for name, section in config.items():
        lines.append("[%s]" % name)
        lines += ["%s = %s" % (k, value(v)) for k, v in section.items() if k != "params"]
        if "params" in section:
            lines.append("[%s.params]" % name)
            lines += ["%s = %s" % (k, value(v)) for k, v in section["params"].items()]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


# Exact floats: pandas < 3 needs the round-trip parser asked for.
EXACT = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def read_csv(path, **kw):
    return pd.read_csv(path, **EXACT, **kw)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    prices = d / "prices.csv"
    cli("synth", "--bars", "1500", "--seed", "7", "--out", prices)
    return {"dir": d, "prices": prices, "config": write_toml(d / "config.toml", CONFIG)}


@pytest.fixture(scope="module")
def frame(files):
    """The prices as a DataFrame with a naive DatetimeIndex (= UTC)."""
    return read_csv(files["prices"], parse_dates=["date"]).set_index("date")


@pytest.fixture(scope="module")
def long_frame(files):
    """4,000 daily bars: long enough for a sweep of several seconds."""
    path = files["dir"] / "long.csv"
    cli("synth", "--bars", "4000", "--seed", "3", "--out", path)
    return read_csv(path, parse_dates=["date"]).set_index("date")


def test_backtest_equals_the_cli(files, frame):
    want = json.loads(
        cli("backtest", "-c", files["config"], "--data", files["prices"], "--set", "fast=6", "--set", "slow=50", "--json")
    )
    assert want["windows"]["score"]["trades"] > 0
    for data in (files["prices"], str(files["prices"]), frame):
        got = sieve.backtest(data, None, {"fast": 6, "slow": 50}, config=CONFIG)
        assert got == want
    # A TOML file or TOML text as the config, and the strategy named here.
    assert sieve.backtest(frame, "sma_cross", {"fast": 6, "slow": 50}, config=files["config"]) == want
    text = open(files["config"]).read()
    assert sieve.backtest(frame, "sma_cross", {"fast": 6, "slow": 50}, config=text) == want


def test_equity_is_a_series_indexed_by_time(files, frame):
    got = sieve.backtest(frame, "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG, equity=True)
    eq = got["equity"]
    assert isinstance(eq, pd.Series) and len(eq) == len(frame)
    # Indexed like the input: naive in, naive out (so it aligns with it).
    assert eq.index.equals(frame.index)
    ny = frame.tz_localize("UTC").tz_convert("America/New_York")
    eq_ny = sieve.backtest(ny, "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG, equity=True)["equity"]
    assert eq_ny.index.equals(ny.index) and (eq_ny.to_numpy() == eq.to_numpy()).all()
    cli("backtest", "-c", files["config"], "--data", files["prices"], "--set", "fast=6", "--set", "slow=50",
        "--equity", files["dir"] / "equity.csv")
    want = read_csv(files["dir"] / "equity.csv")
    assert eq.to_numpy().tolist() == want["equity"].tolist()


def test_trades_with_exit_reasons_equal_the_cli(files, frame):
    """A rule strategy with a stop and a target: the trades DataFrame is
    trades.csv's rows, times as datetimes indexed like the input."""
    config = {
        "strategy": {
            "name": "bracket",
            "entry": "cross_above(sma(close, fast), sma(close, slow))",
            "exit": "cross_below(sma(close, fast), sma(close, slow))",
            "stop_loss": 0.02,
            "take_profit": 0.04,
            "params": {"fast": 6, "slow": 50},
        }
    }
    got = sieve.backtest(frame, None, {}, config=config, trades=True)["trades"]
    toml = files["dir"] / "bracket.toml"
    toml.write_text(
        '[strategy]\nname = "bracket"\nentry = "cross_above(sma(close, fast), sma(close, slow))"\n'
        'exit = "cross_below(sma(close, fast), sma(close, slow))"\nstop_loss = 0.02\ntake_profit = 0.04\n'
        "[strategy.params]\nfast = 6\nslow = 50\n"
    )
    cli("backtest", "-c", toml, "--data", files["prices"], "--trades", files["dir"] / "trades.csv")
    want = read_csv(files["dir"] / "trades.csv", **EXACT)
    assert list(got.columns) == list(want.columns) + ["duration", "mae", "mfe"]
    assert {"stop_loss", "take_profit"} <= set(got.exit_reason), set(got.exit_reason)
    # Duration, MAE and MFE by hand from the bars each trade spans.
    for t in got.itertuples():
        bars = frame.loc[t.entry_time : t.exit_time if t.status == "closed" else frame.index[-1]]
        low, high = (bars["low"].min() - t.entry_price) / t.entry_price, (bars["high"].max() - t.entry_price) / t.entry_price
        adverse, favourable = (low, high) if t.side == "long" else (-high, -low)
        assert t.mae == pytest.approx(min(0.0, adverse), rel=1e-12, abs=1e-15)
        assert t.mfe == pytest.approx(max(0.0, favourable), rel=1e-12, abs=1e-15)
        if t.status == "closed":
            assert t.duration == t.exit_time - t.entry_time
    assert (got.mae <= 0).all() and (got.mfe >= 0).all() and (got.mae < 0).any() and (got.mfe > 0).any()
    for col in ["side", "status", "entry_price", "exit_price", "units", "pnl", "exit_reason"]:
        assert got[col].tolist() == want[col].tolist(), col
    assert list(got.entry_time) == list(pd.to_datetime(want.entry_time))
    assert got.entry_time.isin(frame.index).all()


def _column_trades(records, label):
    """One signal column's trades of backtest_signals' records table."""
    return records[records["column"] == label].drop(columns="column").reset_index(drop=True)


def test_every_dataframe_form_equals_the_path(files, frame):
    want = sieve.backtest(files["prices"], "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG)
    forms = {
        "tz-aware index": frame.tz_localize("UTC").tz_convert("America/New_York"),
        "time column": frame.reset_index(),
        "upper-case names": frame.rename(columns=str.upper),
        "text time column": frame.reset_index().assign(date=lambda d: d["date"].dt.strftime("%Y-%m-%d")),
        "float32 volume, extra columns": frame.assign(volume=frame["volume"].astype("float32"), symbol="X"),
        "columns reordered": frame[["close", "low", "high", "open", "volume"]],
        "index named anything": frame.rename_axis("ts"),
        "object column of numbers": frame.assign(close=frame["close"].astype(object)),
        "categorical text dates": frame.reset_index().assign(date=lambda d: d["date"].dt.strftime("%Y-%m-%d").astype("category")),
        "complex prices with no imaginary part": frame.assign(close=frame["close"] + 0j),
    }
    # An int64 index of unix times, in each unit the CLI reads.
    seconds = frame.index.as_unit("s").asi8 if hasattr(frame.index, "as_unit") else frame.index.asi8 // 10**9
    for unit, scale in {"s": 1, "ms": 10**3, "µs": 10**6, "ns": 10**9}.items():
        forms["int64 index in " + unit] = frame.set_axis(pd.Index(seconds * scale, dtype="int64"))
    for name, df in forms.items():
        assert sieve.backtest(df, "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG) == want, name


def test_frames_without_a_time_or_with_complex_prices_are_refused_by_name(frame):
    # No time column and a plain RangeIndex: the message says what the
    # index is and what would do.
    with pytest.raises(sieve.DataError, match="its index is a RangeIndex") as e:
        sieve.backtest(frame.reset_index(drop=True), "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG)
    assert "integer index of unix times" in str(e.value)
    # Row numbers (an int64 index with a row dropped) are not unix times:
    # they read as 1970 before.
    numbered = frame.reset_index(drop=True).drop(index=[5])
    with pytest.raises(sieve.DataError, match="its index is an Index of int64 from 0, too small for unix times"):
        sieve.backtest(numbered, "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG)
    # Complex prices lost their imaginary part in silence.
    bad = frame.assign(close=frame["close"].astype(complex))
    bad.iloc[3, bad.columns.get_loc("close")] += 2j
    with pytest.raises(sieve.DataError, match=r"column 'close' holds complex numbers \(row 3"):
        sieve.backtest(bad, "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG)


def test_sweep_equals_the_cli(files, frame):
    cli("sweep", "-c", files["config"], "--data", files["prices"], "--out", files["dir"] / "sweep.csv")
    want = read_csv(files["dir"] / "sweep.csv")
    assert len(want) == 200
    for data in (frame, files["prices"]):
        pdt.assert_frame_equal(sieve.sweep(data, CONFIG), want, check_exact=True)
    # Threads do not change a byte.
    pdt.assert_frame_equal(sieve.sweep(frame, CONFIG, threads=1), want, check_exact=True)
    pdt.assert_frame_equal(sieve.sweep(frame, CONFIG, top=10), want.head(10), check_exact=True)


def test_verify_equals_the_cli(files, frame):
    sweep_csv = files["dir"] / "sweep_for_verify.csv"
    cli("sweep", "-c", files["config"], "--data", files["prices"], "--out", sweep_csv)
    cli("verify", "-c", files["config"], "--data", files["prices"], "--candidates", sweep_csv,
        "--out", files["dir"] / "verified.csv")
    want = read_csv(files["dir"] / "verified.csv")
    assert len(want) == 50
    candidates = sieve.sweep(frame, CONFIG)
    pdt.assert_frame_equal(sieve.verify(frame, CONFIG, candidates), want, check_exact=True)
    pdt.assert_frame_equal(sieve.verify(files["prices"], CONFIG, sweep_csv), want, check_exact=True)
    pdt.assert_frame_equal(sieve.verify(frame, CONFIG, candidates, top=5), want.head(5), check_exact=True)


def test_optimize_equals_the_cli(files, frame, tmp_path):
    printed = cli("optimize", "-c", files["config"], "--data", files["prices"], "--out", tmp_path / "cli")
    with open(tmp_path / "cli" / "best.json") as f:
        want = json.load(f)
    got = sieve.optimize(frame, CONFIG, out=tmp_path / "py")
    # best.json's content, and the verdict the CLI prints (issue 47, item 11).
    verdict = got.pop("verdict")
    assert "verdict: %s" % verdict in printed, printed
    assert got == want
    assert (tmp_path / "py" / "report.html").is_file()
    # The run folder keeps the DataFrame's bars; `sieve report` reads them.
    assert (tmp_path / "py" / "data.parquet").is_file()
    cli("report", tmp_path / "py")
    # A second call resumes the finished run: the same best.
    assert sieve.optimize(frame, CONFIG, out=tmp_path / "py") == dict(got, verdict=verdict)
    # A folder of the user's that holds a data.parquet is theirs: refused,
    # the file untouched, nothing added.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "data.parquet").write_bytes(b"mine")
    with pytest.raises(sieve.SieveError, match="is not empty and holds no sieve run"):
        sieve.optimize(frame, CONFIG, out=mine)
    assert (mine / "data.parquet").read_bytes() == b"mine"
    assert [p.name for p in mine.iterdir()] == ["data.parquet"]


def test_nan_close_raises_naming_the_row(frame):
    bad = frame.copy()
    bad.iloc[10, bad.columns.get_loc("close")] = np.nan
    with pytest.raises(sieve.SieveError) as e:
        sieve.sweep(bad, CONFIG)
    message = str(e.value)
    assert "row 11" in message and "close" in message, message
    assert isinstance(e.value, ValueError)


def test_errors_carry_the_cli_message(files, frame, tmp_path):
    cases = [
        (dict(CONFIG, score={"objective": "sharp"}), "score.objective"),
        (dict(CONFIG, sweep={"topp": 5}), "topp"),
        ({"strategy": {"name": "nope"}}, "nope"),
    ]
    for i, (config, word) in enumerate(cases):
        path = write_toml(tmp_path / ("bad%d.toml" % i), config)
        out = subprocess.run([SIEVE, "sweep", "-c", path, "--data", files["prices"], "--out", tmp_path / "x.csv"],
                             capture_output=True, text=True)
        assert out.returncode != 0
        with pytest.raises(sieve.SieveError) as e:
            sieve.sweep(files["prices"], path)
        assert word in str(e.value)
        assert out.stderr.strip().splitlines()[-1] == "error: " + str(e.value)
        # The same mistake in a dict names the key the same way.
        with pytest.raises(sieve.SieveError) as e:
            sieve.sweep(frame, config)
        assert word in str(e.value)
    with pytest.raises(sieve.SieveError) as e:
        sieve.backtest(frame, "sma_cross", {"fast": 60, "slow": 50}, config=CONFIG)
    assert "constraint" in str(e.value), str(e.value)
    with pytest.raises(sieve.SieveError) as e:
        sieve.sweep(files["dir"] / "missing.csv", CONFIG)
    assert "missing.csv" in str(e.value)
    with pytest.raises(TypeError):
        sieve.sweep([1, 2, 3], CONFIG)


def test_a_sweep_in_a_thread_leaves_the_main_thread_running(long_frame):
    frame = long_frame
    want = sieve.sweep(frame, SLOW_CONFIG, top=20)
    result = {}
    worker = threading.Thread(target=lambda: result.update(df=sieve.sweep(frame, SLOW_CONFIG, top=20)))
    start = time.perf_counter()
    worker.start()
    ticks = 0
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    elapsed = time.perf_counter() - start
    worker.join()
    # With the GIL held for the whole sweep, this loop could not run at all.
    assert elapsed > 0.3, "the sweep was too short to tell (%.2f s)" % elapsed
    assert ticks > 100, "the main thread ran %d times in %.2f s" % (ticks, elapsed)
    pdt.assert_frame_equal(result["df"], want, check_exact=True)


def test_keyboard_interrupt_then_resume_gives_the_uninterrupted_result(long_frame, tmp_path):
    frame = long_frame
    start = time.perf_counter()
    whole = sieve.optimize(frame, SLOW_CONFIG, out=tmp_path / "whole")
    took = time.perf_counter() - start
    assert took > 0.3, "the run was too short to interrupt (%.2f s)" % took
    # A third of the way in, however fast this machine runs it. Python
    # keeps an inherited "ignore SIGINT" (a job started with `&` has it),
    # under which interrupt_main does nothing: take Ctrl-C as usual here.
    start = time.perf_counter()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(took / 3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            sieve.optimize(frame, SLOW_CONFIG, out=tmp_path / "cut")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - start < 30
    with open(tmp_path / "cut" / "run.json") as f:
        state = json.load(f)
    assert state["status"] != "done" and "interrupted" in state["stop_reason"], state
    resumed = sieve.optimize(frame, SLOW_CONFIG, out=tmp_path / "cut")
    assert resumed == whole


def _interrupted(call, after):
    """Runs `call` with Ctrl-C pressed `after` seconds in; the seconds it
    took to raise KeyboardInterrupt."""
    start = time.perf_counter()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(after, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    return time.perf_counter() - start


def test_interrupted_optimize_with_indicators_resumes_to_the_uninterrupted_result(frame, tmp_path):
    # Ctrl-C while indicators are being computed: the batch that ran on
    # columns cut short is not kept, so the resumed run equals one never
    # interrupted. A whole-number argument stays whole as the grid zooms in.
    def slow(df, n):
        time.sleep(0.03)
        return df["close"].rolling(n).mean()

    yours = {"f": (slow, [("n", int)])}
    config = {
        "strategy": {
            "name": "s",
            "entry": "close > f(n) * k",
            "exit": "close < f(n)",
            "params": {"n": {"start": 5, "stop": 95, "step": 3}, "k": {"values": [1.0, 1.01]}},
        },
        "score": {"score_start": "40%"},
        "optimize": {"iterations": 2},
    }
    start = time.perf_counter()
    sieve.optimize(frame, config, out=tmp_path / "whole", indicators=yours)
    took = time.perf_counter() - start
    assert took > 0.6, "the run was too short to interrupt (%.2f s)" % took
    _interrupted(lambda: sieve.optimize(frame, config, out=tmp_path / "cut", indicators=yours), took / 4)
    sieve.optimize(frame, config, out=tmp_path / "cut", indicators=yours)
    best = lambda run: (tmp_path / run / "best.json").read_text()
    assert best("cut") == best("whole")
    assert json.loads(best("whole"))["params"]["n"] == int(json.loads(best("whole"))["params"]["n"])


def test_keyboard_interrupt_stops_signals_and_indicator_callbacks(frame):
    rng = np.random.default_rng(2)
    n, cols = 10000, 2000
    close = 100 * np.cumprod(1 + rng.normal(0, 0.01, n))
    bars = pd.DataFrame(
        {"open": close, "high": close * 1.01, "low": close * 0.99, "close": close},
        index=pd.date_range("2000-01-01", periods=n, freq="h"),
    )
    entries, exits = rng.random((n, cols)) < 0.05, rng.random((n, cols)) < 0.05
    run = lambda: sieve.backtest_signals(bars, entries, exits, stop_loss=0.02)
    start = time.perf_counter()
    run()
    took = time.perf_counter() - start
    assert took > 0.3, "the call was too short to interrupt (%.2f s)" % took
    assert _interrupted(run, took / 3) < took * 0.9
    # The robustness of many columns (the PBO: thousands of splits) looks
    # at Ctrl-C too (issue 47, item 2: it ran to its end, 29-42 s on 100k
    # columns): pressed a third into it, out well before its end.
    n, cols = 2000, 8000
    close = 100 * np.cumprod(1 + rng.normal(0, 0.01, n))
    daily = pd.DataFrame(
        {"open": close, "high": close * 1.01, "low": close * 0.99, "close": close},
        index=pd.date_range("2000-01-01", periods=n, freq="D"),
    )
    entries, exits = rng.random((n, cols)) < 0.05, rng.random((n, cols)) < 0.05
    start = time.perf_counter()
    sieve.backtest_signals(daily, entries, exits)
    plain = time.perf_counter() - start
    start = time.perf_counter()
    sieve.backtest_signals(daily, entries, exits, robust=True)
    pbo = time.perf_counter() - start - plain
    assert pbo > 0.3, "the PBO was too short to interrupt (%.2f s)" % pbo
    robust = lambda: sieve.backtest_signals(daily, entries, exits, robust=True)
    assert _interrupted(robust, plain + pbo / 3) < plain + pbo * 0.7
    # An indicator that takes 0.2 s per setting, 30 settings: stopped after
    # the setting in progress, not after all 30.
    calls = []

    def slow(df, n):
        calls.append(n)
        time.sleep(0.2)
        return df["close"].rolling(int(n)).mean()

    grid = {"strategy": {"name": "s", "entry": "close > f(n)", "exit": "close < f(n)", "params": {"n": {"start": 2, "stop": 31, "step": 1}}}}
    assert _interrupted(lambda: sieve.sweep(frame, grid, indicators={"f": (slow, ["n"])}), 0.5) < 2.0
    assert len(calls) < 10
    # backtest and indicator too.
    one = {"strategy": {"name": "s", "entry": "close > f(20)", "exit": "close < f(20)"}}
    calls.clear()
    assert _interrupted(lambda: sieve.indicator(frame, "f(3) + f(4) + f(5) + f(6) + f(7) + f(8) + f(9) + f(10)", indicators={"f": (slow, ["n"])}), 0.3) < 1.0
    assert len(calls) < 4
    # The next call runs as if nothing happened.
    calls.clear()
    assert len(sieve.sweep(frame, grid, top=5, indicators={"f": (lambda df, n: slow(df, n) if n < 4 else df["close"], ["n"])})) == 5


def test_progress_uses_tqdm_when_installed(frame, tmp_path, monkeypatch):
    import tqdm.auto

    bars = []

    class Recorder:
        def __init__(self, total, desc, **kw):
            self.total, self.desc, self.n, self.closed = total, desc, 0, False
            bars.append(self)

        def update(self, k):
            self.n += k

        def close(self):
            self.closed = True

        @staticmethod
        def write(text, file=None):
            bars.append(text)

    monkeypatch.setattr(tqdm.auto, "tqdm", Recorder)
    got = sieve.sweep(frame, CONFIG, top=5, progress=True)
    pdt.assert_frame_equal(got, sieve.sweep(frame, CONFIG, top=5), check_exact=True)
    grid = bars[0]
    assert grid.desc == "sweep" and grid.total > 100 and grid.n == grid.total and grid.closed
    bars.clear()
    sieve.optimize(frame, dict(CONFIG, optimize={"iterations": 2}), out=tmp_path / "run", progress=True)
    steps = [b.desc for b in bars if isinstance(b, Recorder)]
    assert steps[:2] == ["1:sweep", "1:verify"] and all(b.n == b.total and b.closed for b in bars if isinstance(b, Recorder))
    # Without tqdm: the CLI's bar on stderr (only drawn on a terminal, or a
    # line every 5 s without one), and the same result.
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    assert sieve._progress(True) is True
    pdt.assert_frame_equal(sieve.sweep(frame, CONFIG, top=5, progress=True), got, check_exact=True)


def test_the_readme_tutorial_runs_as_written(tmp_path, monkeypatch):
    # The "From pandas to a verdict" block of the README, run as it is on
    # the prices it names: every step must work and say what it promises.
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "README.md"), encoding="utf-8") as f:
        readme = f.read()
    block = readme.split("### From pandas to a verdict", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    cli("synth", "--out", tmp_path / "prices.csv")
    monkeypatch.chdir(tmp_path)
    printed = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: printed.append(" ".join(map(str, a))))
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)
    assert scope["entries"].shape[1] == 73 and "->" in printed[1]
    assert printed[1].split(" -> ")[1].split(":")[0] in ("likely overfit", "mixed evidence", "plausibly real")
    assert (tmp_path / "z-run" / "report.html").is_file() and "holdout sharpe" in printed[2]


def test_strategies_lists_the_cli_strategies():
    listed = sieve.strategies()
    names = [s["name"] for s in listed]
    text = cli("strategies")
    for name in names:
        assert name in text
    sma = next(s for s in listed if s["name"] == "sma_cross")
    assert [p["name"] for p in sma["params"]] == ["fast", "slow"]
    assert all(p["kind"] in ("int", "float") for p in sma["params"])


def test_several_instruments_from_the_config(files, tmp_path):
    paths = []
    for seed in (11, 12):
        path = tmp_path / ("inst%d.csv" % seed)
        cli("synth", "--bars", "1500", "--seed", seed, "--out", path)
        paths.append(str(path))
    config = dict(CONFIG, data={"paths": paths}, score=dict(CONFIG["score"], aggregate="min"))
    toml_path = write_toml(tmp_path / "multi.toml", config)
    cli("sweep", "-c", toml_path, "--out", tmp_path / "multi.csv")
    pdt.assert_frame_equal(sieve.sweep(None, config), read_csv(tmp_path / "multi.csv"), check_exact=True)
    got = sieve.backtest(None, None, {"fast": 6, "slow": 50}, config=config, equity=True)
    assert sorted(got["equity"]) == ["inst11", "inst12"]
    want = json.loads(cli("backtest", "-c", toml_path, "--set", "fast=6", "--set", "slow=50", "--json"))
    del got["equity"]
    assert got == want
    objectives = [want["instruments"][n]["windows"]["score"]["objective"] for n in ("inst11", "inst12")]
    assert want["windows"]["score"]["objective"] == min(objectives)


def test_mistakes_in_python_arguments_are_clear(frame, tmp_path):
    with pytest.raises(sieve.SieveError) as e:
        sieve.sweep(frame, dict(CONFIG, score={"holdout_start": None}))
    assert "score.holdout_start" in str(e.value)
    with pytest.raises(sieve.SieveError) as e:
        sieve.sweep(frame, dict(CONFIG, backtest={"fee": float("nan")}))
    assert "backtest.fee" in str(e.value)
    with pytest.raises(TypeError) as e:
        sieve.backtest(frame, "sma_cross", {"fast": "abc"}, config=CONFIG)
    assert "fast" in str(e.value)
    with pytest.raises(sieve.SieveError) as e:
        sieve.verify(frame, CONFIG, tmp_path / "missing.csv")
    assert "missing.csv" in str(e.value)
    with pytest.raises(sieve.SieveError):
        sieve.sweep(frame, "no-such-config")
    # numpy numbers in a config and a sweep row (a Series) as parameters.
    config = dict(CONFIG, sweep={"top": np.int64(5)})
    rows = sieve.sweep(frame, config)
    assert len(rows) == 5
    best = rows.iloc[0][["fast", "slow"]]
    assert sieve.backtest(frame, "sma_cross", best, config=CONFIG)["params"] == {
        "fast": float(best["fast"]), "slow": float(best["slow"])}


def test_errors_pickle_and_warnings_warn(frame):
    import pickle

    e = pickle.loads(pickle.dumps(sieve.SieveError("row 3: bad")))
    assert isinstance(e, sieve.SieveError) and str(e) == "row 3: bad"
    assert sieve.SieveError.__module__ == "sieve"
    with pytest.warns(sieve.SieveWarning, match="no position is ever taken"):
        sieve.backtest(frame.head(100), "sma_cross", {"fast": 6, "slow": 150}, config={"strategy": {"name": "sma_cross"}})


def test_a_refused_optimize_leaves_the_run_folder_untouched(frame, tmp_path):
    out = tmp_path / "run"
    sieve.optimize(frame, CONFIG, out=out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    other = frame.assign(close=frame["close"] * 1.0001, high=frame["high"] * 1.001)
    with pytest.raises(sieve.SieveError) as e:
        sieve.optimize(other, CONFIG, out=out)
    assert "different data" in str(e.value)
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert after == before
    # restart=True starts over on the new data.
    assert sieve.optimize(other, CONFIG, out=out, restart=True) == sieve.optimize(other, CONFIG, out=tmp_path / "fresh")


# Config mistakes in a dict, word for word as the CLI words them for the same
# keys in a file (the file's name aside), and the class of each kind.
DICT_ERRORS = [
    (
        {"score": {"objectiv": "sharpe"}},
        "ConfigError",
        "config: score.objectiv: unknown field `objectiv`, expected one of `objective`, `score_start`, "
        "`holdout_start`, `screen_window`, `min_trades`, `aggregate`, `aggregate_skip_undefined`, `shares`",
    ),
    ({"backtest": {"fee": -1}}, "ConfigError", "config: backtest.fee: must be a number ≥ 0, got -1"),
    (
        {"strategy": {"name": "sma_crosss"}},
        "ConfigError",
        "config: strategy.name: unknown strategy 'sma_crosss'; known: sma_cross, ema_cross, rsi_reversion, "
        "donchian_breakout, activation",
    ),
    (
        {"strategy": {"name": "r", "entry": "close > sma(close, n", "exit": "close < open", "params": {"n": 5}}},
        "RuleError",
        "config: strategy.entry, column 12: unclosed '('\n    close > sma(close, n\n               ^",
    ),
    ({"score": {"min_trades": "x"}}, "ConfigError", 'config: score.min_trades: invalid type: string "x", expected u64'),
    (
        {"strategy": {"name": "sma_cross", "params": {"fast": {"values": [1, "a"]}}}},
        "ConfigError",
        'config: strategy.params.fast: each value must be a number, got "a"',
    ),
    (
        {"strategy": {"name": "sma_cross", "params": {"fast": {"start": 10, "stop": 2, "step": 1}}}},
        "ConfigError",
        "config: strategy.params.fast: start 10 is above stop 2",
    ),
    ({"score": {"holdout_start": None}}, "ConfigError",
     "config: score.holdout_start: None is not a value (leave the key out for its default)"),
]


def test_dict_config_errors_word_for_word(frame):
    for config, kind, want in DICT_ERRORS:
        with pytest.raises(sieve.SieveError) as e:
            sieve.backtest(frame, None, {}, config=config)
        assert str(e.value) == want, (config, str(e.value))
        assert type(e.value) is getattr(sieve, kind), (config, type(e.value))
        assert isinstance(e.value, ValueError)
    assert issubclass(sieve.RuleError, sieve.ConfigError)


def test_error_kinds(frame, tmp_path):
    bad = frame.copy()
    bad.iloc[10, bad.columns.get_loc("close")] = np.nan
    with pytest.raises(sieve.DataError):
        sieve.backtest(bad, "sma_cross", {"fast": 5, "slow": 20})
    with pytest.raises(sieve.ParameterError):
        sieve.backtest(frame, "sma_cross", {"fast": 0, "slow": 20})
    with pytest.raises(sieve.FileError):
        sieve.verify(frame, CONFIG, tmp_path / "missing.csv")
    with pytest.raises(sieve.FileError):
        sieve.backtest(tmp_path / "missing.csv", "sma_cross", {})


def test_optimize_without_a_config_runs_the_cli_example(tmp_path):
    # The built-in example, as `sieve optimize` runs it with no --config.
    printed = cli("optimize", "--out", tmp_path / "cli")
    got = sieve.optimize(None, None, out=tmp_path / "py")
    want = json.loads((tmp_path / "cli" / "best.json").read_text())
    assert "verdict: %s" % got.pop("verdict") in printed

    def untimed(v):
        if isinstance(v, dict):
            return {k: untimed(x) for k, x in v.items() if not k.endswith("_s")}
        if isinstance(v, list):
            return [untimed(x) for x in v]
        return v

    assert untimed(got) == untimed(want)
    assert want["strategy"] == "activation"


def test_threads_optimizing_into_one_folder_take_turns_or_are_refused(frame, tmp_path):
    # The run folder's lock excludes a second thread of the same process:
    # the runs that find it held fail at once, naming this process's thread.
    out = tmp_path / "shared"
    results, errors, native_ids = [], [], []

    def run():
        native_ids.append(threading.get_native_id())
        try:
            results.append(sieve.optimize(frame, CONFIG, out=out))
        except sieve.SieveError as e:
            errors.append(str(e))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) + len(errors) == 4 and results, (results, errors)
    assert all(r == results[0] for r in results)
    for e in errors:
        assert "in use by another sieve run" in e and "this process" in e, e
        # The holder named as Python knows its threads.
        assert any(f"thread {t}" in e for t in native_ids), (e, native_ids)
    # The folder holds one run, whole: a further call resumes it.
    assert sieve.optimize(frame, CONFIG, out=out) == results[0]


def test_infinities_and_undefined_values_stay_apart():
    # As best.json and `backtest --json` write them: +inf as "inf", NaN as
    # null (both came back as None before).
    doc = {
        "strategy": "inf",
        "score": None,
        "windows": {"score": {"start": "2020-01-01", "end": "2021-01-01", "objective": "inf",
                              "profit_factor": "inf", "sortino": "-inf", "calmar": None, "trades": 3}},
        "robustness": {"pbo": None},
    }
    got = sieve._numbers(doc)
    w = got["windows"]["score"]
    assert w["profit_factor"] == math.inf and w["sortino"] == -math.inf and w["objective"] == math.inf
    assert math.isnan(w["calmar"]) and math.isnan(got["score"])
    assert w["trades"] == 3 and w["start"] == "2020-01-01" and got["strategy"] == "inf"
    assert got["robustness"]["pbo"] is None


def test_signals_of_your_own_equal_the_same_rules(frame):
    # Signals computed in pandas equal a rule strategy deciding the same
    # thing, metric for metric, bit for bit; several columns run at once.
    score = {"objective": "sharpe", "score_start": "2016-01-01", "holdout_start": "2018-06-01"}
    config = {"backtest": {"fee": 0.001, "direction": "long_short"}, "score": score}
    up, down = frame["close"] > frame["open"], frame["close"] < frame["open"]
    rules = {"strategy": {"entry": "close > open", "exit": "close < open"}}
    want = sieve.backtest(frame, None, {}, config=dict(config, **rules))["windows"]
    got = sieve.backtest_signals(frame, up, down, config=config)
    row = got.iloc[0]
    assert row["score"] == want["score"]["objective"]
    assert row["full_score"] == want["full"]["objective"]
    assert row["holdout_score"] == want["holdout"]["objective"]
    for metric in ["total_return", "cagr", "max_drawdown", "sharpe", "trades", "win_rate", "exposure"]:
        assert row[metric] == want["score"][metric], metric
    # A DataFrame: one backtest per column, each equal to its own run, the
    # same whatever the thread count.
    entries = pd.DataFrame({"a": up, "b": up.shift(1, fill_value=False), "c": up & (frame["close"] > 100)})
    many = sieve.backtest_signals(frame, entries, down, config=config)
    assert list(many.index) == ["a", "b", "c"]
    for name in entries:
        one = sieve.backtest_signals(frame, entries[name], down, config=config)
        pdt.assert_series_equal(many.loc[name], one.iloc[0], check_names=False)
    pdt.assert_frame_equal(sieve.backtest_signals(frame, entries, down, config=config, threads=1), many)
    # Trades and equity on request: each column's are the rule strategy's
    # own (the same trades.csv, the same curve).
    ruled = sieve.backtest(frame, None, {}, config=dict(config, **rules), trades=True, equity=True)
    recorded = sieve.backtest_signals(frame, pd.DataFrame({"x": up, "y": up}), down, config=config, trades=True, equity=True)
    pdt.assert_frame_equal(recorded["metrics"].loc[["x"]], got.set_axis(["x"]).rename_axis("column"))
    for label in ["x", "y"]:
        pdt.assert_frame_equal(_column_trades(recorded["trades"], label), ruled["trades"])
        pdt.assert_series_equal(recorded["equity"][label], ruled["equity"], check_names=False)
    assert set(sieve.backtest_signals(frame, up, down, config=config, equity=True)) == {"metrics", "equity"}
    # An entry and an exit on the same bar cancel: no trade at all.
    always = pd.Series(True, index=frame.index)
    assert sieve.backtest_signals(frame, always, always, config=config)["trades"].iloc[0] == 0
    # Misaligned or short signals are refused by name.
    with pytest.raises(sieve.DataError, match="entries: its index is not the data's"):
        sieve.backtest_signals(frame, up.iloc[::-1], down, config=config)
    with pytest.raises(sieve.DataError, match="exits"):
        sieve.backtest_signals(frame, up.to_numpy(), down.to_numpy()[:-1], config=config)


def test_signals_with_trade_management_equal_the_same_rules(frame):
    # A rule strategy with trade-management keys, its signals exported
    # (sieve.indicator) and fed back with the same keys as numbers or as
    # per-bar values: the same trades, equity and metrics, bit for bit.
    config = {"backtest": {"fee": 0.001, "slippage": 0.0005, "direction": "long_short"}}
    entry, exit_ = "cross_above(sma(close, 5), sma(close, 20))", "cross_below(sma(close, 5), sma(close, 20))"
    up = (sieve.indicator(frame, entry, config=config) == 1.0).rename("x")
    down = sieve.indicator(frame, exit_, config=config) == 1.0
    cases = [
        ({"stop_loss": 0.03, "take_profit": 0.06}, {"stop_loss": 0.03, "take_profit": 0.06}),
        ({"max_bars": 7, "size": 0.5}, {"max_bars": 7, "size": 0.5}),
        (
            {"stop_distance": "2 * atr(14)", "target_distance": "3 * atr(14)"},
            {
                "stop_distance": sieve.indicator(frame, "2 * atr(14)"),
                "target_distance": sieve.indicator(frame, "3 * atr(14)").to_numpy(),
            },
        ),
        # Entries by a buy stop at the 5-bar high, good for 2 bars.
        (
            {"entry_stop": "highest(high, 5)", "order_bars": 2, "stop_loss": 0.04},
            {"entry_stop": sieve.indicator(frame, "highest(high, 5)"), "order_bars": 2, "stop_loss": 0.04},
        ),
        # A stop that moves on every close of the trade, up only.
        (
            {"stop_loss": 0.05, "stop_level": "highest(high, 10) - 2 * atr(14)"},
            {"stop_loss": 0.05, "stop_level": sieve.indicator(frame, "highest(high, 10) - 2 * atr(14)")},
        ),
    ]
    reasons = set()
    for rule_keys, signal_keys in cases:
        strategy = dict(entry=entry, exit=exit_, **rule_keys)
        want = sieve.backtest(frame, None, {}, config=dict(config, strategy=strategy), trades=True, equity=True)
        got = sieve.backtest_signals(frame, up, down, config=config, trades=True, equity=True, **signal_keys)
        pdt.assert_frame_equal(_column_trades(got["trades"], "x"), want["trades"])
        pdt.assert_series_equal(got["equity"]["x"], want["equity"], check_names=False)
        assert got["metrics"]["score"].iloc[0] == want["windows"]["score"]["objective"]
        reasons |= set(want["trades"]["exit_reason"])
    # The cases reach every way a managed trade ends.
    assert {"stop_loss", "take_profit", "max_bars", "reversal", "stop_level"} <= reasons
    # Per-column values (a dict, a Series by label) equal each column alone;
    # bars × columns (a DataFrame) pairs by label.
    entries = pd.DataFrame({"a": up, "b": up.shift(1, fill_value=False)})
    stops = {"a": 0.02, "b": 0.08}
    many = sieve.backtest_signals(frame, entries, down, config=config, stop_loss=stops, size=pd.Series({"b": 0.5, "a": 1}))
    table = pd.DataFrame({"b": np.full(len(frame), 0.08), "a": np.full(len(frame), 0.02)}, index=frame.index)
    pdt.assert_frame_equal(
        sieve.backtest_signals(frame, entries, down, config=config, stop_loss=table, size=[1, 0.5]), many
    )
    for name, stop, size in [("a", 0.02, 1.0), ("b", 0.08, 0.5)]:
        one = sieve.backtest_signals(frame, entries[name], down, config=config, stop_loss=stop, size=size)
        pdt.assert_series_equal(many.loc[name], one.iloc[0], check_names=False)
    # A stop changes the result (the keys are read).
    assert not many.loc["a"].equals(sieve.backtest_signals(frame, up, down, config=config).iloc[0])
    with pytest.raises(sieve.ConfigError, match="stop_loss and stop_distance: give one of them"):
        sieve.backtest_signals(frame, up, down, stop_loss=0.1, stop_distance=2.0)
    with pytest.raises(sieve.DataError, match="stop_loss: no value for column 'b'"):
        sieve.backtest_signals(frame, entries, down, stop_loss={"a": 0.1})
    with pytest.raises(sieve.DataError, match="size: shape"):
        sieve.backtest_signals(frame, entries, down, size=[0.5, 0.5, 0.5])
    with pytest.raises(sieve.DataError, match="stop_loss: a Series is one value per bar .* or one per signal column"):
        sieve.backtest_signals(frame, entries, down, stop_loss=pd.Series(np.full(len(frame), 0.05)))
    with pytest.raises(sieve.DataError, match="no signal columns"):
        sieve.backtest_signals(frame, entries[[]], down, robust=True)
    with pytest.raises(sieve.DataError, match=r"entries: 1499 rows where the data has 1500 bars"):
        sieve.backtest_signals(frame, entries.to_numpy()[1:], down.to_numpy()[1:])
    # Tuple labels stay tuples.
    pairs = entries.set_axis([("a", 1), ("b", 2)], axis=1)
    assert list(sieve.backtest_signals(frame, pairs, down).index) == [("a", 1), ("b", 2)]


def test_robustness_of_a_signal_set(frame):
    # DSR with the columns as trials, PBO with the columns as candidates.
    from statistics import NormalDist

    start, end = 600, 1200
    score = {"objective": "sharpe", "score_start": str(frame.index[start].date()), "holdout_start": str(frame.index[end].date())}
    config = {"backtest": {"fill": "close"}, "score": score}
    rng = np.random.default_rng(5)
    shape = (len(frame), 40)
    noise_in = pd.DataFrame(rng.random(shape) < 0.1, index=frame.index).add_prefix("n")
    noise_out = pd.DataFrame(rng.random(shape) < 0.1, index=frame.index).add_prefix("n")
    got = sieve.backtest_signals(frame, noise_in, noise_out, config=config, equity=True, robust=True)
    r = got["robustness"]
    assert r["best"] == got["metrics"]["score"].idxmax() and r["score"] == got["metrics"]["score"].max()
    assert r["holdout"] == got["metrics"].loc[r["best"], "holdout_score"]
    # The DSR from its formula (docs/metrics.md) over the equity curves.
    equity = got["equity"].to_numpy()
    returns = equity[start:end] / equity[start - 1 : end - 1] - 1
    sharpes = returns.mean(axis=0) / returns.std(axis=0, ddof=1)
    best = list(got["metrics"].index).index(r["best"])
    x = returns[:, best]
    m = x - x.mean()
    skew, kurt = (m**3).mean() / (m**2).mean() ** 1.5, (m**4).mean() / (m**2).mean() ** 2
    n, v, euler = shape[1], sharpes.var(ddof=1), 0.5772156649015329
    phi = NormalDist()
    sr0 = math.sqrt(v) * ((1 - euler) * phi.inv_cdf(1 - 1 / n) + euler * phi.inv_cdf(1 - 1 / (n * math.e)))
    sr = sharpes[best]
    dsr = phi.cdf((sr - sr0) * math.sqrt(len(x) - 1) / math.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr**2))
    d = r["dsr"]
    assert d["trials"] == n and d["observations"] == len(x)
    for key, want in [("sharpe", sr), ("skew", skew), ("kurtosis", kurt), ("sharpe_variance", v), ("expected_max_sharpe", sr0), ("dsr", dsr)]:
        assert d[key] == pytest.approx(want, rel=1e-9), key
    assert r["pbo"]["candidates"] == n and r["pbo"]["blocks"] == 16
    # Noise is judged as noise; one column that sees the next close is real
    # (the in-sample best is the out-of-sample best in every split).
    assert r["pbo"]["pbo"] > 0.2 and not r["verdict"].startswith("plausibly real"), r["verdict"]
    ahead = frame["close"].shift(-1)
    noise_in["seer"], noise_out["seer"] = ahead > frame["close"], ahead < frame["close"]
    seen = sieve.backtest_signals(frame, noise_in, noise_out, config=config, robust=True)["robustness"]
    assert seen["best"] == "seer" and seen["pbo"]["pbo"] == 0.0 and seen["dsr"]["dsr"] > 0.99
    assert seen["verdict"].startswith("plausibly real")
    # ... and its figures are beyond what markets give: the verdict says
    # so, and names look-ahead (issue 47, item 8).
    assert "implausible: the score window shows an annualised Sharpe of" in seen["verdict"], seen["verdict"]
    assert "look-ahead" in seen["verdict"]
    assert "implausible" not in r["verdict"]


def test_indicators_of_your_own_sweep_as_the_rules_own(files, frame, tmp_path):
    # A Supertrend written in numpy (test_talib's reference), swept through
    # indicators=, gives the sweep of the rule language's supertrend; the
    # function is called once per distinct setting, for the whole run.
    from test_talib import supertrend

    calls = []

    def st(df, n, mult):
        if len(df) == len(frame):  # not the look-ahead check's shorter frames
            calls.append((n, mult))
        assert isinstance(n, int) and isinstance(mult, float) and list(df.columns)[:4] == ["open", "high", "low", "close"]
        line, _ = supertrend(df["high"].to_numpy(), df["low"].to_numpy(), df["close"].to_numpy(), n, mult)
        return pd.Series(line, index=df.index)

    def config(call):
        return {
            "strategy": {
                "name": "trend",
                "entry": "close > %s * (1 + k / 1000)" % call,
                "exit": "close < %s" % call,
                "params": {"n": {"values": [7, 10, 14]}, "mult": {"values": [2.0, 2.5, 3.0]}, "k": {"values": [1, 2]}},
            },
            "score": {"score_start": "40%"},
            "optimize": {"iterations": 2},
        }

    yours = {"st": (st, [("n", int), "mult"])}
    want = sieve.sweep(frame, config("supertrend(n, mult)"), top=18)
    got = sieve.sweep(frame, config("st(n, mult)"), top=18, indicators=yours)
    pdt.assert_frame_equal(got, want, check_exact=True)
    # 9 settings (k does not reach st), each called once.
    assert sorted(calls) == sorted({(n, m) for n in [7, 10, 14] for m in [2.0, 2.5, 3.0]})
    # The same through verify, optimize (a run folder) and indicator.
    pdt.assert_frame_equal(
        sieve.verify(frame, config("st(n, mult)"), got, indicators=yours),
        sieve.verify(frame, config("supertrend(n, mult)"), want),
        check_exact=True,
    )
    calls.clear()
    best = sieve.optimize(frame, config("st(n, mult)"), out=tmp_path / "mine", indicators=yours)
    assert len(calls) == len(set(calls)) > 0
    assert best["params"] == sieve.optimize(frame, config("supertrend(n, mult)"), out=tmp_path / "rules")["params"]
    pdt.assert_series_equal(
        sieve.indicator(frame, "st(10, 3)", indicators=yours), sieve.indicator(frame, "supertrend(10, 3)"), check_names=False
    )
    # And a walk-forward: the same folds, parameters and scores as the CLI
    # running the rule language's supertrend.
    folds = {"walkforward": {"train": "2y", "test": "6m"}}
    cli_config = write_toml(tmp_path / "wf.toml", dict(config("supertrend(n, mult)"), **folds))
    cli("walkforward", "--config", cli_config, "--data", files["prices"], "--out", tmp_path / "wf-cli")
    mine = sieve.walkforward(frame, dict(config("st(n, mult)"), **folds), out=tmp_path / "wf-mine", indicators=yours)
    assert (tmp_path / "wf-mine" / "walkforward.csv").read_text() == (tmp_path / "wf-cli" / "walkforward.csv").read_text()
    assert mine["folds"] == mine["folds_with_a_best"] >= 2
    # Errors name the function and the setting.
    def broken(df, n):
        if n == 5:
            raise RuntimeError("no data for 5")
        return df["close"].rolling(n).mean()

    grid = {"strategy": {"name": "b", "entry": "close > f(n)", "exit": "close < f(n)", "params": {"n": {"values": [3, 5, 8]}}}}
    with pytest.raises(sieve.SieveError, match=r"indicator f\(n=5\) raised RuntimeError: no data for 5"):
        sieve.sweep(frame, grid, indicators={"f": (broken, [("n", int)])})
    with pytest.raises(sieve.DataError, match=r"indicator f\(n=3\) returned 10 values; the data has 1500 bars"):
        sieve.sweep(frame, grid, indicators={"f": (lambda df, n: np.zeros(10), ["n"])})
    with pytest.raises(sieve.DataError, match=r"indicator f\(n=3\) returned a single value; the data has 1500 bars"):
        sieve.sweep(frame, grid, indicators={"f": (lambda df, n: 1.5, ["n"])})
    with pytest.raises(sieve.DataError, match=r"indicator f\(n=3\) returned str"):
        sieve.sweep(frame, grid, indicators={"f": (lambda df, n: "x" * len(df), ["n"])})
    with pytest.raises(sieve.RuleError, match="f takes 2 arguments, got 1"):
        sieve.sweep(frame, grid, indicators={"f": (broken, ["n", "m"])})
    with pytest.raises(sieve.ConfigError, match="'sma' is a word or function of the rule language"):
        sieve.sweep(frame, grid, indicators={"sma": (broken, ["n"])})
    with pytest.raises(sieve.DataError, match=r"f\(n=3\) returned a Series whose index is neither the bars' nor 0..n-1 in order"):
        sieve.sweep(frame, grid, indicators={"f": (lambda df, n: df["close"][::-1], ["n"])})
    # A RangeIndex (pd.Series(talib_output)) is read by position.
    positional = {"f": (lambda df, n: pd.Series(df["close"].rolling(int(n)).mean().to_numpy()), ["n"])}
    by_index = {"f": (lambda df, n: df["close"].rolling(int(n)).mean(), ["n"])}
    pdt.assert_frame_equal(sieve.sweep(frame, grid, indicators=positional), sieve.sweep(frame, grid, indicators=by_index))
    with pytest.raises(sieve.RuleError, match=r"n of f\(n\) is a whole number"):
        sieve.sweep(frame, dict(grid, strategy=dict(grid["strategy"], entry="close > f(n / 2)")), indicators={"f": (broken, [("n", int)])})


def test_several_instruments_as_a_dict_of_dataframes(files, frame, tmp_path):
    # {name: DataFrame} is data.paths with those files: the same sweep, the
    # same per-instrument columns.
    other_path = files["dir"] / "other.csv"
    cli("synth", "--bars", "1500", "--seed", "8", "--out", other_path)
    other = read_csv(other_path, parse_dates=["date"]).set_index("date")
    with_paths = dict(CONFIG, data={"paths": [str(files["prices"]), str(other_path)]})
    want = sieve.sweep(None, with_paths, top=20)
    got = sieve.sweep({"prices": frame, "other": other}, CONFIG, top=20)
    pdt.assert_frame_equal(got, want, check_exact=True)
    # A list of paths is data.paths too (replacing the config's data.path).
    listed = sieve.sweep([files["prices"], str(other_path)], dict(CONFIG, data={"path": "elsewhere.csv"}), top=20)
    pdt.assert_frame_equal(listed, want, check_exact=True)
    checked = sieve.verify({"prices": frame, "other": other}, CONFIG, got, top=5)
    assert "score_prices" in checked.columns and "score_other" in checked.columns
    with pytest.raises(TypeError, match=r"data\['x'\]: expected a pandas DataFrame"):
        sieve.sweep({"x": [1, 2]}, CONFIG)
    # optimize: the same best.json as the CLI with data.paths; the run
    # folder keeps each DataFrame as data/<name>.parquet, which `sieve
    # report` reads back.
    run = dict(CONFIG, optimize={"iterations": 2})
    config_path = write_toml(tmp_path / "paths.toml", dict(run, data={"paths": [str(files["prices"]), str(other_path)]}))
    cli("optimize", "--config", config_path, "--out", tmp_path / "cli")
    got = sieve.optimize({"prices": frame, "other": other}, run, out=tmp_path / "py")
    best = lambda run: (tmp_path / run / "best.json").read_text()
    assert best("py") == best("cli") and got["params"] == json.loads(best("cli"))["params"]
    assert sorted(os.listdir(tmp_path / "py" / "data")) == ["other.parquet", "prices.parquet"]
    os.remove(tmp_path / "py" / "report.html")
    cli("report", tmp_path / "py")
    assert (tmp_path / "py" / "report.html").is_file()
    # Resuming with the same frames is the same run.
    sieve.optimize({"prices": frame, "other": other}, run, out=tmp_path / "py")
    assert best("py") == best("cli")


def test_signal_frames_pair_by_name_and_keep_their_labels(frame):
    config = {"backtest": {"direction": "long_short"}}
    up, down = frame["close"] > frame["open"], frame["close"] < frame["open"]
    entries = pd.DataFrame({"001": up, "b": up.shift(2, fill_value=False)})
    exits = pd.DataFrame({"001": down, "b": down.shift(1, fill_value=False)})
    aligned = sieve.backtest_signals(frame, entries, exits, config=config)
    # Exits in another column order pair by name, not by position.
    pdt.assert_frame_equal(sieve.backtest_signals(frame, entries, exits[["b", "001"]], config=config), aligned)
    assert list(aligned.index) == ["001", "b"]  # labels kept, not read back as numbers
    with pytest.raises(sieve.DataError, match="their columns differ"):
        sieve.backtest_signals(frame, entries, exits.set_axis(["x", "y"], axis=1), config=config)
    # Text is not booleans; short signals need long_short.
    with pytest.raises(sieve.DataError, match="expected booleans"):
        sieve.backtest_signals(frame, np.where(up, "True", "False"), down.to_numpy(), config=config)
    with pytest.raises(sieve.SieveError, match='backtest.direction is "long"'):
        sieve.backtest_signals(frame, up, down, down, up)
    with pytest.raises(sieve.DataError, match="two instruments are named '1'"):
        sieve.sweep({1: frame, "1": frame}, CONFIG)


def test_each_instrument_keeps_its_time_zone(frame):
    ny = frame.tz_localize("UTC").tz_convert("America/New_York")
    got = sieve.backtest({"ny": ny, "naive": frame}, "sma_cross", {"fast": 6, "slow": 50}, config=CONFIG, equity=True)
    assert got["equity"]["ny"].index.equals(ny.index)
    assert got["equity"]["naive"].index.equals(frame.index)


def test_a_column_of_the_dataframe_reads_as_the_rules_computing_it(frame, tmp_path):
    # The rule language computes the spread; the same values as a column of
    # the DataFrame (and of a Parquet file written from it by sieve's run
    # folder) give the identical sweep and optimum.
    spread = "sma(close, 10) - ema(close, 30)"
    data = frame.assign(spread=sieve.indicator(frame, spread), **{"My Spread": sieve.indicator(frame, spread)})
    params = {"k": {"start": -2, "stop": 2, "step": 0.25}}
    computed = {"strategy": {"name": "s", "entry": spread + " > k", "exit": spread + " < k", "params": params}}
    read = {"strategy": {"name": "s", "entry": "spread > k", "exit": "col('My Spread') < k", "params": params}}
    want = sieve.sweep(frame, computed)
    assert len(want) == 17
    pdt.assert_series_equal(sieve.indicator(data, "col('My Spread')"), data["My Spread"], check_names=False)
    pdt.assert_frame_equal(sieve.sweep(data, read), want, check_exact=True)
    # Through optimize's run folder (data.parquet keeps the column).
    run = sieve.optimize(data, dict(read, optimize={"iterations": 1}), out=tmp_path / "run")
    want_run = sieve.optimize(frame, dict(computed, optimize={"iterations": 1}), out=tmp_path / "c")
    assert (run["params"], run["score"]) == (want_run["params"], want_run["score"])
    cli("report", tmp_path / "run")
    with pytest.raises(sieve.SieveError, match=r"no column 'my spread' \(did you mean 'My Spread'\?\)"):
        sieve.sweep(data, dict(read, strategy=dict(read["strategy"], exit="col('my spread') < k")))


def test_report_is_the_run_folders_page_and_shows_inline(frame, tmp_path):
    out = tmp_path / "run"
    sieve.optimize(frame, dict(CONFIG, optimize={"iterations": 1}), out=out)
    page = sieve.report(out)
    assert page == str(out / "report.html") and isinstance(page, str)
    shown = page._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "&lt;html" in shown.lower()
    with pytest.raises(sieve.FileError, match="no report.html"):
        sieve.report(tmp_path)


def _spike_and_plateau():
    """Bars where holding while x == p earns a known total return: a spike
    at p = 2 between two losers (1 and 3), a plateau at 6, 7, 8."""
    drift = {1: -0.015, 2: 0.02, 3: -0.015, 6: 0.012, 7: 0.012, 8: 0.012}
    xs, close = [], [100.0]
    for _cycle in range(3):
        for p in range(10):
            xs += [p] * 10 + [-1] * 10
    for x in xs[:-1]:
        close.append(close[-1] * (1 + drift.get(x, 0.0)))
    close = np.array(close)
    return pd.DataFrame(
        {"open": close, "high": close, "low": close, "close": close, "x": np.array(xs, dtype=float)},
        index=pd.date_range("2010-01-01", periods=len(xs), freq="D"),
    )


def test_plateau_selection_prefers_the_ridge_to_the_spike(tmp_path):
    frame = _spike_and_plateau()
    config = {
        "strategy": {"name": "band", "entry": "x == p", "exit": "x != p", "params": {"p": {"start": 0, "stop": 9, "step": 1}}},
        "backtest": {"fill": "close"},
        "score": {"objective": "total_return"},
        "optimize": {"iterations": 1},
    }
    total = lambda mu: (1 + mu) ** 30 - 1
    argmax = sieve.optimize(frame, config, out=tmp_path / "argmax")
    assert argmax["params"]["p"] == 2 and "selection" not in argmax
    assert argmax["score"] == pytest.approx(total(0.02), rel=1e-9)
    for how, want in [("mean", total(0.012)), ("min", total(0.012))]:
        run = dict(config, robust={"select": "plateau", "neighbour_aggregate": how})
        best = sieve.optimize(frame, run, out=tmp_path / how)
        assert best["params"]["p"] == 7, how
        s = best["selection"]
        assert s["rule"] == "plateau (%s)" % how
        assert s["chosen"]["params"]["p"] == 7 and s["chosen"]["neighbours"] == 2
        assert s["chosen"]["neighbourhood"] == pytest.approx(want, rel=1e-9)
        assert s["argmax"]["params"]["p"] == 2 and s["argmax"]["objective"] == pytest.approx(total(0.02), rel=1e-9)
        # The spike's neighbourhood, by hand: it and its two losing neighbours.
        spike = [total(0.02), total(-0.015), total(-0.015)]
        assert s["argmax"]["neighbourhood"] == pytest.approx(sum(spike) / 3 if how == "mean" else min(spike), rel=1e-9)
        # The PBO's in-sample pick is the same rule.
        assert best["robustness"]["pbo"]["pick"] == "plateau (%s)" % how
        assert "pick" not in argmax["robustness"]["pbo"]
        # The surface through the chosen point: every p, by hand.
        (slice_,) = s["surface"]
        drift = {1: -0.015, 2: 0.02, 3: -0.015, 6: 0.012, 7: 0.012, 8: 0.012}
        assert slice_["param"] == "p" and slice_["values"] == list(range(10))
        assert slice_["objectives"] == pytest.approx([total(drift.get(p, 0.0)) for p in range(10)], rel=1e-9, abs=1e-12)
        page = (tmp_path / how / "report.html").read_text()
        assert "Choice: plateau (%s) vs argmax" % how in page and "Objective along p" in page
        # plateau.csv ranks every verified candidate; an edge has one neighbour.
        ranked = pd.read_csv(tmp_path / how / "iter-001" / "plateau.csv")
        assert list(ranked["p"][:1]) == [7] and int(ranked.loc[ranked["p"] == 0, "neighbours"].iloc[0]) == 1
    # Resuming with more iterations keeps the first iteration's choice; the
    # next grid is anchored on it (refine_from starts with it).
    more = dict(config, robust={"select": "plateau"}, optimize={"iterations": 2})
    resumed = sieve.optimize(frame, more, out=tmp_path / "mean")
    assert resumed["params"]["p"] == 7
    with open(tmp_path / "mean" / "run.json") as f:
        first = json.load(f)["iterations"][0]
    assert first["refine_from"][0] == [7.0] and first["best"]["params"] == [7.0] and first["argmax"]["params"] == [2.0]
    # Walk-forward folds choose by the configured rule too.
    folds = dict(config, robust={"select": "plateau"}, walkforward={"train": "400", "test": "100"})
    sieve.walkforward(frame, folds, out=tmp_path / "wf")
    fold_bests = sorted((tmp_path / "wf").glob("fold-*/best.json"))
    assert len(fold_bests) >= 2
    for path in fold_bests:
        assert json.loads(path.read_text())["selection"]["rule"] == "plateau (mean)"


def test_every_trade_management_key_is_a_signal_keyword():
    """The keys come from one table in the native module; backtest_signals
    and its stub must take each as a keyword (a key added to the table and
    not here fails this test)."""
    import inspect
    import pathlib

    keys = list(sieve._native.TRADE_KEYS)
    assert keys[:2] == ["stop_loss", "stop_distance"] and "size" in keys
    params = inspect.signature(sieve.backtest_signals).parameters
    stub = (pathlib.Path(sieve.__file__).parent / "__init__.pyi").read_text()
    signature = stub[stub.index("def backtest_signals("):]
    signature = signature[: signature.index(") ->")]
    for key in keys:
        assert key in params, key
        assert params[key].default is None, key
        assert f"    {key}: " in signature, key


def test_backtest_sets_a_rule_parameter_without_a_grid_as_the_cli_does(files, frame, tmp_path):
    """A rule parameter with no grid at all takes the value given, in
    Python as with the CLI's --set (one way to decide a backtest's config
    for both)."""
    config = {
        "strategy": {
            "name": "dip",
            "entry": "close < sma(close, n) * (1 - d)",
            "exit": "close > sma(close, n)",
            "params": {"d": {"values": [0.01, 0.02]}},
        },
        "score": {"score_start": "2016-01-01"},
    }
    path = write_toml(tmp_path / "dip.toml", config)
    want = json.loads(cli("backtest", "-c", path, "--data", files["prices"], "--set", "n=20", "--set", "d=0.02", "--json"))
    assert want["params"] == {"n": 20.0, "d": 0.02}
    assert sieve.backtest(frame, None, {"n": 20, "d": 0.02}, config=config) == want
    # Without a value for n: the error names it, as the CLI's does.
    with pytest.raises(sieve.RuleError, match="unknown name 'n'"):
        sieve.backtest(frame, None, {"d": 0.02}, config=config)


def test_an_indicator_that_runs_sieve_is_refused(frame):
    """An indicator that calls sieve.sweep on itself would recurse without
    end (each level a new pool): sieve refuses to run from inside one."""
    calls = []

    def recursive(df, n):
        calls.append(n)
        sieve.sweep(df, config, indicators=yours)
        return df["close"].rolling(n).mean()

    yours = {"f": (recursive, [("n", int)])}
    config = {
        "strategy": {
            "name": "s",
            "entry": "close > f(n)",
            "exit": "close < f(n)",
            "params": {"n": {"values": [5, 10]}},
        },
    }
    with pytest.raises(sieve.SieveError, match="inside an indicator"):
        sieve.sweep(frame, config, indicators=yours)
    assert len(calls) <= 2, "the indicator ran %d times" % len(calls)


def test_too_many_threads_name_the_keyword_and_the_limit(frame):
    """The limit as Python says it (not the CLI's --threads, not a clamped
    number)."""
    with pytest.raises(ValueError, match=r"threads=1000000000000: at most 4096 \(0 = one per core\)"):
        sieve.sweep(frame, CONFIG, threads=10**12)


def test_signal_trade_keys_follow_the_configs_rule(frame):
    """Trade-management values given to backtest_signals are checked by the
    rule the config's constants follow (issue 47, item 9): a size above the
    leverage, a size of 0 or below, fractional bars, a stop in percent or
    below 0 are refused, naming the key and column; a target in percent is
    warned about; a per-column dict naming no column is refused."""
    up = frame["close"] > frame["close"].rolling(10).mean()
    down = ~up
    refused = [
        ({"size": 2}, r"size: column 'close', every bar: 2 is above backtest.max_leverage = 1"),
        (
            {"size": np.where(np.arange(len(frame)) == 5, 2.0, 0.5)},
            r"size: column 'close', bar 5 \(.*\): 2 is above backtest.max_leverage = 1",
        ),
        ({"size": 0}, r"size: .*must be above 0"),
        ({"size": -1}, r"size: .*must be above 0"),
        ({"max_bars": 2.5}, r"max_bars: .*must be a whole number of bars ≥ 0, got 2.5"),
        ({"stop_loss": 5}, r"stop_loss: .*must be below 1 \(a fraction of the entry price: 0.05 is 5 %\)"),
        ({"stop_loss": -0.05}, r"stop_loss: .*must be above 0"),
        ({"stop_distance": 0}, r"stop_distance: .*must be above 0"),
    ]
    for keys, message in refused:
        with pytest.raises(sieve.SieveError, match=message):
            sieve.backtest_signals(frame, up, down, **keys)
    # The CLI refuses the same number with the same words.
    with pytest.raises(sieve.SieveError, match=r"strategy.stop_loss.*must be below 1"):
        sieve.backtest(frame, "sma_cross", {}, config={"strategy": {"stop_loss": 5}})
    with pytest.warns(UserWarning, match=r"take_profit = 10 puts the target 1000 % from the entry price"):
        sieve.backtest_signals(frame, up, down, take_profit=10)
    wide = pd.DataFrame({"a": up, "b": up})
    with pytest.raises(sieve.DataError, match=r"stop_loss: 'typo' is not a signal column"):
        sieve.backtest_signals(frame, wide, ~wide, stop_loss={"a": 0.05, "b": 0.05, "typo": 0.5})
    # NaN leaves a bar unset, as before; a Decimal is a number.
    nan_stops = pd.Series(np.nan, index=frame.index)
    plain = sieve.backtest_signals(frame, up, down)
    pdt.assert_frame_equal(sieve.backtest_signals(frame, up, down, stop_loss=nan_stops), plain)
    from decimal import Decimal

    pdt.assert_frame_equal(
        sieve.backtest_signals(frame, up, down, stop_loss=Decimal("0.03")),
        sieve.backtest_signals(frame, up, down, stop_loss=0.03),
    )


def test_an_indicator_series_is_read_by_its_index_not_its_position(frame):
    """A returned Series with row numbers is accepted only as 0..n-1 in
    order: reversed, shifted or strided numbers would pair each value with
    another bar (look-ahead; issue 47, item 5)."""
    config = {"strategy": {"name": "s", "entry": "f(3) > 0", "exit": "f(3) < 0", "params": {}}}

    def frame_of(change):
        return {"f": (lambda df, n: change(df["close"].diff(n)), [("n", int)])}

    for bad in [
        lambda s: s.reset_index(drop=True)[::-1],
        lambda s: s.set_axis(pd.RangeIndex(1, len(s) + 1)),
        lambda s: s.set_axis(pd.RangeIndex(0, 2 * len(s), 2)),
    ]:
        with pytest.raises(sieve.DataError, match=r"neither the bars' nor 0..n-1 in order"):
            sieve.sweep(frame, config, indicators=frame_of(bad))
    by_position = sieve.sweep(frame, config, indicators=frame_of(lambda s: s.reset_index(drop=True)))
    by_time = sieve.sweep(frame, config, indicators=frame_of(lambda s: s))
    pdt.assert_frame_equal(by_position, by_time)


def test_signals_in_another_time_zone_pair_by_instant(frame):
    """Signals indexed by the same instants in another time zone pair with
    the data (naive data is UTC); where the instants truly differ the
    message names both zones (issue 47, item 13)."""
    up = frame["close"] > frame["close"].rolling(10).mean()
    want = sieve.backtest_signals(frame, up, ~up)
    utc = frame.index.tz_localize("UTC") if frame.index.tz is None else frame.index.tz_convert("UTC")
    in_utc = up.set_axis(utc)
    pdt.assert_frame_equal(sieve.backtest_signals(frame, in_utc, ~in_utc), want)
    new_york = frame.set_axis(utc.tz_convert("America/New_York"))
    pdt.assert_frame_equal(sieve.backtest_signals(new_york, in_utc, ~in_utc), want)
    shifted = in_utc.set_axis(utc + pd.Timedelta(hours=1))
    with pytest.raises(
        sieve.DataError, match=r"its times are in UTC, the data's in America/New_York, and the instants differ"
    ):
        sieve.backtest_signals(new_york, shifted, ~shifted)


def test_signal_labels_keep_their_levels_and_types(frame):
    """A MultiIndex of signal columns stays one (unstack and tuple lookups
    work, as with vectorbt); the best of a robust run is the label as given,
    1 and '1' told apart (issue 47, item 10)."""
    close = frame["close"]
    grid = [(f, s) for f in (5, 10) for s in (30, 50)]
    columns = pd.MultiIndex.from_tuples(grid, names=["fast", "slow"])
    fast_above = pd.DataFrame(
        {(f, s): close.rolling(f).mean() > close.rolling(s).mean() for f, s in grid}, index=frame.index
    )
    fast_above.columns = columns
    got = sieve.backtest_signals(frame, fast_above, ~fast_above, equity=True)
    assert isinstance(got["metrics"].index, pd.MultiIndex)
    assert list(got["metrics"].index.names) == ["fast", "slow"]
    table = got["metrics"]["sharpe"].unstack()
    assert list(table.index) == [5, 10] and list(table.columns) == [30, 50]
    one = sieve.backtest_signals(frame, fast_above[(5, 50)], ~fast_above[(5, 50)])
    assert got["metrics"].loc[(5, 50), "sharpe"] == one["sharpe"].iloc[0]
    assert got["equity"].columns.equals(got["metrics"].index)
    # Trades as one records table: each trade's column label, as given.
    traded = sieve.backtest_signals(frame, fast_above, ~fast_above, trades=True)["trades"]
    assert list(traded.columns[:3]) == ["column", "side", "status"]
    assert set(traded["column"]) == set(grid)
    single = sieve.backtest_signals(frame, fast_above[(5, 50)], ~fast_above[(5, 50)], trades=True)["trades"]
    pdt.assert_frame_equal(_column_trades(traded, (5, 50)), single.drop(columns="column"))
    # 1 and '1' are two columns; the better one is named as given.
    good = close.rolling(5).mean() > close.rolling(50).mean()
    never = pd.Series(False, index=frame.index)
    for labels, best in [((1, "1"), "1"), (("1", 1), "1")]:
        entries = pd.DataFrame({labels[0]: never, labels[1]: never})
        entries["1"] = good
        out = sieve.backtest_signals(frame, entries, ~entries, robust=True)
        assert out["robustness"]["best"] == best and isinstance(out["robustness"]["best"], str)
        assert list(out["metrics"].index) == list(labels)


def test_an_indicator_that_looks_ahead_or_is_random_is_warned_about(frame):
    """A Python indicator is recomputed on the bars cut short on its first
    call: a value that changes when later bars are added reads the future;
    two calls on the same bars that differ make a run irreproducible (issue
    47, item 8). An honest indicator is not warned about."""
    import warnings

    config = {"strategy": {"name": "s", "entry": "close > f(n)", "exit": "close < f(n)", "params": {"n": {"values": [5, 10]}}}}
    rng = np.random.default_rng(3)
    cases = {
        "the next close": lambda df, n: df["close"].shift(-1).rolling(n).mean(),
        "the whole sample's mean": lambda df, n: df["close"].rolling(n).mean() - df["close"].mean() + df["close"].iloc[0],
        "noise": lambda df, n: df["close"].rolling(n).mean() + rng.normal(0, 1e-3, len(df)),
        "honest": lambda df, n: df["close"].rolling(n).mean(),
    }
    said = {}
    for case, fn in cases.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sieve.sweep(frame, config, indicators={"f": (fn, [("n", int)])})
        said[case] = [str(w.message) for w in caught if issubclass(w.category, sieve.SieveWarning)]
    assert any(re.match(r"indicator f\(n=\d+\) looks ahead: its value at bar \d+ \(", m) for m in said["the next close"]), said
    assert any("looks ahead" in m for m in said["the whole sample's mean"]), said
    assert any("returned different values for the same bars on two calls" in m for m in said["noise"]), said
    assert not any("looks ahead" in m or "different values" in m for m in said["honest"]), said


def test_python_says_what_the_loader_noticed(frame):
    """What the CLI notes about the data, Python warns (issue 47, items 14
    and 16): an adjusted close left unused, and close-only data read as
    four equal prices (backtested as the same file written out)."""
    import warnings

    def said(data):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = sieve.backtest(data, "sma_cross", {"fast": 6, "slow": 50})
        return out, [str(w.message) for w in caught if issubclass(w.category, sieve.SieveWarning)]

    _, notes = said(frame.assign(**{"Adj Close": frame["close"] * 0.9}))
    assert any("column 'Adj Close' (adjusted close) is ignored" in n for n in notes), notes
    only, notes = said(frame[["close"]])
    assert any("only one price column ('close')" in n for n in notes), notes
    four, _ = said(frame[["close"]].assign(open=frame["close"], high=frame["close"], low=frame["close"]))
    assert only["windows"] == four["windows"]
