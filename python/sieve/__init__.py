"""sieve from Python: screen huge trading-strategy parameter grids, verify the
best exactly, and optimize, with the same numbers as the ``sieve`` CLI.

Every function takes ``data`` as a pandas DataFrame (a DatetimeIndex, naive =
UTC, tz-aware converted; or a time column; open/high/low/close in any case), a
path to a file the CLI reads (CSV, Parquet, Feather), or ``None`` for the
config's own ``data.path`` / ``data.paths`` (several instruments); and
``config`` as a dict with the TOML config's structure, TOML text, or a path to
a TOML file. Float64 and int64 columns are read straight from numpy's memory
(no conversion through Python objects).

Errors raise :class:`SieveError` (a ``ValueError``) with the CLI's message,
as the subclass of its kind: :class:`ConfigError` (a key or value; its
subclass :class:`RuleError` for a rule's text, with the column),
:class:`DataError`, :class:`ParameterError`, :class:`FileError` (a file that
cannot be read or written) or :class:`GpuError`.
Long calls release the GIL; Ctrl-C stops a sweep or optimize between chunks
(an optimize run folder stays resumable).
"""

from __future__ import annotations

import concurrent.futures
import io
import html
import json
import math
import numbers
import os
import sys
from collections.abc import Mapping
import numpy as np
import pandas as pd

from . import _native
from ._native import (
    ConfigError,
    DataError,
    FileError,
    GpuError,
    ParameterError,
    RuleError,
    SieveError,
    SieveWarning,
)

__all__ = [
    "SieveError",
    "ConfigError",
    "RuleError",
    "DataError",
    "ParameterError",
    "FileError",
    "GpuError",
    "SieveWarning",
    "backtest",
    "backtest_signals",
    "backtest_weights",
    "indicator",
    "optimize",
    "report",
    "Report",
    "strategies",
    "sweep",
    "verify",
    "walkforward",
    "__version__",
]

__version__ = _native.__version__

# The names the loaders take for the time column (any case).
_TIME_NAMES = tuple(_native.TIME_NAMES)


def backtest(data, strategy, params, config=None, equity=False, trades=False, indicators=None, informative=None):
    """Runs one parameter set through the exact engine.

    Returns the structure of ``sieve backtest --json``: ``strategy``,
    ``params``, ``objective`` and ``windows`` (each window's metrics and
    objective; with several instruments also ``aggregate`` and
    ``instruments``). With ``equity=True`` also ``"equity"``: a pandas Series
    of the equity curve indexed by time (UTC); with several instruments a dict
    of them by instrument name. With ``trades=True`` also ``"trades"``: a
    DataFrame of ``trades.csv``'s columns (times as datetimes, ``exit_reason``
    saying why each trade ended, ``entry_reason`` how it began) and each trade's ``duration``, ``mae`` and
    ``mfe`` (its maximum adverse and favourable excursions: the lowest low
    and highest high from its entry bar to its exit bar, both included, as
    fractions of the entry price, ≤ 0 and ≥ 0, mirrored for a short), or a
    dict of them by instrument.
    """
    overrides = []
    if strategy is not None:
        overrides.append("strategy.name=" + _toml_string(strategy))
    if params is None:
        params = {}
    if not hasattr(params, "items"):
        raise TypeError("params: expected a mapping of parameter names to numbers, got %s" % type(params).__name__)
    sets = ["%s=%s" % (name, _number(value, name)) for name, value in params.items()]
    with _Data(data, informative) as d:
        text, curves, traded, warned = _native.backtest(
            d.arg, _config(config, indicators), overrides, sets, bool(equity), bool(trades)
        )
        tz, tzs = d.tz, d.tzs
    # A portfolio's times (its curve is named "") in the first instrument's
    # zone.
    tz = next(iter(tzs.values())) if tzs else tz
    for w in warned:
        _warn(w)
    result = _numbers(json.loads(text))
    if equity:
        series = {name: _equity(times, values, tzs.get(name, tz)) for name, times, values in curves}
        result["equity"] = series[""] if "" in series else series
    if trades:
        names, records, instruments = traded
        if instruments is not None:
            # A portfolio: one table, each trade's instrument first, times
            # in the first instrument's zone.
            table, _ = _trades(records, tz)
            table.insert(0, "instrument", np.asarray(names, dtype=object)[np.asarray(instruments, dtype=np.int64)])
            result["trades"] = table
            return result
        # One table per instrument, its times in its own time zone.
        ends = np.cumsum(records[0])
        tables = {}
        for name, start, end in zip(names, np.r_[0, ends[:-1]], ends):
            table, _ = _trades(records, tzs.get(name, tz))
            tables[name] = table.iloc[start:end].reset_index(drop=True)
        result["trades"] = tables[""] if "" in tables else tables
    return result


def indicator(data, expression, config=None, indicators=None, informative=None):
    """The value of a rule expression on every bar, exactly as rules read it.

    ``expression`` is any expression of the rule language without
    parameters, e.g. ``"sar(0.02, 0.2)"`` or ``"barssince(close > open)"``;
    it may read the data's own columns by name (``"sma(signal, 5)"``) or as
    ``col("Any Name")``, as rules do. Returns a pandas Series indexed by time (numbers; true/false as 1.0 /
    0.0; NaN where undefined), or with several instruments a dict of them by
    instrument name.
    """
    if not isinstance(expression, str):
        raise TypeError("expression: expected a string, got %s" % type(expression).__name__)
    with _Data(data, informative) as d:
        columns = _native.indicator(d.arg, _config(config, indicators), expression)
        tz, tzs = d.tz, d.tzs
    series = {
        name: _equity(times, values, tzs.get(name, tz)).rename(expression) for name, times, values in columns
    }
    return series[""] if "" in series else series


def _time_index(times, tz):
    """Bar times (ms) as a DatetimeIndex like the input's: naive UTC times
    for naive input (and files), the input's time zone for tz-aware input."""
    index = pd.to_datetime(np.asarray(times, dtype=np.int64), unit="ms", utc=True)
    return index.tz_convert(tz) if tz is not None else index.tz_localize(None)


def _trades(records, tz):
    """The trades of one or many backtests as one DataFrame, from the
    native side's buffers: ``trades.csv``'s columns (times as datetimes
    like the equity's index, an open trade's exit time NaT), then each
    trade's ``duration`` (NaT while open), ``mae`` and ``mfe``. Also the
    count of trades of each backtest, in order."""
    counts, times, numbers, codes, reasons, entries = records
    n = int(sum(counts))
    times = np.frombuffer(times, dtype="<i8").reshape(2, n)
    numbers = np.frombuffer(numbers, dtype="<f8").reshape(8, n)
    short, still_open, reason, entry = np.frombuffer(codes, dtype=np.uint8).reshape(4, n)

    def at(ms):
        return pd.Series(_time_index(np.where(ms < 0, 0, ms), tz)).where(ms >= 0)

    entry_time, exit_time = at(times[0]), at(times[1])
    table = pd.DataFrame(
        {
            "side": np.array(["long", "short"], dtype=object)[short],
            "status": np.array(["closed", "open"], dtype=object)[still_open],
            "entry_time": entry_time,
            "entry_price": numbers[0],
            "exit_time": exit_time,
            "exit_price": numbers[1],
            "units": numbers[2],
            "fees": numbers[3],
            "pnl": numbers[4],
            "return": numbers[5],
            "exit_reason": np.asarray(reasons, dtype=object)[reason],
            "entry_reason": np.asarray(entries, dtype=object)[entry],
            "duration": exit_time - entry_time,
            "mae": numbers[6],
            "mfe": numbers[7],
        }
    )
    return table, [int(c) for c in counts]


# backtest_signals' trade-management keywords: the [strategy] keys, from
# the one table of them (each is also a keyword of backtest_signals and of
# __init__.pyi; a test checks both).
_SIGNAL_KEYS = tuple(_native.TRADE_KEYS)


