//! The functions of `sieve._native`, one per CLI command. Each builds the
//! study the command would build and calls the same library function;
//! results come back as the text the command writes (CSV, JSON), which
//! `sieve/__init__.py` parses with exact floats.

use std::path::PathBuf;
use std::time::Duration;

use crate::progress::Shown;
use pyo3::prelude::*;
use sieve_core::Error;
use sieve_run::shard::Shard;
use sieve_run::{candidates, files, jobs};

use crate::records::{RecordsOut, TradeRecords};
use crate::{interruptible, ConfigArg, ConfigSource, ConfigSpec, DataSpec, Failure, Source};
use sieve_run::settings::Checked;

/// One instrument's name, bar times in ms and values.
pub type Column = (String, Vec<i64>, Vec<f64>);

/// Each instrument's `(name, times in ms, values)` of a rule expression:
/// what the rules read on every bar.
#[pyfunction]
#[pyo3(signature = (data, config, expression))]
pub fn indicator(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    expression: String,
) -> Result<Vec<Column>, Failure> {
    crate::functions::not_in_a_callback("indicator")?;
    let data = DataSpec::from_py(data)?;
    let spec = ConfigSpec::from_py(&config)?;
    let mut config = spec.load(&data.overrides())?.config;
    let functions = &spec.functions.list;
    // The bars with every column (a study keeps only what its strategy
    // reads), on the config's clock; read with the GIL held (see
    // `DataSpec::study_noticed`).
    let instruments = data.instruments(&mut config, true)?.data;
    let done = interruptible(py, spec.stop(), |_| {
        sieve_run::study::on_clock(&config, instruments)
            .into_iter()
            .map(|(name, bars)| {
                let values = sieve_core::rules::values(&expression, &bars, functions)?;
                Ok((name, bars.time, values))
            })
            .collect::<Result<Vec<_>, Error>>()
    });
    Ok(spec.checked(done)??)
}

