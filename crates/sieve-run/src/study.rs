//! [`Study`]: what a job studies (config, instruments, strategy, grid),
//! checked once and identified by hashes of its config and data; and the
//! warnings about settings and data that make a run's numbers unreliable.

use sha2::{Digest, Sha256};
use sieve_core::config::Config;
use sieve_core::data::{Bars, Frames, Informative};
use sieve_core::evaluate::{Evaluator, Scoring, Shares};
use sieve_core::format::{float, short};

use crate::text::human;
use sieve_core::grid::ParamSpace;
use sieve_core::market::Market;
use sieve_core::metrics::Windows;
use sieve_core::strategy::{SharedStrategy, Strategy};
use sieve_core::Result;
use std::path::PathBuf;
use std::sync::Arc;

use crate::settings::{Checked, RunSettings};
use sieve_core::key;

/// The strategy's parameters as a rule expression reads them: names, and
/// whether each is a whole number.
fn param_kinds(strategy: &dyn Strategy) -> Vec<(&str, bool)> {
    strategy
        .params()
        .iter()
        .map(|p| (p.name.as_ref(), p.kind == sieve_core::param::ParamKind::Int))
        .collect()
}

/// Everything a job needs about what it studies, checked once and hashed.
/// Its inputs are shared (`Arc`): a clone costs no copy of the prices, and
/// nothing can change after hashing except through the methods below, each
/// of which says what the identity becomes.
#[derive(Clone)]
pub struct Study {
    config: Arc<Config>,
    /// The run sections of the config, checked.
    settings: Arc<RunSettings>,
    /// The instruments (one, or several with `data.paths`) and how their
    /// objectives combine.
    market: Arc<Market>,
    strategy: SharedStrategy,
    space: Arc<ParamSpace>,
    /// Where the bars came from (a path, or a note on synthetic data).
    data_label: String,
    /// SHA-256 of the bars' values (and, with several instruments, their
    /// names): the same data loaded from anywhere.
    /// Computed when first asked for (a run folder's identity, a sweep's
    /// meta): a backtest of signals needs none, and hashing a million
    /// bars is a tenth of loading them.
    data_hash: Arc<std::sync::OnceLock<String>>,
    /// SHA-256 of the config: the run's identity. Left out: `data.path`
    /// and `data.columns` (the data hash covers the data) and the stop rules
    /// `optimize.iterations` / `optimize.time_budget_s`, which a user may
    /// raise to continue a run.
    config_hash: String,
}

impl Study {
    /// A study of one instrument, `bars`.
    pub fn new(config: Config, bars: Bars, data_label: String) -> Result<Study> {
        Study::of_instruments(config, vec![(String::new(), bars)], data_label)
    }

    /// A study of the named instruments' bars, in order.
    pub fn of_instruments(
        config: Config,
        data: Vec<(String, Bars)>,
        data_label: String,
    ) -> Result<Study> {
        Study::of_checked(Checked::new(config)?, data, data_label)
    }