def backtest_signals(
    data,
    entries,
    exits,
    short_entries=None,
    short_exits=None,
    config=None,
    threads=0,
    trades=False,
    equity=False,
    stop_loss=None,
    stop_distance=None,
    take_profit=None,
    target_distance=None,
    trail_loss=None,
    trail_distance=None,
    max_bars=None,
    size=None,
    stop_level=None,
    entry_stop=None,
    entry_limit=None,
    order_bars=None,
    max_entries=None,
    robust=False,
    portfolio=False,
    size_of="equity",
    max_positions=None,
    rank=None,
    max_exposure=None,
):
    """Backtests signals of your own through the exact engine, as
    vectorbt's ``Portfolio.from_signals`` does, with ``[backtest]`` and
    ``[score]`` of ``config`` (fees, slippage, fill, direction, lots,
    windows, objective, ``min_trades``).

    ``entries`` / ``exits`` (and ``short_entries`` / ``short_exits``, both or
    neither) are booleans aligned with ``data``: a Series or 1-D array for
    one backtest, a DataFrame or 2-D array (bars × columns) for one per
    column, run in parallel without the GIL. Pandas objects must carry the
    DataFrame's index. An entry while long and an exit while flat do
    nothing; an entry and an exit on the same bar cancel (so do a long and
    a short entry); with
    ``direction = "long_short"`` and no short signals an exit goes short and
    an entry covers it, as a rule strategy's ``exit`` does; missing values
    are False.

    Trade management, as the ``[strategy]`` keys of the same names:
    ``stop_loss`` / ``take_profit`` (a fraction of the entry price),
    ``stop_distance`` / ``target_distance`` (price units; one of each
    pair), ``trail_loss`` / ``trail_distance`` (a stop that trails the
    best price since entry inside each bar, as vectorbt's ``sl_trail``),
    ``max_bars`` and ``size`` (a fraction of equity, capped at
    ``backtest.max_leverage``), and ``stop_level`` (a price: the stop
    moves there on each close of the trade where that is tighter, up for a
    long, down for a short; checked from the next bar), ``entry_stop`` /
    ``entry_limit`` (an entry becomes a stop or limit order at this price,
    read on the deciding close, good for ``order_bars`` bars, default 1;
    docs/config.md, "Entry orders"), ``max_entries`` (pyramiding: an entry
    signal while held adds ``size`` more, up to this many entries). Each is a number for every column; one
    value per column (a dict or Series by column label, or a 1-D array as
    long as the columns); one per bar for every column (a Series with the
    data's index, or a 1-D array as long as the data); or bars × columns
    (a DataFrame paired by index and column label, or a 2-D array). A
    trade reads the value of the bar whose close decided its entry; NaN
    switches the key off for that trade. Every other value is checked
    as the config checks a number for that key (``stop_loss`` above 0 and
    below 1, ``size`` above 0 and at most ``backtest.max_leverage``,
    ``max_bars`` whole, …): an error names the key, the column and the bar.
    After a stop or a target, an entry signal on that very close enters
    again.

    Returns a DataFrame indexed by column name with ``verified.csv``'s
    numbers: ``score`` (the objective over the score window),
    ``full_score``, ``holdout_score`` and the score window's metrics. With
    ``trades=True`` and/or ``equity=True``, a dict instead: ``"metrics"``
    (that DataFrame), ``"trades"`` (every column's trades in one records
    table: ``column``, the signal column's label, then the columns
    ``backtest(trades=True)`` gives) and ``"equity"`` (a DataFrame of the
    equity curves, a column per signal column, indexed by time).

    ``portfolio=True`` runs the instruments of ``data`` (a dict of
    DataFrames) from one account instead: ``entries``, ``exits`` and
    ``rank`` are DataFrames with a column per instrument; each entry
    commits ``size`` × the cash free (``size_of="cash"``) or the
    portfolio's value (``size_of="equity"``, the default, with ``size``
    1 / the number of instruments unless given); at most
    ``max_positions`` are open; a bar's exits fill first, then its entries
    by ``rank``, highest first. Returns ``{"equity", "positions",
    "exposure", "trades", "contribution"}``; docs/config.md, "Portfolios",
    has the rules.

    ``robust=True`` adds ``"robustness"`` to that dict: the set judged as an
    optimize run's candidates are — ``best`` (the column with the highest
    score, the first on a tie), its ``score`` and ``holdout``, ``dsr`` (its
    Deflated Sharpe Ratio with every column a trial), ``pbo`` (the
    Probability of Backtest Overfitting with every column of finite score a candidate, or
    ``pbo_skipped`` saying why there is none) and the ``verdict`` sentence.
    """
    if portfolio:
        given = dict(locals())
        unsupported = [k for k in ("stop_loss", "stop_distance", "take_profit",
                                   "target_distance", "trail_loss", "trail_distance", "max_bars",
                                   "stop_level", "entry_stop", "max_entries",
                                   "entry_limit", "order_bars") if given[k] is not None]
        if unsupported or robust:
            raise TypeError("portfolio=True does not take %s yet" % ", ".join(unsupported or ["robust"]))
        if (short_entries is None) != (short_exits is None):
            raise TypeError("short_entries and short_exits: give both or neither")
        return _portfolio_signals(data, entries, exits, config, size, size_of, max_positions, rank,
                                  short_entries, short_exits, max_exposure)
    # Every trade-management keyword, by the table's names.
    arguments = dict(locals())
    if (short_entries is None) != (short_exits is None):
        raise TypeError("short_entries and short_exits come together")
    with _Data(data) as d:
        index = data.index if isinstance(data, pd.DataFrame) else None
        signals = {"entries": entries, "exits": exits}
        if short_entries is not None:
            signals.update(short_entries=short_entries, short_exits=short_exits)
        labels = _signal_labels(signals)
        # The signals' own column index (a MultiIndex keeps its levels).
        columns = next((v.columns for v in signals.values() if isinstance(v, pd.DataFrame)), None)
        if labels is not None:
            # DataFrames pair up by column name, as vectorbt aligns them.
            signals = {k: (v[labels] if isinstance(v, pd.DataFrame) else v) for k, v in signals.items()}
        empty = [k for k, v in signals.items() if _signal_width(v) == 0]
        if empty:
            raise DataError("%s: no signal columns (a DataFrame or 2-D array with at least one column)" % empty[0])
        width = max((_signal_width(v) for v in signals.values()), default=1)
        arrays = {k: _signal_array(k, v, index, width) for k, v in signals.items()}
        named = labels is not None
        labels = labels if named else _signal_names(signals.values(), width)
        short = None
        if short_entries is not None:
            short = (arrays["short_entries"][0], arrays["short_exits"][0])
        records = bool(trades) or bool(equity)
        given = {k: arguments[k] for k in _SIGNAL_KEYS}
        bars = arrays["entries"][1]
        keys = [
            (name,) + _signal_values(name, value, index, list(labels), named, bars)
            for name, value in given.items()
            if value is not None
        ]
        # Names for the native side, one per column and distinct (1 and '1'
        # are told apart by repr), so that its best maps back by position.
        names = [str(c) for c in labels]
        if len(set(names)) < len(names):
            names = [repr(c) for c in labels]
        text, traded, curves, robustness, notes = _native.backtest_signals(
            d.arg, _config(config, None), [], names, arrays["entries"][0], arrays["exits"][0], short,
            keys, _threads(threads), bool(trades), bool(equity), bool(robust),
        )
        for note in notes:
            _warn(note)
        tz = d.tz
    # The rows keep the columns' own labels (not re-read from text).
    result = _csv(text).drop(columns="column")
    if isinstance(columns, pd.MultiIndex):
        index = pd.MultiIndex.from_tuples(list(labels), names=columns.names)
    else:
        index = pd.Index(list(labels), name="column", tupleize_cols=False)
    result.index = index
    if not records and not robust:
        return result
    out = {"metrics": result}
    if robust:
        out["robustness"] = _numbers(json.loads(robustness))
        # The best by its own label, as the metrics table's index has it.
        out["robustness"]["best"] = labels[names.index(out["robustness"]["best"])]
    if trades:
        table, counts = _trades(traded, tz)
        # The records table: each trade's column label first.
        each = np.empty(len(labels), dtype=object)
        for i, label in enumerate(labels):
            each[i] = label  # one by one: a tuple label stays one value
        table.insert(0, "column", np.repeat(each, counts))
        out["trades"] = table
    if equity:
        times, values = curves
        values = np.frombuffer(values, dtype="<f8").reshape(len(labels), len(times))
        # Over the native (writable) buffer, not copied again.
        out["equity"] = pd.DataFrame(values.T, index=_time_index(times, tz), columns=index, copy=False)
    return out