/// `sieve backtest --json`'s document (as JSON text), with `equity` each
/// instrument's `(name, times in ms, equity)`, with `trades` every
/// instrument's trades (in the instruments' order, with their names), and
/// the CLI's warnings.
#[pyfunction]
#[pyo3(signature = (data, config, overrides, sets, equity, trades))]
#[allow(clippy::type_complexity)]
pub fn backtest<'py>(
    py: Python<'py>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    sets: Vec<String>,
    equity: bool,
    trades: bool,
) -> Result<
    (
        String,
        Vec<(String, Vec<i64>, Vec<f64>)>,
        Option<(Vec<String>, RecordsOut<'py>, Option<Vec<usize>>)>,
        Vec<String>,
    ),
    Failure,
> {
    crate::functions::not_in_a_callback("backtest")?;
    let data = DataSpec::from_py(data)?;
    let mut overrides = overrides;
    overrides.extend(data.overrides());
    let spec = ConfigSpec::from_py(&config)?;
    let checked = sieve_run::backtest::load_config(&sets, &mut |extra| {
        spec.load(&[&overrides[..], extra].concat())
    })?;
    let study = data.study(py, checked)?;
    spec.fit(&study);
    let done = spec.checked(interruptible(py, spec.stop(), |_| {
        sieve_run::backtest::backtest(&study, &sets)
    }))??;
    let warnings = sieve_run::backtest::warnings(&study, &done);
    let json = serde_json::to_string(&done.json(&study))
        .map_err(|e| crate::SieveError::new_err(e.to_string()))?;
    let (mut curves, mut traded, mut names) = (Vec::new(), TradeRecords::default(), Vec::new());
    if let Some(book) = &study.market().portfolio {
        // One equity curve, the portfolio's; one table of trades, each on
        // its instrument's own bars, with its instrument.
        let (timeline, bt) = (&study.market().primary().bars, &done.runs[0].bt);
        if equity {
            curves.push((String::new(), timeline.time.clone(), bt.equity.clone()));
        }
        let own: Vec<_> = bt
            .trades
            .iter()
            .zip(&bt.instruments)
            .map(|(t, &i)| (i, book.on_own_bars(i, t)))
            .collect();
        traded.group(own.iter().map(|(i, t)| (&book.members[*i].bars, t)));
        let traded = match trades {
            true => Some((
                book.members.iter().map(|m| m.name.clone()).collect(),
                traded.into_py(py)?,
                Some(bt.instruments.clone()),
            )),
            false => None,
        };
        return Ok((json, curves, traded, warnings));
    }
    for (i, run) in study.market().instruments.iter().zip(&done.runs) {
        let (time, bt) = (&i.bars.time, &run.bt);
        if equity {
            curves.push((i.name.clone(), time.clone(), bt.equity.clone()));
        }
        if trades {
            traded.push(&i.bars, bt);
            names.push(i.name.clone());
        }
    }
    let traded = match trades {
        true => Some((names, traded.into_py(py)?, None)),
        false => None,
    };
    Ok((json, curves, traded, warnings))
}

/// The text of `sweep.csv` (the top K of the whole grid).
#[pyfunction]
#[pyo3(signature = (data, config, overrides, threads, progress))]
pub fn sweep(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    threads: usize,
    progress: &Bound<'_, PyAny>,
) -> Result<String, Failure> {
    crate::functions::not_in_a_callback("sweep")?;
    let shown = Shown::from_py(progress)?;
    let spec = ConfigSpec::from_py(&config)?;
    let (_, study) = study(py, data, &spec, overrides)?;
    let outcome = interruptible(py, spec.stop(), |stop| -> Result<String, Error> {
        let backend = jobs::backend(&study)?;
        let total = study.space().size();
        let mut reporter = shown.reporter();
        reporter.start_step("sweep", "comb", total);
        let outcome = jobs::sweep(
            &study,
            backend.as_ref(),
            Shard::WHOLE,
            study.settings().sweep_top,
            threads,
            Some(stop),
            // As the CLI says it: on stderr.
            &mut |note| eprintln!("{note}"),
            &mut |done| reporter.set(done),
        );
        reporter.end_step();
        let jobs::Ended::Done(sieve_run::sweep::Swept { screen, .. }) = outcome? else {
            return Err(Error::Interrupted("KeyboardInterrupt".into()));
        };
        Ok(files::sweep_csv(
            &study.param_names(),
            &sieve_run::sweep::rows(&study, &screen),
        ))
    });
    Ok(spec.checked(outcome)??)
}

/// How a run-folder job runs from Python: a checkpoint every 10 s, stopped
/// by `stop` (Ctrl-C, or an indicator that failed).
fn run_control<'a>(
    threads: usize,
    restart: bool,
    stop: &'a std::sync::atomic::AtomicBool,
    runner: Option<&'a crate::shards::PyShards>,
) -> jobs::RunControl<'a> {
    jobs::RunControl {
        threads,
        restart,
        checkpoint_every: Duration::from_secs(10),
        cancel: Some(stop),
        runner: runner.map(|r| r as &dyn sieve_run::executor::ShardRunner),
        shard_program: None,
    }
}

/// The study with DataFrames kept in the run folder `out`, so that `sieve
/// report` (and the run file) can name the data the run used: one frame as
/// `data.parquet`, a dict of them as `data/<name>.parquet` (read back as
/// `data.paths`). Written for a new run (no `marker` yet) or a restart
/// only, never over the data of a run that different DataFrames would be
/// refused by.
fn keep_frames(
    py: Python<'_>,
    data: &DataSpec,
    study: sieve_run::Study,
    out: &std::path::Path,
    marker: &str,
    restart: bool,
) -> Result<sieve_run::Study, Failure> {
    let fresh = restart || !out.join(marker).exists();
    let study = keep_informative(py, data, study, out, fresh)?;
    match &data.source {
        Source::Frame(_) => {
            let path = out.join("data.parquet");
            if fresh || !path.exists() {
                let bars = study.bars().clone();
                py.detach(|| sieve_core::data::write_bars(&bars, &path))?;
            }
            Ok(study.with_data_path(path))
        }
        Source::Frames(_) => {
            let folder = out.join("data");
            let market = study.market().clone();
            let written = py.detach(|| -> Result<Vec<(String, PathBuf)>, Error> {
                std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
                market
                    .instruments
                    .iter()
                    .map(|i| {
                        let path = folder.join(format!("{}.parquet", i.name));
                        if fresh || !path.exists() {
                            sieve_core::data::write_bars(&i.bars, &path)?;
                        }
                        Ok((i.name.clone(), path))
                    })
                    .collect()
            });
            Ok(study.with_data_paths(written?))
        }
        _ => Ok(study),
    }
}

