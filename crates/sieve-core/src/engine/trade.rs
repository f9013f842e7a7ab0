//! A backtest's round trips: side, exit reason, and how a trade settles (pnl
//! after fees; return on the capital committed at entry).

/// Long or short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Long,
    Short,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Long => "long",
            Side::Short => "short",
        }
    }
}

/// Why a trade closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReason {
    /// The strategy's exit (a rule `exit`, a built-in's exit signal).
    Rule,
    /// The strategy reversed into the other side.
    Reversal,
    /// A rule strategy's `trailing_stop`.
    TrailingStop,
    /// `strategy.max_bars` reached.
    MaxBars,
    /// The stop level (`stop_loss` / `stop_distance`) was touched.
    StopLoss,
    /// The target level (`take_profit` / `target_distance`) was touched.
    TakeProfit,
    /// A close left equity at or below zero.
    Liquidated,
    /// Still open at the end of the data (marked at the last close).
    End,
    /// The moving stop (`stop_level`) was touched, where it was tighter
    /// than the fixed stop.
    StopLevel,
    /// The trailing stop (`trail_loss` / `trail_distance`, from the best
    /// price since entry) was touched, where it was the tightest.
    Trail,
}

impl ExitReason {
    /// Every reason, in the order of their discriminants (`reason as u8`
    /// indexes it).
    pub const ALL: [ExitReason; 10] = [
        ExitReason::Rule,
        ExitReason::Reversal,
        ExitReason::TrailingStop,
        ExitReason::MaxBars,
        ExitReason::StopLoss,
        ExitReason::TakeProfit,
        ExitReason::Liquidated,
        ExitReason::End,
        ExitReason::StopLevel,
        ExitReason::Trail,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExitReason::Rule => "rule",
            ExitReason::Reversal => "reversal",
            ExitReason::TrailingStop => "trailing_stop",
            ExitReason::MaxBars => "max_bars",
            ExitReason::StopLoss => "stop_loss",
            ExitReason::StopLevel => "stop_level",
            ExitReason::Trail => "trail",
            ExitReason::TakeProfit => "take_profit",
            ExitReason::Liquidated => "liquidated",
            ExitReason::End => "end",
        }
    }
}

/// How a trade was entered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryReason {
    /// At the open after (or the close of) the bar that decided it.
    Signal,
    /// By a stop order (`entry_stop`) inside a bar.
    EntryStop,
    /// By a limit order (`entry_limit`) inside a bar.
    EntryLimit,
    /// Added to a position held (`max_entries`), at the open or close.
    Add,
    /// Added by a stop order.
    AddStop,
    /// Added by a limit order.
    AddLimit,
}

impl EntryReason {
    /// Every reason, in the order of their discriminants.
    pub const ALL: [EntryReason; 6] = [
        EntryReason::Signal,
        EntryReason::EntryStop,
        EntryReason::EntryLimit,
        EntryReason::Add,
        EntryReason::AddStop,
        EntryReason::AddLimit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EntryReason::Signal => "signal",
            EntryReason::EntryStop => "entry_stop",
            EntryReason::EntryLimit => "entry_limit",
            EntryReason::Add => "add",
            EntryReason::AddStop => "add_stop",
            EntryReason::AddLimit => "add_limit",
        }
    }
}

/// One round trip. Prices include slippage; `fees` both fills' fees.
///
/// `pnl` is cash out minus cash in, fees included; `ret` is `pnl` over the
/// capital committed at entry (notional + entry fee). A position still open
/// at the end has `exit_bar = None` and is marked at the last close without
/// exit costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trade {
    pub side: Side,
    pub entry_bar: usize,
    pub entry_price: f64,
    pub exit_bar: Option<usize>,
    pub exit_price: f64,
    pub units: f64,
    pub fees: f64,
    pub pnl: f64,
    pub ret: f64,
    pub exit_reason: ExitReason,
    pub entry_reason: EntryReason,
}

impl Trade {
    /// The trade's maximum adverse and favourable excursions (MAE ≤ 0 ≤
    /// MFE): how far the price went against it and for it, as fractions
    /// of its entry price, by the lows and highs of the bars from its
    /// entry bar to its exit bar (the last bar while open), both included.
    pub fn excursions(&self, bars: &crate::data::Bars) -> (f64, f64) {
        let last = bars.len().saturating_sub(1);
        let end = self.exit_bar.unwrap_or(last).min(last);
        let range = self.entry_bar.min(end)..=end;
        let low = bars.low[range.clone()]
            .iter()
            .fold(f64::INFINITY, |a, &b| a.min(b));
        let high = bars.high[range]
            .iter()
            .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        let e = self.entry_price;
        let (adverse, favourable) = match self.side {
            Side::Long => ((low - e) / e, (high - e) / e),
            Side::Short => ((e - high) / e, (e - low) / e),
        };
        (adverse.min(0.0), favourable.max(0.0))
    }

    pub(crate) fn open(direction: i8, bar: usize, price: f64, units: f64, fee: f64) -> Self {
        Trade {
            side: if direction > 0 {
                Side::Long
            } else {
                Side::Short
            },
            entry_bar: bar,
            entry_price: price,
            exit_bar: None,
            exit_price: f64::NAN,
            units,
            fees: fee,
            pnl: 0.0,
            ret: 0.0,
            exit_reason: ExitReason::End,
            entry_reason: EntryReason::Signal,
        }
    }

    fn settle(&mut self, price: f64, exit_fee: f64) {
        let sign = match self.side {
            Side::Long => 1.0,
            Side::Short => -1.0,
        };
        let entry_fee = self.fees;
        self.exit_price = price;
        self.fees = entry_fee + exit_fee;
        self.pnl = sign * self.units * (price - self.entry_price) - self.fees;
        self.ret = self.pnl / (self.units * self.entry_price + entry_fee);
    }

    pub(crate) fn close(&mut self, bar: usize, price: f64, fee: f64, reason: ExitReason) {
        self.exit_bar = Some(bar);
        self.exit_reason = reason;
        self.settle(price, fee);
    }

    /// Values a still-open trade at `price` (no exit fee, no slippage).
    pub(crate) fn mark(&mut self, price: f64) {
        self.settle(price, 0.0);
    }

    pub fn is_closed(&self) -> bool {
        self.exit_bar.is_some()
    }
}