def _portfolio_signals(data, entries, exits, config, size, size_of, max_positions, rank,
                       short_entries=None, short_exits=None, max_exposure=None):
    """backtest_signals(portfolio=True): the instruments of ``data`` (a dict
    of DataFrames) trading from one account; see docs/config.md,
    "Portfolios". Signal columns with an ``instrument`` level beside others
    are a grid: one portfolio per combination of the other levels."""
    columns = getattr(entries, "columns", None)
    if isinstance(columns, pd.MultiIndex) and "instrument" in columns.names:
        if short_entries is not None or max_exposure is not None:
            raise TypeError("short_entries/short_exits and max_exposure: a grid of portfolios takes neither so far")
        return _portfolio_grid(data, entries, exits, config, size, size_of, max_positions, rank)
    if not isinstance(data, Mapping) or not data:
        raise DataError("data: portfolio=True takes a dict of DataFrames, one per instrument")
    if size is None:
        # An equal share of the positions that can be open at once.
        slots = max_positions if isinstance(max_positions, int) and 1 <= max_positions < len(data) else len(data)
        size = 1.0 / slots
    names = [str(n) for n in data]
    given = {"entries": entries, "exits": exits}
    if rank is not None:
        given["rank"] = rank
    if short_entries is not None:
        given["short_entries"], given["short_exits"] = short_entries, short_exits
    for what, v in given.items():
        _check_instrument_columns(what, v, data, "with portfolio=True, a DataFrame with a column per instrument")
    if isinstance(size, bool) or not isinstance(size, numbers.Real) or not (0 < size < float("inf")):
        raise ParameterError("size: %r; a portfolio's size is a number above 0 (a fraction of the cash or equity)" % (size,))
    if max_positions is not None and (
        isinstance(max_positions, bool) or not isinstance(max_positions, numbers.Integral) or max_positions < 1
    ):
        raise ParameterError("max_positions: %r; a whole number of positions, at least 1" % (max_positions,))
    if max_exposure is not None and (
        isinstance(max_exposure, bool) or not isinstance(max_exposure, numbers.Real) or not (0 < max_exposure < float("inf"))
    ):
        raise ParameterError("max_exposure: %r; a number above 0 (1: the whole portfolio)" % (max_exposure,))

    def flags(v, name, frame):
        return np.ascontiguousarray(_own_column(v, name, frame).astype("boolean").fillna(False).to_numpy(dtype=bool)).view(np.uint8)

    frames = list(data.values())
    e = [flags(entries, n, f) for n, f in zip(names, frames)]
    x = [flags(exits, n, f) for n, f in zip(names, frames)]
    r = None
    if rank is not None:
        r = [np.ascontiguousarray(_own_column(rank, n, f).to_numpy(dtype=float)) for n, f in zip(names, frames)]
    se = sx = None
    if short_entries is not None:
        se = [flags(short_entries, n, f) for n, f in zip(names, frames)]
        sx = [flags(short_exits, n, f) for n, f in zip(names, frames)]
    with _Data(data) as d:
        times, equity, positions, exposure, records, traded = _native.portfolio_signals(
            d.arg, _config(config, None), [], e, x, r, float(size), str(size_of),
            None if max_positions is None else int(max_positions), se, sx,
            None if max_exposure is None else float(max_exposure),
        )
        tz = next(iter(d.tzs.values()), None)
    index = _time_index(times, tz)
    out = {
        "equity": pd.Series(np.frombuffer(equity, dtype="<f8"), index=index, name="equity"),
        "positions": pd.Series(np.asarray(positions, dtype=np.int64), index=index, name="positions"),
        "exposure": pd.Series(np.frombuffer(exposure, dtype="<f8"), index=index, name="exposure"),
    }
    # backtest_signals' trades table (times in the first instrument's
    # zone), each trade's instrument first.
    table, _ = _trades(records, tz)
    table.insert(0, "instrument", np.asarray(names, dtype=object)[np.asarray(traded, dtype=np.int64)])
    out["trades"] = table
    # Each instrument's profit after fees, open trades at the last close:
    # together, the portfolio's final value less its starting cash.
    out["contribution"] = (
        out["trades"].groupby("instrument")["pnl"].sum().reindex(names, fill_value=0.0).rename("contribution")
    )
    return out


def _portfolio_grid(data, entries, exits, config, size, size_of, max_positions, rank):
    """One portfolio per combination of the signal columns' levels other
    than ``instrument`` (in the order they first appear), each as
    backtest_signals(portfolio=True) runs it alone; the results side by
    side: ``equity``, ``positions`` and ``exposure`` a column per
    portfolio, ``trades`` with the portfolio's levels first,
    ``contribution`` a column per portfolio."""
    columns = entries.columns
    levels = [n for n in columns.names if n != "instrument"]
    if not isinstance(exits, pd.DataFrame) or not exits.columns.equals(columns):
        raise DataError("exits: a grid of portfolios needs exits with the same columns as entries (an instrument level beside %s)" % levels)
    keys = list(dict.fromkeys(columns.droplevel("instrument")))

    def part(frame, key):
        if frame is None or not isinstance(getattr(frame, "columns", None), pd.MultiIndex):
            return frame  # the same ranks for every portfolio
        return frame.xs(key if isinstance(key, tuple) else (key,), axis=1, level=levels, drop_level=True)

    runs = [
        _portfolio_signals(data, part(entries, k), part(exits, k), config, size, size_of, max_positions, part(rank, k))
        for k in keys
    ]
    index = pd.MultiIndex.from_tuples([k if isinstance(k, tuple) else (k,) for k in keys], names=levels)
    if len(levels) == 1:
        index = index.get_level_values(0)
    out = {}
    for what in ("equity", "positions", "exposure", "contribution"):
        out[what] = pd.concat([r[what] for r in runs], axis=1, keys=index)
    tables = []
    for k, r in zip(keys, runs):
        table = r["trades"].copy()
        for level, value in reversed(list(zip(levels, k if isinstance(k, tuple) else (k,)))):
            table.insert(0, level, value)
        tables.append(table)
    out["trades"] = pd.concat(tables, ignore_index=True)
    return out


def backtest_weights(data, weights, config=None):
    """Rebalances the instruments of ``data`` (a dict of DataFrames) from
    one account to target weights: ``weights`` is a DataFrame with a column
    per instrument, the fraction of the portfolio's value each wants after
    a bar's close (NaN: no order then), filled at that instrument's next
    open. At each time the value is taken at the opens (the last close for
    an instrument without a bar), each order is ``w·V / open − held`` units,
    sales run before purchases (by order value, smallest first) and a
    purchase the cash cannot pay is filled as far as it can: vectorbt's
    ``from_orders(size_type="targetpercent", cash_sharing=True)``. Weights
    are ≥ 0 (long only) and ``[backtest]``'s fee, slippage and initial cash
    apply. Returns ``{"equity", "orders"}``."""
    if not isinstance(data, Mapping) or not data:
        raise DataError("data: backtest_weights takes a dict of DataFrames, one per instrument")
    _check_instrument_columns("weights", weights, data, "a DataFrame with a column per instrument")
    names = [str(n) for n in data]
    frames = list(data.values())
    columns = [np.ascontiguousarray(_own_column(weights, n, f).to_numpy(dtype=float)) for n, f in zip(names, frames)]
    with _Data(data) as d:
        times, equity, orders = _native.portfolio_weights(d.arg, _config(config, None), [], columns)
        tz = next(iter(d.tzs.values()), None)
    rows = [
        {"instrument": names[i], "time": frames[i].index[bar], "units": units, "price": price, "fee": fee}
        for i, bar, units, price, fee in orders
    ]
    return {
        "equity": pd.Series(np.frombuffer(equity, dtype="<f8"), index=_time_index(times, tz), name="equity"),
        "orders": pd.DataFrame(rows, columns=["instrument", "time", "units", "price", "fee"]),
    }