/// `informative=`'s DataFrames kept in the run folder as
/// `informative/<name>.parquet` (and files named as they are), so that the
/// run's config names them for `sieve report`.
fn keep_informative(
    py: Python<'_>,
    data: &DataSpec,
    study: sieve_run::Study,
    out: &std::path::Path,
    fresh: bool,
) -> Result<sieve_run::Study, Failure> {
    if data.informative.is_empty() {
        return Ok(study);
    }
    let folder = out.join("informative");
    let informative = study.bars().frames.as_ref().map(|f| f.informative.clone());
    let informative = informative.unwrap_or_default();
    let written = py.detach(|| -> Result<Vec<(String, PathBuf)>, Error> {
        let mut paths = Vec::new();
        for ((name, source), bars) in data.informative.iter().zip(&informative) {
            let path = match source {
                Source::Path(Some(p)) => p.clone(),
                _ => {
                    std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
                    let path = folder.join(format!("{name}.parquet"));
                    if fresh || !path.exists() {
                        sieve_core::data::write_bars(&bars.bars, &path)?;
                    }
                    path
                }
            };
            paths.push((name.clone(), path));
        }
        Ok(paths)
    });
    Ok(study.with_informative_paths(written?))
}

/// Runs (or resumes) a walk-forward in the folder `out` (each fold's run
/// folder, the stitched out-of-sample result and the report); returns
/// `walkforward.json`'s text. Ctrl-C stops it at a checkpoint, resumable.
#[pyfunction]
#[pyo3(signature = (data, config, overrides, out, threads, progress, restart, executor=None))]
#[allow(clippy::too_many_arguments)]
pub fn walkforward(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    out: PathBuf,
    threads: usize,
    progress: &Bound<'_, PyAny>,
    restart: bool,
    executor: Option<Bound<'_, PyAny>>,
) -> Result<String, Failure> {
    crate::functions::not_in_a_callback("walkforward")?;
    let runner = executor
        .as_ref()
        .map(crate::shards::PyShards::new)
        .transpose()?;
    let shown = Shown::from_py(progress)?;
    let spec = ConfigSpec::from_py(&config)?;
    let (data, study) = study(py, data, &spec, overrides)?;
    sieve_run::walkforward::check(&study)?;
    let kind = sieve_run::rundir::RunKind::WalkForward;
    // Held to the end: the folder's lock.
    let run = jobs::prepare_run(&study, &out, kind)?;
    let study = keep_frames(py, &data, study, &out, kind.marker(), restart)?;
    let outcome = interruptible(py, spec.stop(), |stop| -> Result<_, Error> {
        let control = run_control(threads, restart, stop, runner.as_ref());
        let mut observer = shown.reporter();
        jobs::walkforward(&study, &out, run.backend.as_ref(), &control, &mut observer)
    });
    match spec.checked(outcome)?? {
        jobs::Ended::Done(_) => {
            let path = out.join("walkforward.json");
            std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e).into())
        }
        jobs::Ended::Stopped(stop) => Err(Error::Interrupted(stop.to_string()).into()),
    }
}

