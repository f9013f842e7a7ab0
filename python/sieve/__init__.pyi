"""Type stubs of the sieve package (see the docstrings in __init__.py)."""

import concurrent.futures
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

__version__: str

Data = Union[pd.DataFrame, Mapping[str, pd.DataFrame], str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]], None]
KeyValues = Union[float, Mapping[Any, float], pd.Series, pd.DataFrame, np.ndarray, Sequence[float]]
# indicators={"st": (fn, ["n", ("len", int)])}: fn(df, n=…, len=…) -> Series/array
Indicators = Mapping[str, Tuple[Callable[..., Any], Sequence[Union[str, Tuple[str, type]]]]]
Signals = Any  # booleans: a pandas Series or DataFrame, or a 1-D / 2-D array
Config = Union[Mapping[str, Any], str, os.PathLike[str]]

class SieveError(ValueError):
    """A problem with the input (data, config, parameters), with the CLI's message."""

class ConfigError(SieveError):
    """A config key or value (`config: key: message`)."""

class RuleError(ConfigError):
    """A rule or definition that does not parse or check, with its column."""

class DataError(SieveError):
    """Data that cannot be used: a file's row or column, or a DataFrame's."""

class ParameterError(SieveError):
    """A parameter value the strategy cannot take."""

class FileError(SieveError):
    """A file that cannot be read or written (the message names it)."""

class GpuError(SieveError):
    """The GPU backend: no adapter, no GPU build, or a device failure."""

class SieveWarning(UserWarning):
    """A setting that makes results unreliable (the CLI prints these as warnings)."""

def backtest(
    data: Data,
    strategy: Optional[str],
    params: Mapping[str, float],  # or a pandas Series (a sweep row)
    config: Optional[Config] = None,
    equity: bool = False,
    trades: bool = False,
    indicators: Optional[Indicators] = None,
    informative: Optional[Mapping[str, Union[pd.DataFrame, str, os.PathLike]]] = None,
) -> Dict[str, Any]:
    """`sieve backtest --json`'s structure; with equity=True also "equity"
    (a Series indexed by time, or a dict of them by instrument); with
    trades=True also "trades" (trades.csv as a DataFrame with exit_reason,
    or a dict of them by instrument)."""

def backtest_weights(
    data: Dict[str, pd.DataFrame],
    weights: pd.DataFrame,
    config: Optional[Config] = None,
) -> Dict[str, Any]:
    """The instruments rebalanced from one account to target weights (a
    column per instrument, NaN for no order), filled at each one's next
    open; {"equity", "orders"}."""
    ...

def backtest_signals(
    data: Data,
    entries: Signals,
    exits: Signals,
    short_entries: Optional[Signals] = None,
    short_exits: Optional[Signals] = None,
    config: Optional[Config] = None,
    threads: int = 0,
    trades: bool = False,
    equity: bool = False,
    stop_loss: Optional[KeyValues] = None,
    stop_distance: Optional[KeyValues] = None,
    take_profit: Optional[KeyValues] = None,
    target_distance: Optional[KeyValues] = None,
    trail_loss: Optional[KeyValues] = None,
    trail_distance: Optional[KeyValues] = None,
    max_bars: Optional[KeyValues] = None,
    size: Optional[KeyValues] = None,
    stop_level: Optional[KeyValues] = None,
    entry_stop: Optional[KeyValues] = None,
    entry_limit: Optional[KeyValues] = None,
    order_bars: Optional[KeyValues] = None,
    max_entries: Optional[KeyValues] = None,
    robust: bool = False,
    portfolio: bool = False,
    size_of: str = "equity",
    max_positions: Optional[int] = None,
    rank: Optional[pd.DataFrame] = None,
    max_exposure: Optional[float] = None,
) -> Union[pd.DataFrame, Dict[str, Any]]:
    """With portfolio=True (data a dict of DataFrames; entries, exits and
    rank DataFrames with a column per instrument): the instruments trade
    from one account, sized as size × the cash free (size_of="cash") or the
    portfolio's value (size_of="equity"; size defaults to 1 / max_positions,
    else 1 / instruments), at most max_positions open and the positions
    worth at most max_exposure × the portfolio at entries, entries on one
    bar ordered by rank; short_entries / short_exits sell short; returns
    {"equity", "positions", "exposure", "trades", "contribution"}
    (docs/config.md, "Portfolios").

    verified.csv's numbers for each column of your own signals, indexed
    by column; with trades/equity, a dict of "metrics", "trades" (one
    records table, a "column" label per trade, with duration, mae and mfe)
    and "equity" (a column per signal column). The trade-management
    keys are a number, one value per column (dict/Series by label, 1-D array),
    one per bar (Series on the data's index, 1-D array as long as the data)
    or bars × columns (DataFrame by label, 2-D array). robust=True adds
    "robustness": the best column, its DSR (columns as trials), the PBO
    (columns as candidates) and the verdict."""

def indicator(
    data: Data,
    expression: str,
    config: Optional[Config] = None,
    indicators: Optional[Indicators] = None,
    informative: Optional[Mapping[str, Union[pd.DataFrame, str, os.PathLike]]] = None,
) -> Union[pd.Series, Dict[str, pd.Series]]:
    """The value of a rule expression (no parameters) on every bar, as rules
    read it (the data's own columns included, by name or ``col("…")``);
    true/false as 1.0 / 0.0, NaN where undefined."""

def sweep(
    data: Data,
    config: Optional[Config],
    top: Optional[int] = None,
    threads: int = 0,
    progress: bool = False,
    indicators: Optional[Indicators] = None,
    informative: Optional[Mapping[str, Union[pd.DataFrame, str, os.PathLike]]] = None,
) -> pd.DataFrame:
    """The columns and values of sweep.csv (progress: tqdm when installed)."""

def verify(
    data: Data,
    config: Optional[Config],
    candidates: Union[pd.DataFrame, str, os.PathLike[str]],
    top: Optional[int] = None,
    threads: int = 0,
    indicators: Optional[Indicators] = None,
    informative: Optional[Mapping[str, Union[pd.DataFrame, str, os.PathLike]]] = None,
) -> pd.DataFrame:
    """The columns and values of verified.csv, best first."""

def optimize(
    data: Data,
    config: Optional[Config],
    out: Union[str, os.PathLike[str]],
    threads: int = 0,
    progress: bool = False,
    restart: bool = False,
    indicators: Optional[Indicators] = None,
    search: Optional[Mapping[str, Union[str, int]]] = None,
    executor: Optional[concurrent.futures.Executor] = None,
    informative: Optional[Mapping[str, Union[pd.DataFrame, str, os.PathLike]]] = None,
) -> Dict[str, Any]:
    """Runs or resumes the run folder `out`; best.json's content."""

def walkforward(
    data: Data,
    config: Optional[Config],
    out: Union[str, os.PathLike[str]],
    threads: int = 0,
    progress: bool = False,
    restart: bool = False,
    indicators: Optional[Indicators] = None,
    executor: Optional[concurrent.futures.Executor] = None,
    informative: Optional[Mapping[str, Union[pd.DataFrame, str, os.PathLike]]] = None,
) -> Dict[str, Any]:
    """Runs or resumes a walk-forward in `out`; walkforward.json's content."""

class Report(str):
    """The path of a run's report.html; shown inline in Jupyter."""
    def _repr_html_(self) -> str: ...

def report(out: Union[str, os.PathLike[str]]) -> Report:
    """The run folder's report.html, as a path a notebook displays."""

def strategies() -> List[Dict[str, Any]]:
    """The built-in strategies and their parameters."""