def _check_instrument_columns(what, v, data, expected):
    """``v`` is a DataFrame with one column per instrument of ``data`` and a
    time index holding every bar of each (a DatetimeIndex, as the frames'
    must be)."""
    if not isinstance(v, pd.DataFrame):
        raise DataError("%s: %s" % (what, expected))
    labels = [str(c) for c in v.columns]
    twice = sorted({c for c in labels if labels.count(c) > 1})
    if twice:
        raise DataError("%s: column %s appears twice" % (what, ", ".join(repr(c) for c in twice)))
    missing = [str(n) for n in data if str(n) not in labels]
    if missing:
        raise DataError("%s: no column for instrument %s" % (what, ", ".join(repr(m) for m in missing)))
    if not isinstance(v.index, pd.DatetimeIndex):
        raise DataError("%s: its index is %s; a portfolio's DataFrames are indexed by time (a DatetimeIndex)" % (what, type(v.index).__name__))
    have = _utc(v.index)
    for name, frame in data.items():
        if not isinstance(frame.index, pd.DatetimeIndex):
            raise DataError(
                "data[%r]: a portfolio's DataFrames are indexed by time (a DatetimeIndex), not by %s" % (str(name), type(frame.index).__name__)
            )
        lacking = _utc(frame.index).difference(have)
        if len(lacking):
            raise DataError(
                "%s: its index lacks %d of the bars of instrument %r (the first at %s); give a row for every time of every instrument"
                % (what, len(lacking), str(name), lacking[0])
            )


def _own_column(v, name, frame):
    """Instrument ``name``'s column of ``v`` on its own bars: a value at a
    time the instrument has no bar is not one of its decisions."""
    column = v[[c for c in v.columns if str(c) == name][0]]
    # Both time-indexed (_check_instrument_columns): compared as instants.
    return pd.Series(column.to_numpy(), index=_utc(column.index)).reindex(_utc(frame.index))


def _signal_labels(signals):
    """The column labels of the DataFrames among `signals`, which must all
    have the same ones (in any order); None when none is a DataFrame."""
    frames = [(k, v) for k, v in signals.items() if isinstance(v, pd.DataFrame)]
    if not frames:
        return None
    first_name, first = frames[0]
    if first.columns.has_duplicates:
        raise DataError("%s: its column names repeat; each column is one backtest" % first_name)
    for name, frame in frames[1:]:
        if set(frame.columns) != set(first.columns) or len(frame.columns) != len(first.columns):
            raise DataError(
                "%s and %s: their columns differ; DataFrames of signals pair up by column name" % (first_name, name)
            )
    return list(first.columns)


def _utc(index):
    """A DatetimeIndex as UTC instants (naive times are UTC, as the data's)."""
    return index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")


def _same_index(a, b):
    """Whether two indexes name the same bars: equal, or the same instants
    in order whatever their time zones (naive = UTC)."""
    if a.equals(b):
        return True
    times = (pd.DatetimeIndex,)
    return isinstance(a, times) and isinstance(b, times) and len(a) == len(b) and _utc(a).equals(_utc(b))


def _index_difference(given, data):
    """What differs between a signal's index and the data's, for a message."""
    zone = lambda i: str(i.tz) if i.tz is not None else "naive (UTC)"  # noqa: E731
    if isinstance(given, pd.DatetimeIndex) and isinstance(data, pd.DatetimeIndex) and str(given.tz) != str(data.tz):
        return "its times are in %s, the data's in %s, and the instants differ; align it with the DataFrame" % (
            zone(given),
            zone(data),
        )
    return "align it with the DataFrame: same times, same order"


def _signal_width(v):
    """Columns in a set of signals: a DataFrame's or 2-D array's, else 1."""
    shape = getattr(v, "shape", None)
    return shape[1] if shape is not None and len(shape) == 2 else 1


def _signal_array(what, v, index, width):
    """(a width × bars 0/1 uint8 array, flat, column by column, and the bars)
    of one argument;
    a 1-D one is repeated across the columns."""
    if v is None:
        raise TypeError("%s: expected booleans (a Series, DataFrame or array), got None" % what)
    try:
        if isinstance(v, (pd.Series, pd.DataFrame)):
            if index is not None and not _same_index(v.index, index):
                raise DataError("%s: its index is not the data's (%s)" % (what, _index_difference(v.index, index)))
            plain = v.to_numpy()
            # Plain booleans (the usual case) go straight through; anything
            # else (nullable, numbers, objects) goes through pandas' rules.
            v = plain if plain.dtype == bool else v.astype("boolean").fillna(False).to_numpy(dtype=bool)
        else:
            v = np.asarray(v)
            if v.dtype.kind in "USV":
                raise DataError("%s: holds %s values; expected booleans (or 0/1)" % (what, v.dtype))
            if v.dtype == object or v.dtype.kind == "f":
                shape = v.shape
                flat = pd.Series(v.reshape(-1)).astype("boolean").fillna(False).to_numpy(dtype=bool)
                v = flat.reshape(shape)
            v = v.astype(bool)
    except (TypeError, ValueError) as e:
        if isinstance(e, SieveError):
            raise
        raise DataError("%s: expected booleans (True/False, 0/1, missing = False): %s" % (what, e)) from None
    if v.ndim == 1:
        v = np.repeat(v[:, None], width, axis=1)
    if v.ndim != 2 or v.shape[1] != width:
        raise DataError("%s: shape %s; expected bars × %d columns" % (what, v.shape, width))
    # Column by column (the transpose, C-ordered): each backtest's series is
    # one contiguous run for the native side, which copies it once.
    return (np.ascontiguousarray(v.T).view(np.uint8).reshape(-1), v.shape[0])