/// Backtests of signals of one's own: `entries`/`exits` (and the short
/// pair) are `len(names) × n_bars` bytes of 0/1, column by column (a
/// C-ordered numpy bool array of the transpose); returns one CSV row of `verified.csv`'s numbers per
/// column, in parallel, without the GIL; with `trades` / `equity`, also each column's
/// trades (as [`backtest`] gives them) and equity curve. `keys`: trade
/// management by name (`rules::KEYS`), each in a form [`ManagedColumns`]
/// reads: one value per column, one per bar, or one per bar and column.
#[pyfunction]
#[pyo3(signature = (data, config, overrides, names, entries, exits, short, keys, threads, trades, equity, robust))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn backtest_signals<'py>(
    py: Python<'py>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    names: Vec<String>,
    entries: Bound<'_, PyAny>,
    exits: Bound<'_, PyAny>,
    short: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    keys: Vec<(String, String, Vec<u8>)>,
    threads: usize,
    trades: bool,
    equity: bool,
    robust: bool,
) -> Result<SignalsOut<'py>, Failure> {
    crate::functions::not_in_a_callback("backtest_signals")?;
    // 0/1 bytes, columns × bars, from numpy's memory in one copy.
    let bytes = |a: &Bound<'_, PyAny>| crate::frame::numpy_vec::<u8>(a);
    let (entries, exits) = (bytes(&entries)?, bytes(&exits)?);
    let short = match short {
        Some((a, b)) => Some((bytes(&a)?, bytes(&b)?)),
        None => None,
    };
    let spec = ConfigSpec::from_py(&config)?;
    let (_, study) = study(py, data, &spec, overrides)?;
    let n_bars = study.bars().len();
    let n_cols = names.len();
    for (what, bytes) in [("entries", Some(&entries)), ("exits", Some(&exits))]
        .into_iter()
        .chain(
            short
                .iter()
                .flat_map(|(a, b)| [("short_entries", Some(a)), ("short_exits", Some(b))]),
        )
    {
        let len = bytes.map_or(0, Vec::len);
        if len != n_bars * n_cols {
            let rows = len / n_cols.max(1);
            return Err(crate::DataError::new_err(format!(
                "{what}: {rows} rows where the data has {n_bars} bars (one row per bar, one column per backtest)"
            )).into());
        }
    }
    // Column-major (columns × bars): each column's series is a slice.
    fn column(bytes: &[u8], c: usize, n_bars: usize) -> &[u8] {
        &bytes[c * n_bars..(c + 1) * n_bars]
    }
    let managed = ManagedColumns::new(&keys, n_bars, n_cols)?;
    let columns: Vec<sieve_run::signals::SignalColumn<'_>> = names
        .iter()
        .enumerate()
        .map(|(c, name)| sieve_run::signals::SignalColumn {
            name: name.clone(),
            entries: column(&entries, c, n_bars),
            exits: column(&exits, c, n_bars),
            short: short
                .as_ref()
                .map(|(a, b)| (column(a, c, n_bars), column(b, c, n_bars))),
            keys: managed.of(c),
        })
        .collect();
    let outcome = interruptible(py, spec.stop(), |stop| {
        let pool = sieve_screen::thread_pool(threads)?;
        pool.install(|| -> Result<_, Error> {
            let done = sieve_run::signals::backtest_signals(
                &study,
                &columns,
                trades || equity,
                robust,
                Some(stop),
            )?;
            let mut traded = TradeRecords::default();
            let mut curves = Vec::new();
            for bt in done.records {
                if trades {
                    traded.push(study.bars(), &bt);
                }
                if equity {
                    curves.push(bt.equity);
                }
            }
            let robustness = done
                .robustness
                .map(|r| serde_json::to_string(&r).map_err(|e| Error::Invalid(e.to_string())))
                .transpose()?;
            Ok((done.table, traded, curves, robustness, done.notes))
        })
    })?;
    let (table, traded, curves, robustness, notes) = outcome?;
    let traded = match trades {
        true => Some(traded.into_py(py)?),
        false => None,
    };
    let curves = match equity {
        true => {
            // Every column's equity in one buffer, column after column: one
            // array for Python, not a list per column.
            let values = curves.iter().flatten();
            let bytes = pyo3::types::PyByteArray::new_with(py, n_cols * n_bars * 8, |b| {
                for (out, v) in b.chunks_exact_mut(8).zip(values) {
                    out.copy_from_slice(&v.to_le_bytes());
                }
                Ok(())
            })?;
            Some((study.bars().time.clone(), bytes))
        }
        false => None,
    };
    Ok((table, traded, curves, robustness, notes))
}

/// A portfolio's times, value (f64 bytes), open positions, gross exposure
/// (f64 bytes), its trades as records (one group) and each trade's
/// instrument.
type PortfolioOut<'py> = (
    Vec<i64>,
    Bound<'py, pyo3::types::PyByteArray>,
    Vec<u32>,
    Bound<'py, pyo3::types::PyByteArray>,
    RecordsOut<'py>,
    Vec<usize>,
);