    /// A study of the named instruments' bars, in order, from a config
    /// whose run sections are already read.
    pub fn of_checked(
        checked: Checked,
        data: Vec<(String, Bars)>,
        data_label: String,
    ) -> Result<Study> {
        let Checked { config, settings } = checked;
        let strategy = config.strategy()?;
        let space = config.space(&*strategy)?;
        let mut data = on_clock(&config, data);
        if let (Some(_), Some((expression, functions))) =
            (config.scoring.portfolio, &config.rank_by)
        {
            // `rank` and `count` for the rules, where rank_by reads no
            // parameter (computed once, before the grid).
            let key = key::PORTFOLIO_RANK_BY;
            let (e, reads_params) = sieve_core::rules::Expression::compile_reading(
                key,
                expression,
                &param_kinds(&*strategy),
                functions,
                true,
            )
            .map_err(|e| config.in_file(e))?;
            let reads = strategy.data_columns();
            if reads_params && reads.iter().any(|c| c == "rank" || c == "count") {
                return Err(config.in_file(sieve_core::Error::config(
                    key,
                    "the rules read rank or count, which need a rank_by that reads no parameter (they are computed once, before the grid); this one reads a parameter",
                )));
            }
            if !reads_params {
                let values: Vec<Vec<f64>> = data
                    .iter()
                    .map(|(_, bars)| e.check_data(bars).map(|()| e.values(bars, &[])))
                    .collect::<Result<_>>()
                    .map_err(|e| config.in_file(e))?;
                sieve_core::market::add_cross_section(&mut data, &values);
            }
        }
        let mut market =
            Market::new(&config.scoring(), data, &*strategy).map_err(|e| config.in_file(e))?;
        if let (Some(book), Some((expression, functions))) =
            (&mut market.portfolio, &config.rank_by)
        {
            let params = param_kinds(&*strategy);
            book.rank_by(expression, functions, &params)
                .map_err(|e| config.in_file(e))?;
        }
        if let (Some(book), Some(w)) = (&mut market.portfolio, &config.weights) {
            let params = param_kinds(&*strategy);
            book.weights(&w.weight, w.rebalance.as_deref(), &w.functions, &params)
                .map_err(|e| config.in_file(e))?;
        }
        Ok(Study {
            settings: Arc::new(settings),
            data_hash: Default::default(),
            config_hash: config_hash(&config),
            config: Arc::new(config),
            market: Arc::new(market),
            strategy,
            space: Arc::new(space),
            data_label,
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The run sections of the config, checked.
    pub fn settings(&self) -> &RunSettings {
        &self.settings
    }

    /// The instruments (one, or several with `data.paths`) and how their
    /// objectives combine.
    pub fn market(&self) -> &Market {
        &self.market
    }

    pub fn strategy(&self) -> &dyn Strategy {
        &*self.strategy
    }

    /// The grid.
    pub fn space(&self) -> &ParamSpace {
        &self.space
    }

    /// Where the bars came from (a path, or a note on synthetic data).
    pub fn data_label(&self) -> &str {
        &self.data_label
    }

    /// SHA-256 of the bars' values (and, with several instruments, their
    /// names): the same data loaded from anywhere.
    pub fn data_hash(&self) -> &str {
        self.data_hash.get_or_init(|| market_hash(&self.market))
    }

    /// SHA-256 of the config: the run's identity (see the field's note).
    pub fn config_hash(&self) -> &str {
        &self.config_hash
    }

    /// The same study over another grid of the same strategy (the optimize
    /// loop's zoomed grids): the identity is the run's.
    pub fn with_space(&self, space: ParamSpace) -> Study {
        Study {
            space: Arc::new(space),
            ..self.clone()
        }
    }

    /// The same study with its bars kept at `path` (a DataFrame's bars
    /// written into the run folder): `data.path` is not part of the
    /// identity, so the hashes stay.
    pub fn with_data_path(&self, path: PathBuf) -> Study {
        let mut config = (*self.config).clone();
        config.data = Some(path);
        Study {
            config: Arc::new(config),
            ..self.clone()
        }
    }

    /// The same study with its informative instruments kept at `paths`
    /// (DataFrames written into the run folder): the config names them,
    /// the hashes stay.
    pub fn with_informative_paths(&self, paths: Vec<(String, PathBuf)>) -> Study {
        let mut config = (*self.config).clone();
        config.informative = paths;
        Study {
            config: Arc::new(config),
            ..self.clone()
        }
    }

    /// The axes of a grid as the run files record it (`run.json`).
    pub fn axes_of(
        &self,
        grid: &[crate::files::AxisRecord],
    ) -> Result<Vec<sieve_core::grid::Axis>> {
        grid.iter()
            .map(|a| {
                Ok(sieve_core::grid::Axis {
                    param: sieve_core::strategy::param_index(self.strategy(), &a.name)?,
                    name: a.name.clone(),
                    values: a.values.clone(),
                })
            })
            .collect()
    }

    /// The same study, its instruments read from these files (by name, in
    /// the study's order): where the Python package keeps DataFrames.
    pub fn with_data_paths(&self, files: Vec<(String, PathBuf)>) -> Study {
        let mut config = (*self.config).clone();
        config.data = None;
        (config.names, config.paths) = {
            let (names, paths): (Vec<String>, Vec<PathBuf>) = files.into_iter().unzip();
            (Some(names), paths)
        };
        Study {
            config: Arc::new(config),
            ..self.clone()
        }
    }

    /// The same study of its one instrument scored on `windows` (screening
    /// on `screen`, one of them): a walk-forward fold, whose identity is
    /// `identity` (the run's, and the fold's windows).
    pub fn with_windows(
        &self,
        windows: Windows,
        screen: sieve_core::metrics::Window,
        identity: String,
    ) -> Study {
        let mut market = (*self.market).clone();
        let scoring = &mut market.instruments[0].scoring;
        scoring.screen = screen;
        scoring.windows = windows;
        Study {
            market: Arc::new(market),
            config_hash: identity,
            ..self.clone()
        }
    }

    /// The first instrument's bars (the only one's, with one instrument).
    pub fn bars(&self) -> &Bars {
        &self.market.primary().bars
    }

    /// The first instrument's scoring: windows, engine, objective.
    /// Whether the screen scores exactly what verification does: the CPU
    /// backend ranking by the score window, where screen and verified
    /// ranks agree by construction (a Spearman of 1 says nothing).
    pub fn screen_is_exact(&self) -> bool {
        self.settings().backend == "cpu"
            && self
                .market()
                .instruments
                .iter()
                .all(|i| i.scoring.screen.same_bars(&i.scoring.windows.score))
    }

    pub fn scoring(&self) -> &Scoring {
        &self.market.primary().scoring
    }

    /// Runs `f` with an evaluator whose indicators cover every parameter set
    /// of `sets`: the one way a job builds the shared indicators.
    pub fn with_evaluator<'p, R>(
        &self,
        sets: impl IntoIterator<Item = &'p [f64]>,
        f: impl FnOnce(&Evaluator<'_>) -> R,
    ) -> R {
        self.with_evaluators(sets, |evals| f(&evals[0]))
    }

    /// [`Study::with_evaluator`] for every instrument: one evaluator each,
    /// in instrument order.
    pub fn with_evaluators<'p, R>(
        &self,
        sets: impl IntoIterator<Item = &'p [f64]>,
        f: impl FnOnce(&[Evaluator<'_>]) -> R,
    ) -> R {
        let keys = Evaluator::indicators_for(self.strategy(), sets);
        let sets = self.market.series(self.strategy(), keys);
        let evals = self.market.evaluators(self.strategy(), &sets);
        f(&evals)
    }

    /// Parameter names in strategy order (the CSV columns).
    pub fn param_names(&self) -> Vec<&str> {
        self.strategy
            .params()
            .iter()
            .map(|p| p.name.as_ref())
            .collect()
    }
}

/// The instruments' bars on `config`'s clock: the rules read the calendar
/// in `data.timezone`, and higher timeframes on `[data]`'s days and the
/// bars' length (found once here); the informative instruments (as the
/// loader attached them to the first) on the same clock.
pub fn on_clock(config: &Config, data: Vec<(String, Bars)>) -> Vec<(String, Bars)> {
    let mut informative = None;
    data.into_iter()
        .map(|(name, bars)| {
            let informative = informative.get_or_insert_with(|| {
                let given = bars.frames.as_ref().map(|f| f.informative.clone());
                informative_on_calendar(config, given.unwrap_or_default())
            });
            let bars = on_calendar(config, bars, config.frames.bar, informative.clone());
            (name, bars)
        })
        .collect()
}

/// `bars` on `config`'s calendar (`data.timezone` and the frames' keys),
/// `given` long (else their most common spacing, found once), reading
/// `informative`.
fn on_calendar(
    config: &Config,
    bars: Bars,
    given: Option<i64>,
    informative: Vec<Informative>,
) -> Bars {
    let bar = sieve_core::data::timeframe::bar_length(&bars.time, given);
    Bars {
        timezone: config.timezone,
        frames: Some(Arc::new(Frames {
            bar: Some(bar),
            informative,
            ..config.frames.clone()
        })),
        ..bars
    }
}

/// The informative instruments on `config`'s calendar (their own length:
/// `data.bar` is the traded bars').
fn informative_on_calendar(config: &Config, given: Vec<Informative>) -> Vec<Informative> {
    given
        .into_iter()
        .map(|i| Informative {
            bars: Arc::new(on_calendar(config, (*i.bars).clone(), None, Vec::new())),
            name: i.name,
        })
        .collect()
}

pub fn data_hash(bars: &Bars) -> String {
    let mut h = Blocks::default();
    bars.time.iter().for_each(|t| h.value(t.to_le_bytes()));
    for col in [&bars.open, &bars.high, &bars.low, &bars.close] {
        col.iter().for_each(|v| h.value(v.to_bits().to_le_bytes()));
    }
    // The columns the rules read (a study keeps only those), by name, any
    // undefined value alike (NaN bits differ by where they came from); none
    // leaves the hash of price-only data as it was.
    let mut columns: Vec<_> = bars.extra.iter().collect();
    columns.sort_by(|a, b| a.name.cmp(&b.name));
    for column in columns {
        h.bytes(column.name.as_bytes());
        h.bytes(&[0]);
        for v in &column.values {
            let v = if v.is_nan() { f64::NAN } else { *v };
            h.value(v.to_bits().to_le_bytes());
        }
    }
    // The detail bars (`data.detail`) as mapped under the bars; none
    // leaves the hash as it was.
    if let Some(detail) = &bars.detail {
        h.bytes(b"detail\0");
        detail.hashed(|v| h.value(v));
    }
    // The informative instruments' bars (`data.informative`), by name;
    // none leaves the hash as it was.
    let informative = bars.frames.as_ref().map(|f| &f.informative[..]);
    for i in informative.unwrap_or_default() {
        h.bytes(b"informative\0");
        h.bytes(i.name.as_bytes());
        h.bytes(&[0]);
        h.bytes(data_hash(&i.bars).as_bytes());
    }
    hex(h.finish().as_ref())
}

/// SHA-256 fed the same bytes as value by value, a block at a time (a
/// million bars are five million values; one `update` each cost more than
/// the hashing).
struct Blocks {
    hasher: Sha256,
    block: Vec<u8>,
}

impl Default for Blocks {
    fn default() -> Self {
        Blocks {
            hasher: Sha256::new(),
            block: Vec::with_capacity(16 * 1024),
        }
    }
}

impl Blocks {
    #[inline]
    fn value(&mut self, v: [u8; 8]) {
        self.block.extend_from_slice(&v);
        if self.block.len() == self.block.capacity() {
            self.hasher.update(&self.block);
            self.block.clear();
        }
    }

    fn bytes(&mut self, b: &[u8]) {
        self.hasher.update(&self.block);
        self.block.clear();
        self.hasher.update(b);
    }

    fn finish(mut self) -> impl AsRef<[u8]> {
        self.hasher.update(&self.block);
        self.hasher.finalize()
    }
}

/// The data hash of a market: one instrument's is [`data_hash`] of its bars
/// (so its run folders stay valid); several hash every name and bars hash.
/// A portfolio's hashes its instruments, as several instruments' do.
pub fn market_hash(market: &Market) -> String {
    match market.traded() {
        [one] if market.portfolio.is_none() => data_hash(&one.bars),
        all => hash_text(
            &all.iter()
                .map(|i| format!("{}={}\n", i.name, data_hash(&i.bars)))
                .collect::<String>(),
        ),
    }
}

pub fn config_hash(config: &Config) -> String {
    hex(&Sha256::digest(config.identity_text().as_bytes()))
}

/// SHA-256 of `text`, in hex.
pub fn hash_text(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Every warning about `study`, one line each: each instrument's (named
/// when there are several), then the instruments' together.
pub fn study_warnings(study: &Study) -> Vec<String> {
    let market = study.market();
    let mut out = Vec::new();
    for i in &market.instruments {
        for w in warnings(study.config(), &i.scoring, &i.bars) {
            out.push(match market.is_several() {
                true => format!("{}: {w}", i.name),
                false => w,
            });
        }
    }
    out.extend(market_warnings(market, study.config().scoring().shares));
    out
}

/// Instruments whose spans differ by more than this factor are warned
/// about: a share boundary on their combined timeline gives them windows
/// of very different lengths, or none.
pub const SPAN_RATIO_WARNING: f64 = 4.0;

/// What makes a study of several instruments unreliable, one line each.
pub fn market_warnings(market: &sieve_core::market::Market, shares: Shares) -> Vec<String> {
    if !market.is_several() {
        return Vec::new();
    }
    let day = sieve_core::data::MS_PER_DAY as f64;
    let spans: Vec<(&str, f64)> = market
        .instruments
        .iter()
        .map(|i| {
            let t = &i.bars.time;
            let days = (t[t.len() - 1] - t[0]) as f64 / day;
            (i.name.as_str(), days)
        })
        .collect();
    let shortest = spans.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let longest = spans.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let (Some(short), Some(long)) = (shortest, longest) else {
        return Vec::new();
    };
    if long.1 <= SPAN_RATIO_WARNING * short.1.max(1e-9) {
        return Vec::new();
    }
    let advice = match shares {
        Shares::Combined => "score.shares = \"combined\" (the default) puts share boundaries such as \"40%\" on the same dates for all, so the short ones get windows of other lengths, or none; score.shares = \"each\" takes a share of each instrument's own bars",
        Shares::Each => "with score.shares = \"each\" each has its own windows, over different periods",
    };
    vec![format!(
        "the instruments' spans differ by more than {SPAN_RATIO_WARNING}×: {} covers {}, {} covers {}; {advice}",
        short.0,
        span_days(short.1),
        long.0,
        span_days(long.1)
    )]
}

/// A warning when the objective compounds to a yearly rate (cagr, calmar)
/// over a ranked or reported window that spans less than
/// [`ANNUALIZED_MIN_DAYS`].
pub fn short_annualized_window(scoring: &Scoring, bars: &Bars) -> Option<String> {
    let short: Vec<String> = scoring
        .windows
        .all()
        .filter(|w| w.end > w.start)
        .map(|w| (w.kind, days_spanned(&bars.time, w.start..w.end)))
        .filter(|&(_, days)| days < ANNUALIZED_MIN_DAYS)
        .map(|(kind, days)| format!("{kind} {}", span_days(days)))
        .collect();
    if short.is_empty() {
        return None;
    }
    let which = format!(
        "these windows span less than {ANNUALIZED_MIN_DAYS} days ({})",
        short.join(", ")
    );
    extrapolation_warning(scoring.objective, &which)
}

/// The days bars `range` of `time` span, from the close before the first
/// (where its return starts) to the last.
pub fn days_spanned(time: &[i64], range: std::ops::Range<usize>) -> f64 {
    let from = time[range.start.saturating_sub(1)];
    (time[range.end.max(1) - 1] - from) as f64 / sieve_core::data::MS_PER_DAY as f64
}

/// The warning that `objective` extrapolates the windows `which` describes,
/// when it compounds to a yearly rate (cagr, calmar); else none.
pub fn extrapolation_warning(
    objective: sieve_core::metrics::Objective,
    which: &str,
) -> Option<String> {
    use sieve_core::metrics::Objective;
    matches!(objective, Objective::Cagr | Objective::Calmar).then(|| {
        format!(
            "the objective {} compounds a window's return to a yearly rate, and {which}: it extrapolates them, and can reach absurd values; prefer total_return or sharpe for short windows",
            objective.name()
        )
    })
}

fn span_days(days: f64) -> String {
    match days {
        d if d >= 2.0 => format!("{d:.0} days"),
        d => format!("{:.1} hours", d * 24.0),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Below this many days, a compounded yearly rate (cagr, and calmar built
/// on it) extrapolates a short window's return to a whole year.
pub const ANNUALIZED_MIN_DAYS: f64 = 180.0;

/// Prices (and cash) beyond these magnitudes overflow or underflow the
/// engine's arithmetic (sums of squares over an indicator's window).
pub const PRICE_RANGE: (f64, f64) = (1e-150, 1e150);

/// The columns a rule strategy reads (its volume, its own columns) that
/// hold one value on every bar: each rule on them is constant, and trades
/// always or never (a session VWAP on an index's volume of 0).
fn constant_columns(config: &Config, bars: &Bars) -> Vec<String> {
    let Some(rules) = &config.rules else {
        return Vec::new();
    };
    let one_value = |values: &[f64]| {
        let mut finite = values.iter().filter(|v| v.is_finite());
        let first = finite.next().copied()?;
        let mut rest = finite.peekable();
        (rest.peek().is_some() && rest.all(|&v| v == first)).then_some(first)
    };
    let volume = bars
        .volume
        .as_deref()
        .filter(|_| rules.reads_volume())
        .map(|v| ("volume".to_string(), v));
    let user = rules.data_columns().into_iter().filter_map(|name| {
        bars.extra(&name)
            .map(|c| (format!("column '{name}'"), &c.values[..]))
    });
    volume
        .into_iter()
        .chain(user)
        .filter_map(|(what, values)| {
            one_value(values).map(|v| {
                format!(
                    "{what} is {} on every bar and the rules read it: every rule on it is the same on each bar (is it missing from the data?)",
                    float(v)
                )
            })
        })
        .collect()
}

/// Informative instruments that start after the bars or end before them:
/// rules read them as undefined before their first bar, and their last
/// value from their end on.
fn informative_coverage(bars: &Bars) -> Vec<String> {
    let (Some(&first), Some(&last)) = (bars.time.first(), bars.time.last()) else {
        return Vec::new();
    };
    let informative = bars.frames.as_ref().map(|f| &f.informative[..]);
    let mut out = Vec::new();
    for i in informative.unwrap_or_default() {
        let (Some(&start), Some(&end)) = (i.bars.time.first(), i.bars.time.last()) else {
            continue;
        };
        let length = sieve_core::data::timeframe::length_of(&i.bars);
        let key = format!("data.informative.{}", i.name);
        if start > first {
            out.push(format!(
                "{key} starts at {}, after the data's first bar ({}): rules read it as undefined before",
                sieve_core::format::time(start),
                sieve_core::format::time(first)
            ));
        }
        // More than one of its bars short of the data's last bar.
        if end.saturating_add(2 * length) <= last {
            out.push(format!(
                "{key} ends at {}, before the data's last bar ({}): rules read its last value from then on",
                sieve_core::format::time(end),
                sieve_core::format::time(last)
            ));
        }
    }
    out
}

/// Settings (and data) that make a backtest's numbers unreliable, one line
/// each.
pub fn warnings(config: &Config, scoring: &Scoring, bars: &Bars) -> Vec<String> {
    let mut out = Vec::new();
    for w in scoring.windows.all() {
        let len = w.end - w.start;
        if len < 30 {
            out.push(format!(
                "the {} window has only {len} bar(s); its ratios (Sharpe, Calmar, …) are unreliable below 30",
                w.kind
            ));
        }
    }
    if let Some(short) = short_annualized_window(scoring, bars) {
        out.push(short);
    }
    let (lo, hi) = bars.price_range();
    let outside = |v: f64| v > PRICE_RANGE.1 || v < PRICE_RANGE.0;
    let range = format!("{}..{}", short(PRICE_RANGE.0), short(PRICE_RANGE.1));
    if outside(lo) || outside(hi) {
        out.push(format!(
            "prices from {} to {} are outside {range}, where sums and products of prices overflow or vanish: indicators and equity may come out infinite, NaN or 0 (and no trade taken); rescale the prices",
            human(lo),
            human(hi)
        ));
    }
    let cash = scoring.engine.initial_cash;
    if outside(cash) {
        out.push(format!(
            "{} = {} is outside {range}: equity and trade sizes may overflow to infinity; use a cash amount within it",
            key::BACKTEST_INITIAL_CASH,
            short(cash)
        ));
    }
    out.extend(constant_columns(config, bars));
    out.extend(informative_coverage(bars));
    for (spec, value) in config.management().into_iter().flat_map(|m| m.entries()) {
        if let Some(typo) = value.number().and_then(|v| spec.typo(v)) {
            out.push(format!("strategy.{typo}"));
        }
    }
    for (key, v) in [
        (key::BACKTEST_FEE, config.scoring.engine.fee),
        (key::BACKTEST_SLIPPAGE, config.scoring.engine.slippage),
    ] {
        if v >= 0.05 {
            out.push(format!(
                "{key} = {} is {:.2}% per fill; fees and slippage are fractions (0.001 = 0.1%)",
                float(v),
                v * 100.0
            ));
        }
    }
    if let Some(rules) = &config.rules {
        if rules.has_short_rules()
            && config.scoring.direction == sieve_core::strategy::Direction::Long
        {
            out.push(
                "short_entry and short_exit are ignored with backtest.direction = \"long\"; set it to \"long_short\" to trade them".to_string(),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::data_hash;
    use sieve_core::data::{synth, ExtraColumn};

    /// A study takes the run settings its checked config carries and
    /// reads the run sections no more: a setting changed after the check
    /// is the one the study has.
    #[test]
    fn a_study_keeps_the_settings_it_was_given() {
        let config = sieve_core::config::Config::parse("[verify]\ntop = 7\n").unwrap();
        let mut checked = crate::settings::Checked::new(config).unwrap();
        assert_eq!(checked.settings.verify_top, 7);
        checked.settings.verify_top = 9;
        let study =
            super::Study::of_checked(checked, vec![(String::new(), synth(300, 1))], "s".into())
                .unwrap();
        assert_eq!(study.settings().verify_top, 9);
    }

    /// The data hash is the digest of the values one after another, as
    /// it always was (run folders on disk keep their identity): the block
    /// feeding gives the value-by-value digest, on bars long enough to
    /// fill several blocks, with a column of the user's holding NaN.
    #[test]
    fn the_data_hash_is_the_value_by_value_digest() {
        use sha2::{Digest, Sha256};
        let mut bars = synth(5000, 3);
        let mut wave: Vec<f64> = (0..5000).map(|i| (i as f64).sin()).collect();
        wave[7] = f64::NAN;
        bars.extra = vec![column("b", wave.clone()), column("a", wave)];
        let mut h = Sha256::new();
        for t in &bars.time {
            h.update(t.to_le_bytes());
        }
        for col in [&bars.open, &bars.high, &bars.low, &bars.close] {
            for v in col {
                h.update(v.to_bits().to_le_bytes());
            }
        }
        for c in [&bars.extra[1], &bars.extra[0]] {
            h.update(c.name.as_bytes());
            h.update([0]);
            for v in &c.values {
                let v = if v.is_nan() { f64::NAN } else { *v };
                h.update(v.to_bits().to_le_bytes());
            }
        }
        let want: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(data_hash(&bars), want);
    }

    fn column(name: &str, values: Vec<f64>) -> ExtraColumn {
        ExtraColumn {
            name: name.into(),
            values,
            problem: None,
        }
    }

    /// The columns a run reads are hashed by name, whatever their order
    /// and whatever bits an undefined value carries; their values count.
    #[test]
    fn the_hash_covers_read_columns_by_name_and_value() {
        let bars = synth(50, 3);
        let plain = data_hash(&bars);
        let wave: Vec<f64> = (0..50).map(|i| f64::from(i).sin()).collect();
        let mut gaps = wave.clone();
        gaps[3] = f64::NAN;
        let mut negative_nan = gaps.clone();
        negative_nan[3] = -f64::NAN;
        let with = |columns: Vec<ExtraColumn>| {
            let mut b = bars.clone();
            b.extra = columns;
            data_hash(&b)
        };
        let both = with(vec![column("a", wave.clone()), column("b", gaps.clone())]);
        assert_ne!(both, plain);
        assert_eq!(
            with(vec![column("b", negative_nan), column("a", wave.clone())]),
            both
        );
        let mut moved = wave.clone();
        moved[10] += 1e-12;
        assert_ne!(with(vec![column("a", moved), column("b", gaps)]), both);
        assert_ne!(with(vec![column("a", wave)]), both);
    }
}

#[cfg(test)]
mod informative_tests {
    use std::sync::Arc;

    use super::{config_hash, Study};
    use sieve_core::config::Config;
    use sieve_core::data::{synth, Frames, Informative};

    const RULES: &str = "[strategy]\nname = \"x\"\nentry = \"informative(\\\"lead\\\", close > sma(close, 5))\"\nexit = \"close < sma(close, 5)\"\n";

    fn study_reading(lead_seed: u64) -> Study {
        let mut bars = synth(300, 1);
        bars.frames = Some(Arc::new(Frames {
            informative: vec![Informative {
                name: "lead".into(),
                bars: Arc::new(synth(300, lead_seed)),
            }],
            ..Frames::default()
        }));
        let config = Config::parse(RULES).unwrap();
        Study::new(config, bars, "s".into()).unwrap()
    }

    /// The informative bars are part of the data hash (other bars, another
    /// hash; none, the hash of the bars alone), their paths not part of
    /// the run's identity.
    #[test]
    fn informative_bars_are_hashed_and_their_paths_are_not_identity() {
        let (a, b) = (study_reading(2), study_reading(3));
        assert_ne!(a.data_hash(), b.data_hash());
        assert_eq!(a.data_hash(), study_reading(2).data_hash());
        assert_ne!(a.data_hash(), super::data_hash(&synth(300, 1)));
        let at = |path: &str| {
            let text = format!("{RULES}[data]\ninformative = {{ lead = \"{path}\" }}\n");
            config_hash(&Config::parse(&text).unwrap())
        };
        assert_eq!(at("here/lead.csv"), at("/elsewhere/lead.parquet"));
        let other = format!("{RULES}[data]\nsession_end = \"16:00\"\n");
        assert_ne!(
            at("here/lead.csv"),
            config_hash(&Config::parse(&other).unwrap())
        );
    }
}