def _signal_values(what, v, index, labels, named, bars):
    """One trade-management keyword (see backtest_signals for its forms) as
    the native side reads it: ("column", one float64 per column), ("bar",
    one per bar) or ("full", a columns × bars array, column by column), in
    bytes; `named`: the signals are DataFrames, whose labels a DataFrame of
    values pairs with."""
    width = len(labels)
    if isinstance(v, bool) or isinstance(v, (str, bytes)):
        raise TypeError("%s: expected numbers, got %s" % (what, type(v).__name__))
    try:
        if isinstance(v, numbers.Real) or (np.ndim(v) == 0 and not isinstance(v, Mapping)):
            # A number of any type (int, float, Decimal, a NumPy scalar).
            return "column", np.full(width, float(v), dtype="<f8").tobytes()
        elif isinstance(v, pd.DataFrame):
            if index is not None and not _same_index(v.index, index):
                raise DataError("%s: its index is not the data's (%s)" % (what, _index_difference(v.index, index)))
            if named:
                missing = [c for c in labels if c not in v.columns]
                if missing:
                    raise DataError("%s: no column %r; its columns pair with the signals' by label" % (what, missing[0]))
                v = v[labels]
            out = v.to_numpy(dtype=float)
        elif isinstance(v, pd.Series) and index is not None and len(v) == bars and _same_index(v.index, index):
            return "bar", np.ascontiguousarray(v.to_numpy(dtype=float), dtype="<f8").tobytes()
        elif isinstance(v, pd.Series) and not set(labels) <= set(v.index):
            raise DataError(
                "%s: a Series is one value per bar (on the data's index) or one per signal column (indexed by "
                "the columns' labels); this one is neither" % what
            )
        elif isinstance(v, (pd.Series, Mapping)):
            by_label = v if isinstance(v, Mapping) else v.to_dict()
            unknown = [k for k in by_label if k not in labels]
            if unknown:
                raise DataError(
                    "%s: %r is not a signal column (a Series or dict gives one value per signal column, by label; "
                    "the columns are %s)" % (what, unknown[0], ", ".join(map(repr, labels[:10])))
                )
            missing = [c for c in labels if c not in by_label]
            if missing:
                raise DataError(
                    "%s: no value for column %r (a Series or dict gives one value per signal column, by label; "
                    "a Series with the data's index gives one per bar)" % (what, missing[0])
                )
            return "column", np.array([float(by_label[c]) for c in labels], dtype="<f8").tobytes()
        else:
            a = np.asarray(v, dtype=float)
            if a.ndim == 1 and len(a) == width and len(a) == bars and width > 1:
                raise DataError(
                    "%s: %d values, as many as both the bars and the columns; give a 2-D array (bars × columns)"
                    % (what, len(a))
                )
            if a.ndim == 1 and len(a) == width:
                return "column", np.ascontiguousarray(a, dtype="<f8").tobytes()
            elif a.ndim == 1 and len(a) == bars:
                return "bar", np.ascontiguousarray(a, dtype="<f8").tobytes()
            elif a.ndim == 2:
                out = a
            else:
                raise DataError(
                    "%s: shape %s; expected a number, %d values (one per column), %d (one per bar) or %d × %d"
                    % (what, a.shape, width, bars, bars, width)
                )
    except (TypeError, ValueError) as e:
        if isinstance(e, SieveError):
            raise
        raise DataError("%s: expected numbers: %s" % (what, e)) from None
    if out.shape != (bars, width):
        raise DataError("%s: shape %s; expected bars × columns = %d × %d" % (what, out.shape, bars, width))
    return "full", np.ascontiguousarray(out.T, dtype="<f8").tobytes()


def _signal_names(values, width):
    """The columns' names where no DataFrame gives them: a Series' name,
    else 0, 1, …"""
    for v in values:
        if isinstance(v, pd.Series) and v.name is not None and width == 1:
            return [str(v.name)]
    return [str(i) for i in range(width)]


def sweep(data, config, top=None, threads=0, progress=False, indicators=None, informative=None):
    """Screens the config's whole grid and returns the best ``top`` rows
    (default ``sweep.top``): the columns and values of ``sweep.csv``.
    ``progress=True`` shows a tqdm bar when tqdm is installed (its notebook
    bar in Jupyter), else a bar on stderr (a line every 5 s when stderr is
    not a terminal).

    ``indicators={"st": (fn, ["n", "mult"])}`` lets the rules call your own
    functions: ``st(n, mult)`` with parameters or numbers (an argument given
    as ``("n", int)`` is passed as an ``int`` and must be whole). ``fn(df,
    n=…, mult=…)`` gets the bars as a DataFrame indexed by time (open, high,
    low, close, volume when there is one, and the data's columns the rules
    read) and returns a Series or array of one float per bar (NaN where
    undefined). It is called once per distinct setting (and instrument),
    with the GIL, its result kept for the call and read as a built-in
    windowed function's column is. An exception in it raises a
    ``SieveError`` naming the function and the setting. The same keyword
    works in ``verify``, ``optimize``, ``backtest`` and ``indicator``.

    ``informative={"btc": btc_df}`` names other instruments' bars (DataFrames
    or paths) that rules read with ``informative("btc", …)``: each bar sees
    the value of the last of their bars that has ended by its close. They
    replace the config's ``data.informative``; the same keyword works in
    every call that takes data.
    """
    overrides = [] if top is None else ["sweep.top=%d" % _count(top, "top")]
    with _Data(data, informative) as d:
        text = _native.sweep(d.arg, _config(config, indicators), overrides, _threads(threads), _progress(progress))
    return _csv(text)