/// A portfolio of signals (issue 48): each instrument of `data` (a dict of
/// DataFrames, in order) with its own entries/exits (0/1 per bar of its
/// own) and optional rank values, trading from one account.
#[pyfunction]
#[pyo3(signature = (data, config, overrides, entries, exits, rank, size, size_of, max_positions, short_entries=None, short_exits=None, max_exposure=None))]
#[allow(clippy::too_many_arguments)]
pub fn portfolio_signals<'py>(
    py: Python<'py>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    entries: Vec<Bound<'_, PyAny>>,
    exits: Vec<Bound<'_, PyAny>>,
    rank: Option<Vec<Bound<'_, PyAny>>>,
    size: f64,
    size_of: &str,
    max_positions: Option<usize>,
    short_entries: Option<Vec<Bound<'_, PyAny>>>,
    short_exits: Option<Vec<Bound<'_, PyAny>>>,
    max_exposure: Option<f64>,
) -> Result<PortfolioOut<'py>, Failure> {
    crate::functions::not_in_a_callback("backtest_signals")?;
    let spec = ConfigSpec::from_py(&config)?;
    let study = portfolio_study(py, data, &spec, overrides)?;
    let instruments = &study.market().instruments;
    share_time(instruments)?;
    let bad = |m: String| -> Failure { crate::DataError::new_err(m).into() };
    let as_bool = |a: &Bound<'_, PyAny>| -> PyResult<Vec<bool>> {
        Ok(crate::frame::numpy_vec::<u8>(a)?
            .into_iter()
            .map(|b| b != 0)
            .collect())
    };
    let mut signals = Vec::with_capacity(instruments.len());
    for (k, inst) in instruments.iter().enumerate() {
        let (e, x) = match (entries.get(k), exits.get(k)) {
            (Some(e), Some(x)) => (as_bool(e)?, as_bool(x)?),
            _ => {
                return Err(bad(format!(
                    "entries/exits: no signals for instrument '{}'",
                    inst.name
                )))
            }
        };
        let r = match rank.as_ref().map(|r| r.get(k)) {
            Some(Some(r)) => Some(crate::frame::numpy_vec::<f64>(r)?),
            Some(None) => {
                return Err(bad(format!(
                    "rank: no values for instrument '{}'",
                    inst.name
                )))
            }
            None => None,
        };
        // Short flags, none where not given.
        let short = |v: &Option<Vec<Bound<'_, PyAny>>>| -> PyResult<Vec<bool>> {
            match v.as_ref().and_then(|v| v.get(k)) {
                Some(a) => as_bool(a),
                None => Ok(Vec::new()),
            }
        };
        let (se, sx) = (short(&short_entries)?, short(&short_exits)?);
        let n = inst.bars.len();
        let wrong = |v: &[bool]| !v.is_empty() && v.len() != n;
        if e.len() != n
            || x.len() != n
            || wrong(&se)
            || wrong(&sx)
            || r.as_ref().is_some_and(|r| r.len() != n)
        {
            return Err(bad(format!(
                "instrument '{}': signals of {} bars where its data has {n}",
                inst.name,
                e.len()
            )));
        }
        signals.push((e, x, se, sx, r));
    }
    let size_of = match size_of {
        "cash" => sieve_core::engine::SizeOf::Cash,
        "equity" => sieve_core::engine::SizeOf::Equity,
        other => {
            return Err(crate::SieveError::new_err(format!(
                "size_of: \"{other}\" is not one of \"cash\", \"equity\""
            ))
            .into())
        }
    };
    let engine = &study.config().scoring.engine;
    let costs = sieve_core::engine::Costs::of(engine);
    let rules = sieve_core::engine::PortfolioRules {
        initial_cash: engine.initial_cash,
        size,
        size_of,
        max_positions,
        max_exposure,
        at_close: engine.fill == sieve_core::engine::Fill::Close,
    };
    let flagged: Vec<Vec<sieve_core::engine::Signal>> = signals
        .iter()
        .map(|(e, x, se, sx, _)| {
            let mut out = Vec::new();
            sieve_core::engine::signals_of_flags(e, x, se, sx, &mut out);
            out
        })
        .collect();
    let legs: Vec<sieve_core::engine::Leg<'_>> = instruments
        .iter()
        .zip(&signals)
        .zip(&flagged)
        .map(
            |((inst, (_, _, _, _, r)), flagged)| sieve_core::engine::Leg {
                bars: &inst.bars,
                signals: flagged,
                rank: r.as_deref(),
                costs,
            },
        )
        .collect();
    let run = py.detach(|| sieve_core::engine::run_portfolio(&legs, &rules));
    let equity = f64_bytes(py, &run.equity)?;
    let mut trades = TradeRecords::default();
    trades.group(run.trades.iter().map(|(i, t)| (&instruments[*i].bars, t)));
    let traded: Vec<usize> = run.trades.iter().map(|(i, _)| *i).collect();
    let exposure = f64_bytes(py, &run.exposure)?;
    Ok((
        run.time,
        equity,
        run.positions,
        exposure,
        trades.into_py(py)?,
        traded,
    ))
}

/// A target-weight portfolio's times, value (f64 bytes) and orders
/// (instrument, bar in its own bars, units signed, price, fee).
type WeightsOut<'py> = (
    Vec<i64>,
    Bound<'py, pyo3::types::PyByteArray>,
    Vec<(usize, usize, f64, f64, f64)>,
);

/// A target-weight portfolio (issue 48): each instrument of `data` (a dict
/// of DataFrames, in order) with the weight it wants after each of its
/// bars (NaN: no order), rebalanced from one account.
#[pyfunction]
#[pyo3(signature = (data, config, overrides, weights))]
pub fn portfolio_weights<'py>(
    py: Python<'py>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    weights: Vec<Bound<'_, PyAny>>,
) -> Result<WeightsOut<'py>, Failure> {
    crate::functions::not_in_a_callback("backtest_weights")?;
    let spec = ConfigSpec::from_py(&config)?;
    let study = portfolio_study(py, data, &spec, overrides)?;
    let instruments = &study.market().instruments;
    share_time(instruments)?;
    let bad = |m: String| -> Failure { crate::DataError::new_err(m).into() };
    let mut columns = Vec::with_capacity(instruments.len());
    for (k, inst) in instruments.iter().enumerate() {
        let Some(w) = weights.get(k) else {
            return Err(bad(format!(
                "weights: no column for instrument '{}'",
                inst.name
            )));
        };
        let w = crate::frame::numpy_vec::<f64>(w)?;
        if w.len() != inst.bars.len() {
            return Err(bad(format!(
                "instrument '{}': weights of {} bars where its data has {}",
                inst.name,
                w.len(),
                inst.bars.len()
            )));
        }
        if let Some(at) = w.iter().position(|&x| x < 0.0 || x.is_infinite()) {
            let when = sieve_core::format::time(inst.bars.time[at]);
            return Err(bad(format!(
                "weights: instrument '{}' at {when}: {} (weights are ≥ 0 and finite; NaN for no order)",
                inst.name, w[at]
            )));
        }
        columns.push(w);
    }
    let engine = &study.config().scoring.engine;
    next_open_fills(engine)?;
    if engine.lot_size > 0.0 {
        return Err(crate::SieveError::new_err(
            "backtest.lot_size: target weights are filled in fractional units; whole lots are not supported with backtest_weights yet",
        )
        .into());
    }
    let costs = sieve_core::engine::Costs::of(engine);
    let legs: Vec<sieve_core::engine::WeightLeg<'_>> = instruments
        .iter()
        .zip(&columns)
        .map(|(inst, w)| sieve_core::engine::WeightLeg {
            bars: &inst.bars,
            weights: w,
            costs,
        })
        .collect();
    let rules = sieve_core::engine::PortfolioRules::rebalancing(engine.initial_cash, None, false);
    let run = py.detach(|| sieve_core::engine::run_weights(&legs, &rules));
    let equity = f64_bytes(py, &run.equity)?;
    let orders = run
        .orders
        .iter()
        .map(|o| (o.instrument, o.bar, o.units, o.price, o.fee))
        .collect();
    Ok((run.time, equity, orders))
}

/// A portfolio call's study: as `study`'s, without the warnings about
/// each instrument's scoring (nothing is scored per instrument).
fn portfolio_study(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: &ConfigSpec,
    overrides: Vec<String>,
) -> Result<sieve_run::Study, Failure> {
    let (_, study) = study_of(py, data, config, overrides, false)?;
    if study.market().portfolio.is_some() {
        return Err(crate::SieveError::new_err(
            "config: [portfolio] is for strategies run from one account (sieve.backtest, sweep, optimize); backtest_signals(portfolio=True) and backtest_weights take the account's rules as keywords (size, size_of, max_positions, rank): remove the config's portfolio table",
        )
        .into());
    }
    Ok(study)
}

/// Portfolios fill at each instrument's next open (`backtest.fill =
/// "close"` is not theirs yet).
fn next_open_fills(engine: &sieve_core::engine::EngineConfig) -> Result<(), Failure> {
    if engine.fill != sieve_core::engine::Fill::NextOpen {
        return Err(crate::SieveError::new_err(
            "backtest.fill: a portfolio fills at each instrument's next open; fill = \"close\" is not supported with portfolios yet",
        )
        .into());
    }
    Ok(())
}

/// A portfolio's instruments must share some stretch of time
/// ([`sieve_core::market::share_time`]), a data error here.
fn share_time(instruments: &[sieve_core::market::Instrument]) -> Result<(), Failure> {
    sieve_core::market::share_time(instruments)
        .map_err(|e| crate::DataError::new_err(e.to_string()).into())
}