def verify(data, config, candidates, top=None, threads=0, indicators=None, informative=None):
    """Re-runs candidates through the exact engine on the score window and
    returns the columns and values of ``verified.csv``, best first.

    ``candidates``: a DataFrame with the strategy's parameter columns (a
    sweep's result, say; ``rank`` and ``grid_index`` are used when present),
    or a path to such a CSV file. ``top`` (default ``verify.top``) keeps the
    first rows.
    """
    if isinstance(candidates, pd.DataFrame):
        text = candidates.to_csv(index=False)
    elif isinstance(candidates, (str, os.PathLike)):
        try:
            with open(candidates, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise FileError("%s: %s" % (os.fspath(candidates), e.strerror or e)) from None
    else:
        raise TypeError("candidates: expected a DataFrame or a path, got %s" % type(candidates).__name__)
    overrides = [] if top is None else ["verify.top=%d" % _count(top, "top")]
    with _Data(data, informative) as d:
        out = _native.verify(d.arg, _config(config, indicators), overrides, text, _threads(threads))
    return _csv(out)


def optimize(data, config, out, threads=0, progress=False, restart=False, indicators=None, search=None, executor=None, informative=None):
    """Runs (or resumes) the optimize loop in the run folder ``out`` — the
    same files as ``sieve optimize --out``, report.html included — and
    returns ``best.json``'s content, with the robustness ``verdict`` sentence
    the CLI prints (also printed with ``progress``). Ctrl-C stops at a checkpoint; calling
    again with the same arguments resumes. A folder holding a run of another
    config or data is refused unless ``restart=True``. A DataFrame's bars are
    kept in the folder as ``data.parquet`` (a dict of them as
    ``data/<name>.parquet``, read back as ``data.paths``). With ``config=None`` it runs the
    built-in example, as ``sieve optimize`` does without ``--config`` (on your
    data: score window from 40 %, holdout from 80 % of the bars).
    ``progress`` and ``indicators`` as for :func:`sweep`; a resumed run
    assumes the same indicator functions (their code is not part of the
    run's identity). ``search`` sets ``[search]`` keys over the config's,
    e.g. ``search={"method": "random", "evaluations": 10**6, "seed": 3}``.

    ``executor``: any :class:`concurrent.futures.Executor` (a
    ``ProcessPoolExecutor``, Dask's ``Client.get_executor()``, …) to screen
    each iteration on, in ``executor.shards`` shards of the config (default
    4) merged exactly: the result is the one of a run without it, byte for
    byte. Each shard is a call of ``sieve._shard_job`` with the path of a
    job file in ``out/cluster/`` — so ``out`` (and the data, kept there for
    a DataFrame) must be readable where the executor runs it — and the
    ``indicators`` dict, which must then pickle: functions defined at a
    module's top level, not lambdas or closures."""
    _no_informative_with_executor(executor, informative)
    with _Data(data, informative) as d:
        text, verdict = _native.optimize(
            d.arg, _config(config, indicators), _search_overrides(search), os.fspath(out), _threads(threads),
            _progress(progress), bool(restart), _shards(executor, indicators)
        )
    best = _numbers(json.loads(text))
    if verdict is not None:
        # As `sieve optimize` prints it, and as backtest_signals(robust=True) has it.
        best["verdict"] = verdict
        if progress:
            print("verdict: %s" % verdict, file=sys.stderr)
    return best


def walkforward(data, config, out, threads=0, progress=False, restart=False, indicators=None, executor=None, informative=None):
    """Runs (or resumes) a walk-forward in the folder ``out`` — the same
    files as ``sieve walkforward --out``: a run folder per fold,
    ``walkforward.csv``, ``walkforward.json`` and ``report.html`` — and
    returns ``walkforward.json``'s content (the folds and the stitched
    out-of-sample result). The config needs a ``[walkforward]`` section
    (``train`` and ``test`` lengths). Ctrl-C stops at a checkpoint; calling
    again resumes. ``progress``, ``restart``, ``indicators`` and
    ``executor`` as for :func:`optimize`."""
    _no_informative_with_executor(executor, informative)
    with _Data(data, informative) as d:
        text = _native.walkforward(
            d.arg,
            _config(config, indicators),
            [],
            os.fspath(out),
            _threads(threads),
            _progress(progress),
            bool(restart),
            _shards(executor, indicators),
        )
    return _numbers(json.loads(text))


def _shard_job(job, shard, indicators=None):
    """One shard of a screen sent to an executor (``optimize(...,
    executor=)``): screens it on every core there and writes its part beside
    ``job``; returns the part's path."""
    return _native.shard_job(job, shard, 0, _indicators(indicators))


class _Shards:
    """The optimize loop's view of a ``concurrent.futures.Executor``: the
    native side calls ``submit``, ``active``, ``failure``, ``knows`` and
    ``abandon``."""

    def __init__(self, executor, indicators):
        self._executor = executor
        self._indicators = indicators
        self._futures = {}
        # Ids of this call's submissions, unlike any an earlier call wrote.
        self._tag = "%x%x" % (os.getpid(), id(self) & 0xFFFFFF)
        self.kind = "python:%s" % type(executor).__name__

    def submit(self, job, shards):
        ids = []
        for k in shards:
            id = "%d.%s.%d" % (k, self._tag, len(self._futures))
            self._futures[id] = self._executor.submit(_shard_job, job, k, self._indicators)
            ids.append(id)
        return ids

    def active(self, ids):
        """(id, running) of the calls not done."""
        return [(i, bool(self._futures[i].running())) for i in ids if i in self._futures and not self._futures[i].done()]

    def knows(self, id):
        return id in self._futures

    def failure(self, id):
        future = self._futures.get(id)
        if future is None:
            return "submitted by an earlier call, which has ended"
        error = future.exception(timeout=0) if future.done() and not future.cancelled() else None
        if error is None:
            return "the call ended without writing its part"
        return "%s: %s" % (type(error).__name__, error)

    def abandon(self):
        """The run stopped: calls not started yet are cancelled."""
        for future in self._futures.values():
            future.cancel()


def _no_informative_with_executor(executor, informative):
    """Shards rebuild the study from the run's config and files:
    ``informative=`` does not reach them."""
    if executor is not None and informative is not None:
        raise TypeError(
            "informative: an executor's shards read the informative instruments the config names; "
            "name their files in the config's data.informative instead"
        )


def _shards(executor, indicators):
    """``executor=`` for the native side: None, or a :class:`_Shards`."""
    if executor is None:
        return None
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(
            "executor: expected a concurrent.futures.Executor (ProcessPoolExecutor, Dask's Client.get_executor(), ...), got %s"
            % type(executor).__name__
        )
    # A thread pool shares this process: nothing is pickled.
    if indicators is not None and not isinstance(executor, concurrent.futures.ThreadPoolExecutor):
        import pickle

        try:
            pickle.dumps(indicators)
        except Exception as e:
            raise TypeError(
                "indicators: with executor=, each shard runs elsewhere and gets the indicators pickled; "
                "define the functions at a module's top level (not lambdas or closures): %s" % e
            ) from None
    return _Shards(executor, indicators)


class Report(str):
    """The path of a run folder's ``report.html`` (a plain ``str``); in
    Jupyter the report itself shows inline (``_repr_html_``)."""

    def _repr_html_(self):
        with open(self, encoding="utf-8") as f:
            page = f.read()
        # The report is one self-contained page: embedded whole, so it
        # shows wherever the notebook is opened.
        return '<iframe srcdoc="%s" style="width:100%%;height:760px;border:0"></iframe>' % html.escape(
            page, quote=True
        )


def report(out):
    """The report of the run folder ``out`` (what ``sieve.optimize`` and
    ``sieve optimize --out`` write): its path, as a :class:`Report` that a
    notebook displays inline."""
    path = os.path.abspath(os.path.join(os.fspath(out), "report.html"))
    if not os.path.isfile(path):
        raise FileError(
            "%s: no report.html here; sieve.optimize(data, config, out=%r) writes one once its first iteration is done"
            % (os.fspath(out), os.fspath(out))
        )
    return Report(path)


# Keys whose values are words, never numbers.
_WORDS = {"strategy", "objective", "stop_reason", "aggregate", "start", "end"}


def _numbers(doc, metrics=False):
    """Metrics as sieve's JSON writes them back to floats: ``"inf"`` and
    ``"-inf"`` are infinities, and in a window's metrics ``None`` (null) is
    NaN, so that +inf (say, a profit factor with no losing trade) and an
    undefined value stay distinct."""
    if isinstance(doc, dict):
        # A window's metrics: every value but its span is a number.
        if "objective" in doc and "trades" in doc:
            return {k: (v if k in ("start", "end") else _numbers(v, True)) for k, v in doc.items()}
        return {k: (v if k in _WORDS else _numbers(v, k == "score")) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_numbers(v) for v in doc]
    if doc in ("inf", "-inf", "nan"):
        return float(doc)
    if doc is None and metrics:
        return float("nan")
    return doc


def strategies():
    """The built-in strategies: name, summary, default constraints and
    parameters (name, kind, default, default grid, about)."""
    return json.loads(_native.strategies())


# --- conversions -----------------------------------------------------------


# The CLI writes floats in shortest round-trip form; pandas < 3 reads them
# exactly only with the round-trip parser (pandas 3 always does).
_EXACT = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def _csv(text):
    return pd.read_csv(io.StringIO(text), **_EXACT)


def _warn(message):
    import warnings

    warnings.warn(message, SieveWarning, stacklevel=3)


def _equity(times, values, tz):
    """The equity curve indexed like the input (see ``_time_index``)."""
    return pd.Series(values, index=_time_index(times, tz), name="equity")


def _toml_string(s):
    if not isinstance(s, str):
        raise TypeError("expected a string, got %s" % type(s).__name__)
    return json.dumps(s)  # a JSON string is a TOML basic string


def _number(v, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError("parameter '%s': expected a number, got %r" % (name, v))
    v = float(v)
    return repr(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def _count(v, name):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError("%s: expected a whole number, got %r" % (name, v))
    if v < 0:
        raise ValueError("%s: expected a whole number >= 0, got %r" % (name, v))
    return min(int(v), 2**32)  # larger is refused by the native side with its limit


def _threads(v):
    """`threads`: a count of at most the native pool's limit (0 = one per core)."""
    n = _count(v, "threads")
    if v > _native.MAX_THREADS:
        raise ValueError("threads=%d: at most %d (0 = one per core)" % (v, _native.MAX_THREADS))
    return n


def _plain(value, key):
    """A config value as JSON-ready Python (numpy scalars, any Mapping),
    or a ConfigError naming the key."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v, "%s.%s" % (key, k) if key else str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, key) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        raise ConfigError("config: %s: None is not a value (leave the key out for its default)" % key)
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError("config: %s: %r is not a finite number" % (key, value))
    return value


def _search_overrides(search):
    """``search={...}`` as ``search.KEY=VALUE`` overrides."""
    if search is None:
        return []
    if not isinstance(search, Mapping):
        raise TypeError(
            "search: expected a dict such as {'method': 'random', 'evaluations': 1000000}, got %s"
            % type(search).__name__)
    out = []
    for key, value in search.items():
        if isinstance(value, str):
            text = _toml_string(value)
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
            text = str(int(value))
        else:
            raise TypeError("search[%r]: expected a string or a whole number, got %r" % (key, value))
        out.append("search.%s=%s" % (key, text))
    return out


def _config(config, indicators=None):
    """(kind, value, indicators) for the native side."""
    functions = _indicators(indicators)
    if config is None:
        return ("none", "", functions)
    if isinstance(config, Mapping):
        # Plain Python values, handed to the native side as they are.
        return ("dict", _plain(config, ""), functions)
    if isinstance(config, os.PathLike):
        return ("path", os.fspath(config), functions)
    if isinstance(config, str):
        # One line without "=" is a file name (a TOML text sets keys).
        if "\n" not in config and (config.endswith(".toml") or os.path.isfile(config) or "=" not in config):
            return ("path", config, functions)
        return ("toml", config, functions)
    raise TypeError("config: expected a dict, TOML text or a path, got %s" % type(config).__name__)


class _TqdmProgress:
    """``progress=True`` with tqdm installed: a tqdm bar per step (through
    ``tqdm.auto``: the notebook widget in Jupyter), notes through
    ``tqdm.write``. The native side calls these from its worker."""

    def __init__(self, tqdm):
        self._tqdm = tqdm
        self._bar = None

    def start(self, label, unit, total):
        self.finish()
        self._bar = self._tqdm(total=total, desc=label, unit=unit, unit_scale=True, dynamic_ncols=True)

    def update(self, done):
        if self._bar is not None and done > self._bar.n:
            self._bar.update(done - self._bar.n)

    def finish(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def note(self, text):
        self._tqdm.write(text, file=sys.stderr)


def _progress(progress):
    """``progress=`` for the native side: False, True (the CLI's bar on
    stderr, when tqdm is not installed) or a tqdm reporter."""
    if not progress:
        return False
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return True
    return _TqdmProgress(tqdm)


def _indicators(indicators):
    """``indicators=`` for the native side: None, or ([(name, argument
    names, whole-number flags, function)], frame helper, values helper)."""
    if indicators is None:
        return None
    if not isinstance(indicators, Mapping):
        raise TypeError(
            "indicators: expected a dict {name: (function, [argument names])}, got %s" % type(indicators).__name__
        )
    out = []
    for name, spec in indicators.items():
        where = "indicators[%r]" % (name,)
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError("%s: a name rules can call: letters, digits and _, not starting with a digit" % where)
        if not isinstance(spec, (tuple, list)) or len(spec) != 2 or not callable(spec[0]):
            raise TypeError("%s: expected (function, [argument names]), e.g. (supertrend, ['n', 'mult'])" % where)
        fn, args = spec
        if isinstance(args, str) or not isinstance(args, (tuple, list)):
            raise TypeError("%s: the argument names are a list, e.g. ['n', 'mult']" % where)
        names, whole = [], []
        for a in args:
            kind = float
            if isinstance(a, (tuple, list)) and len(a) == 2:
                a, kind = a
            if not isinstance(a, str) or not a.isidentifier() or kind not in (int, float):
                raise TypeError(
                    "%s: each argument is a name ('n') or a name and its type (('n', int) for a whole number), got %r"
                    % (where, a)
                )
            names.append(a)
            whole.append(kind is int)
        if len(set(names)) != len(names):
            raise ConfigError("%s: an argument name repeats" % where)
        out.append((name, names, whole, _Watched(name, fn)))
    return (out, _indicator_frame, _indicator_values)


# Where a Python indicator's first call in a job is recomputed on the data
# cut short: a value before the cut that changes reads bars after it.
_LOOKAHEAD_CUTS = (0.5, 0.75, 0.9)


class _Watched:
    """An indicator of yours, checked on its first call in each job:
    recomputed on the same bars cut at 50 %, 75 % and 90 % (as freqtrade's
    lookahead-analysis does), any value before a cut that differs from the
    whole run's is look-ahead; and called twice on the first cut, values
    that differ mean it is not a function of the bars (random or stateful),
    so runs using it cannot be reproduced or resumed. Each finding is a
    SieveWarning naming the setting and the bar; the check's own calls see
    shorter frames than the run's."""

    def __init__(self, name, fn):
        self.name, self.fn, self.checked = name, fn, False
        # The job's stop (Ctrl-C), set by the native side: asked between
        # the check's own calls.
        self.stopping = lambda: False

    def __call__(self, df, **kwargs):
        result = self.fn(df, **kwargs)
        if not self.checked:
            self.checked = True
            self._check(df, kwargs, result)
        return result

    def _check(self, df, kwargs, result):
        what = "%s(%s)" % (self.name, ", ".join("%s=%s" % kv for kv in kwargs.items()))
        n = len(df)
        if n < 20:
            return
        try:
            whole = _indicator_values(result, df.index, what)
            cuts = sorted({int(n * c) for c in _LOOKAHEAD_CUTS})
            for i, k in enumerate(cuts):
                if self.stopping():
                    return
                part = _indicator_values(self.fn(df.iloc[:k].copy(), **kwargs), df.index[:k], what)
                if i == 0 and not self.stopping():
                    again = _indicator_values(self.fn(df.iloc[:k].copy(), **kwargs), df.index[:k], what)
                    t = _first_difference(part, again)
                    if t is not None:
                        _warn(
                            "indicator %s returned different values for the same bars on two calls (first at %s): "
                            "it is not a function of the bars alone (random, or keeping state between calls), so "
                            "runs that use it can neither be reproduced nor resumed" % (what, _bar(df, t))
                        )
                        return
                t = _first_difference(whole[:k], part)
                if t is not None:
                    _warn(
                        "indicator %s looks ahead: its value at %s is %s on all %d bars but %s on the first %d "
                        "(up to %s); a value that changes when later bars are added reads the future, and "
                        "results from it are not real" % (what, _bar(df, t), whole[t], n, part[t], k, df.index[k - 1])
                    )
                    return
        except KeyboardInterrupt:
            raise
        except Exception:  # noqa: BLE001 - a function that fails on fewer bars is not judged
            return


def _first_difference(a, b):
    """The first position where two value arrays differ beyond rounding
    (NaN equal to NaN), or None."""
    same = np.isclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True)
    return None if same.all() else int(np.argmin(same))


def _bar(df, t):
    return "bar %d (%s)" % (t, df.index[t])


def _indicator_frame(times, open_, high, low, close, volume, extras, tz):
    """The bars an indicator of yours is given: a DataFrame indexed by time
    (naive UTC, or in data.timezone when the config sets one) with open,
    high, low, close, volume when the data has it, and the data's other
    columns the rules read."""
    index = pd.to_datetime(np.asarray(times, dtype=np.int64), unit="ms", utc=True)
    index = index.tz_convert(tz) if tz is not None else index.tz_localize(None)
    columns = {"open": open_, "high": high, "low": low, "close": close}
    if volume is not None:
        columns["volume"] = volume
    for name, values in extras:
        columns[name] = values
    frame = pd.DataFrame({k: np.asarray(v, dtype=np.float64) for k, v in columns.items()}, index=index)
    frame.index.name = "time"
    return frame


def _indicator_values(result, index, what):
    """What an indicator of yours returned, as float64 values, one per bar
    of `index` (the bars' index, as the function's frame has it)."""
    bars = len(index)
    if isinstance(result, pd.DataFrame):
        raise DataError("indicator %s returned a DataFrame; return one Series or array (one value per bar)" % what)
    # A Series is read by position only where its index says so: the bars'
    # own index, or exactly 0..n-1 in order (reversed, shifted or strided
    # row numbers would pair values with the wrong bars: look-ahead).
    if (
        isinstance(result, pd.Series)
        and not result.index.equals(index)
        and not result.index.equals(pd.RangeIndex(len(result)))
    ):
        raise DataError(
            "indicator %s returned a Series whose index is neither the bars' nor 0..n-1 in order (keep df's "
            "index, or return an array)" % what
        )
    if np.iscomplexobj(result):
        raise DataError("indicator %s returned complex numbers; return real ones (floats)" % what)
    try:
        values = result.to_numpy(dtype=np.float64, na_value=np.nan) if isinstance(result, pd.Series) else result
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise DataError(
            "indicator %s returned %s, not numbers (%s); return a Series or array of floats"
            % (what, type(result).__name__, e)
        ) from None
    if values.ndim != 1 or len(values) != bars:
        shape = "x".join(map(str, values.shape))
        returned = "%s values" % shape if shape else "a single value"
        raise DataError(
            "indicator %s returned %s; the data has %d bars (return one value per bar, NaN where undefined)"
            % (what, returned, bars)
        )
    return np.ascontiguousarray(values)


# The smallest integer read as a unix time from an unnamed index: 1e8
# seconds is 1973-03-03. Row numbers (0, 1, 2, … with rows dropped) are
# smaller, and are not times.
_UNIX_TIME_FLOOR = 10**8


def _unix_times(index):
    """Whether an integer index holds unix times rather than row numbers."""
    if isinstance(index, pd.RangeIndex) or index.dtype.kind not in "iu" or len(index) == 0:
        return False
    return int(index.min()) >= _UNIX_TIME_FLOOR


def _describe_index(index):
    if isinstance(index, pd.RangeIndex):
        return "a RangeIndex (0, 1, 2, …)"
    if index.dtype.kind in "iu" and len(index):
        return "an %s of %s from %d, too small for unix times (row numbers?)" % (
            type(index).__name__, index.dtype, int(index.min()))
    return "an %s of %s" % (type(index).__name__, index.dtype)


class _Data:
    """The ``data`` argument for the native side: a path as is, or a
    DataFrame's columns. The numpy arrays handed over by address stay
    referenced here until the call returns."""

    def __init__(self, data, informative=None):
        self._keep = []
        self.tz = None  # the input's time zone (None: naive or a file)
        self.tzs = {}  # with a dict of frames: each instrument's own
        self._read(data)
        if informative is not None:
            self.arg = (self.arg, self._informative(informative))

    def _informative(self, informative):
        """``informative=``: name -> the columns of a DataFrame, or a path."""
        if not isinstance(informative, Mapping):
            raise TypeError("informative: expected a dict of DataFrames (or paths) by name, got %s" % type(informative).__name__)
        tz, out = self.tz, {}
        for name, frame in informative.items():
            if isinstance(frame, pd.DataFrame):
                out[str(name)] = self._columns(frame)
            elif isinstance(frame, (str, os.PathLike)):
                out[str(name)] = os.fspath(frame)
            else:
                raise TypeError("informative[%r]: expected a pandas DataFrame or a path, got %s" % (name, type(frame).__name__))
        self.tz = tz  # the traded bars' zone, not an informative one's
        return out

    def _read(self, data):
        if data is None:
            self.arg = None  # the config's data.path / data.paths
        elif isinstance(data, (str, os.PathLike)):
            self.arg = os.fspath(data)
        elif isinstance(data, (list, tuple)) and data and all(isinstance(p, (str, os.PathLike)) for p in data):
            # Several instruments' files, as data.paths lists them.
            self.arg = [os.fspath(p) for p in data]
        elif isinstance(data, pd.DataFrame):
            self.arg = self._columns(data)
        elif isinstance(data, Mapping):
            # Several instruments, by name, as data.paths gives them.
            self.arg = {}
            for name, frame in data.items():
                if not isinstance(frame, pd.DataFrame):
                    raise TypeError("data[%r]: expected a pandas DataFrame, got %s" % (name, type(frame).__name__))
                if str(name) in self.arg:
                    raise DataError("data: two instruments are named %r" % str(name))
                self.tz = None
                self.arg[str(name)] = self._columns(frame)
                self.tzs[str(name)] = self.tz
        else:
            raise TypeError(
                "data: expected a pandas DataFrame, a dict of them by instrument name, a path, or a list of paths, got %s"
                % type(data).__name__
            )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._keep.clear()
        return False

    def _columns(self, df):
        columns = []
        names = [str(c) for c in df.columns]
        has_time = any(n.strip().lower() in _TIME_NAMES for n in names)
        index = df.index
        if isinstance(index, pd.DatetimeIndex) and not has_time:
            # A DatetimeIndex is the time, whatever its name.
            self.tz = index.tz
            columns.append(self._column("time", index))
        elif index.name is not None and str(index.name).strip().lower() in _TIME_NAMES and not has_time:
            columns.append(self._column(str(index.name), index))
        elif not has_time and _unix_times(index):
            # Integer unix times (s, ms, µs or ns, told by magnitude, as
            # the CLI reads them), whatever the index's name.
            columns.append(self._column("time", index))
        elif not has_time:
            raise DataError(
                "data: the DataFrame has no time: no column named %s (it has %s), and its index is %s; "
                "give it a DatetimeIndex, an integer index of unix times (s, ms, µs or ns, from 1973 on), or a time column"
                % ("/".join(_TIME_NAMES), ", ".join(names) or "no columns", _describe_index(index))
            )
        for name, (_, series) in zip(names, df.items()):
            columns.append(self._column(name, series))
        return columns

    def _column(self, name, values):
        dtype = values.dtype
        if isinstance(dtype, pd.CategoricalDtype):
            values = pd.Series(np.asarray(values, dtype=object))
            dtype = values.dtype
        if dtype == object:
            kind = pd.api.types.infer_dtype(values, skipna=True)
            if kind in ("floating", "integer", "mixed-integer-float", "decimal"):
                values = pd.to_numeric(pd.Series(values), errors="coerce")
                dtype = values.dtype
            elif kind in ("datetime", "datetime64"):
                values = pd.to_datetime(pd.Series(values), utc=True)
                dtype = values.dtype
        if isinstance(dtype, pd.DatetimeTZDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "M"):
            times = pd.DatetimeIndex(values)
            if times.tz is not None:
                if name.strip().lower() in _TIME_NAMES and self.tz is None:
                    self.tz = times.tz
                times = times.tz_convert("UTC").tz_localize(None)
            if getattr(times, "unit", "ns") != "ns":
                times = times.as_unit("ns")
            ns = np.ascontiguousarray(times.asi8)
            nulls = np.flatnonzero(times.isna()).tolist() if times.hasnans else []
            return self._buffer(name, "time_ns", ns) + (nulls,)
        if isinstance(dtype, np.dtype) and dtype == np.float64:
            return self._buffer(name, "f64", np.ascontiguousarray(np.asarray(values)))
        if isinstance(dtype, np.dtype) and dtype.kind in "ib":
            return self._buffer(name, "i64", np.ascontiguousarray(np.asarray(values), dtype=np.int64))
        if isinstance(dtype, np.dtype) and dtype.kind == "u":
            # uint64 may not fit int64: as floats (exact up to 2**53).
            return self._buffer(name, "f64", np.ascontiguousarray(np.asarray(values), dtype=np.float64))
        if isinstance(dtype, np.dtype) and dtype.kind == "c":
            # Complex numbers with an imaginary part are no prices (casting
            # dropped it in silence); a zero one is a real number.
            imaginary = np.flatnonzero(np.asarray(values).imag != 0)
            if len(imaginary):
                row = int(imaginary[0])
                raise DataError(
                    "data: column '%s' holds complex numbers (row %d: %s); prices and volumes are real numbers"
                    % (name, row, np.asarray(values)[row])
                )
            return self._buffer(name, "f64", np.ascontiguousarray(np.asarray(values).real, dtype=np.float64))
        if pd.api.types.is_numeric_dtype(dtype):
            # float32, nullable Int64/Float64 (missing → NaN, refused by row).
            floats = pd.Series(values).to_numpy(dtype=np.float64, na_value=np.nan)
            return self._buffer(name, "f64", np.ascontiguousarray(floats))
        text = [None if pd.isna(v) else str(v) for v in values]
        return (name, "str", text)

    def _buffer(self, name, kind, array):
        # The native side reads the array's memory (checked there to be a
        # C-contiguous numpy array of this type).
        self._keep.append(array)
        return (name, kind, array)