/// Numbers as one bytearray of little-endian f64s (numpy reads it without
/// a copy).
fn f64_bytes<'py>(
    py: Python<'py>,
    values: &[f64],
) -> PyResult<Bound<'py, pyo3::types::PyByteArray>> {
    pyo3::types::PyByteArray::new_with(py, values.len() * 8, |b| {
        for (out, v) in b.chunks_exact_mut(8).zip(values) {
            out.copy_from_slice(&v.to_le_bytes());
        }
        Ok(())
    })
}

/// `backtest_signals`' trade-management values, by key (`rules::KEYS`),
/// each as compact as it was given.
struct ManagedColumns {
    n_bars: usize,
    keys: sieve_core::rules::ManagedKeys<KeyInput>,
}

/// One key's values as Python gives them.
enum KeyInput {
    /// One value per column.
    PerColumn(Vec<f64>),
    /// One value per bar, the same for every column.
    PerBar(Vec<f64>),
    /// Columns × bars, column by column.
    Full(Vec<f64>),
}

impl ManagedColumns {
    /// `keys`: (name, form, little-endian f64s) with form `"column"` (one
    /// per column), `"bar"` (one per bar) or `"full"` (columns × bars,
    /// column by column).
    fn new(keys: &[(String, String, Vec<u8>)], n_bars: usize, n_cols: usize) -> PyResult<Self> {
        let mut out = ManagedColumns {
            n_bars,
            keys: Default::default(),
        };
        for (name, form, bytes) in keys {
            let values: Vec<f64> = bytes
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().unwrap_or_default()))
                .collect();
            let (input, need) = match form.as_str() {
                "column" => (KeyInput::PerColumn(values), n_cols),
                "bar" => (KeyInput::PerBar(values), n_bars),
                _ => (KeyInput::Full(values), n_bars * n_cols),
            };
            if bytes.len() != need * 8 {
                return Err(crate::DataError::new_err(format!(
                    "{name}: {} values where {need} are needed ({n_bars} bars, {n_cols} columns)",
                    bytes.len() / 8,
                )));
            }
            let Some(spec) = sieve_core::rules::KeySpec::named(name) else {
                return Err(crate::ConfigError::new_err(format!(
                    "{name}: not a trade-management key ({})",
                    sieve_core::rules::KeySpec::names()
                )));
            };
            if let Err(other) = out.keys.set(spec, input) {
                return Err(crate::ConfigError::new_err(format!(
                    "{other} and {name}: give one of them (a distance as a fraction of the entry price, or in price units)"
                )));
            }
        }
        Ok(out)
    }

    /// Column `c`'s keys.
    fn of(&self, c: usize) -> sieve_core::rules::SignalKeys<'_> {
        use sieve_core::rules::KeySeries;
        let n = self.n_bars;
        self.keys.as_ref().map(|k| match k {
            KeyInput::PerColumn(v) => KeySeries::Each(v[c]),
            KeyInput::PerBar(v) => KeySeries::Bars(v),
            KeyInput::Full(v) => KeySeries::Bars(&v[c * n..(c + 1) * n]),
        })
    }
}

/// What `backtest_signals` hands Python: the metrics table's text, every
/// column's trades (in the columns' order), the bar times and every column's equity (columns one
/// after another) when asked, the robustness JSON and notes.
type SignalsOut<'py> = (
    String,
    Option<RecordsOut<'py>>,
    Option<(Vec<i64>, Bound<'py, pyo3::types::PyByteArray>)>,
    Option<String>,
    Vec<String>,
);

/// The text of `verified.csv` for the candidates (CSV text with the
/// parameter columns, e.g. a sweep's).
#[pyfunction]
#[pyo3(signature = (data, config, overrides, candidates_csv, threads))]
pub fn verify(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    candidates_csv: String,
    threads: usize,
) -> Result<String, Failure> {
    crate::functions::not_in_a_callback("verify")?;
    let spec = ConfigSpec::from_py(&config)?;
    let (_, study) = study(py, data, &spec, overrides)?;
    let top = study.settings().verify_top;
    let list = candidates::parse(candidates_csv.as_bytes(), study.strategy(), Some(top)).map_err(
        |message| {
            Failure::from(Error::Data {
                path: "candidates".into(),
                message,
            })
        },
    )?;
    // Ctrl-C stops it between candidates (KeyboardInterrupt).
    let result = spec.checked(interruptible(py, spec.stop(), |stop| {
        sieve_run::verify::verify(&study, list, threads, Some(stop), &|| {})
    }))??;
    match result {
        sieve_run::control::Ended::Done(result) => Ok(result.csv),
        sieve_run::control::Ended::Stopped(_) => {
            Err(Error::Interrupted("KeyboardInterrupt".into()).into())
        }
    }
}

/// Runs (or resumes) the optimize loop in the run folder `out`; returns
/// `best.json`'s text and the robustness verdict. Ctrl-C stops it at a
/// checkpoint, resumable.
#[pyfunction]
#[pyo3(signature = (data, config, overrides, out, threads, progress, restart, executor=None))]
#[allow(clippy::too_many_arguments)]
pub fn optimize(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: ConfigArg<'_>,
    overrides: Vec<String>,
    out: PathBuf,
    threads: usize,
    progress: &Bound<'_, PyAny>,
    restart: bool,
    executor: Option<Bound<'_, PyAny>>,
) -> Result<(String, Option<String>), Failure> {
    crate::functions::not_in_a_callback("optimize")?;
    let runner = executor
        .as_ref()
        .map(crate::shards::PyShards::new)
        .transpose()?;
    let shown = Shown::from_py(progress)?;
    let spec = ConfigSpec::from_py(&config)?;
    let (data, study) = match spec.source {
        // No config: the built-in example, as `sieve optimize` runs it.
        ConfigSource::None => {
            let data = DataSpec::from_py(data)?;
            let mut overrides = overrides;
            overrides.extend(data.overrides());
            let given = !data.is_none();
            let (config, _) = jobs::example_config(given, None, &[], &overrides)?;
            let study = data.study(py, Checked::new(config)?)?;
            (data, study)
        }
        _ => study(py, data, &spec, overrides)?,
    };
    spec.fit(&study);
    // Held to the end: the run folder's lock.
    let run = jobs::prepare_run(&study, &out, sieve_run::rundir::RunKind::Optimize)?;
    let study = keep_frames(py, &data, study, &out, "run.json", restart)?;
    let outcome = interruptible(py, spec.stop(), |stop| -> Result<_, Error> {
        let control = run_control(threads, restart, stop, runner.as_ref());
        let mut observer = shown.reporter();
        jobs::optimize(&study, &out, run.backend.as_ref(), &control, &mut observer)
    });
    let outcome = spec.checked(outcome)??;
    let Some(found) = &outcome.best else {
        let message = sieve_run::optimize::no_best(&study, &outcome.stop);
        return Err(crate::SieveError::new_err(message).into());
    };
    let best = out.join("best.json");
    let text = std::fs::read_to_string(&best).map_err(|e| Error::io(&best, e))?;
    Ok((text, found.verdict()))
}

/// The built-in strategies and their parameters, as JSON text.
#[pyfunction]
pub fn strategies() -> String {
    let list: Vec<serde_json::Value> = sieve_core::strategy::registry()
        .iter()
        .map(|s| {
            let params: Vec<serde_json::Value> = s
                .params()
                .iter()
                .map(|p| {
                    let (start, stop, step) = p.grid;
                    serde_json::json!({
                        "name": p.name,
                        "kind": match p.kind {
                            sieve_core::strategy::ParamKind::Int => "int",
                            sieve_core::strategy::ParamKind::Float => "float",
                        },
                        "default": match p.kind {
                            sieve_core::strategy::ParamKind::Int => serde_json::json!(p.default as i64),
                            sieve_core::strategy::ParamKind::Float => serde_json::json!(p.default),
                        },
                        "grid": { "start": start, "stop": stop, "step": step },
                        "about": p.doc,
                    })
                })
                .collect();
            serde_json::json!({
                "name": s.name(),
                "summary": s.summary(),
                "default_constraints": s.default_constraints(),
                "params": params,
            })
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The data argument, and the study of the checked config (with
/// `overrides`) on it.
fn study(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: &ConfigSpec,
    overrides: Vec<String>,
) -> Result<(DataSpec, sieve_run::Study), Failure> {
    study_of(py, data, config, overrides, true)
}

/// [`study`], with or without the warnings about the settings.
fn study_of(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    config: &ConfigSpec,
    mut overrides: Vec<String>,
    warn: bool,
) -> Result<(DataSpec, sieve_run::Study), Failure> {
    let data = DataSpec::from_py(data)?;
    overrides.extend(data.overrides());
    let checked = config.load(&overrides)?;
    let study = match warn {
        true => data.study(py, checked)?,
        false => data.study_unscored(py, checked)?,
    };
    config.fit(&study);
    Ok((data, study))
}
