//! How the exact engine fills and what it charges: [`Fill`] and
//! [`EngineConfig`] (fees, slippage, lots, cash, leverage).

/// When a target decided on bar t's close is filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// At open[t+1]; a target on the last bar is not filled.
    #[default]
    NextOpen,
    /// At close[t].
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EngineConfig {
    pub fill: Fill,
    /// Fraction of traded notional charged on every fill, taken from cash.
    pub fee: f64,
    /// Buy at p·(1+slippage), sell at p·(1−slippage).
    pub slippage: f64,
    /// Units are rounded down to a multiple of this; 0 = fractional units.
    pub lot_size: f64,
    pub initial_cash: f64,
    /// The largest `strategy.size` a trade may take (a larger one is
    /// capped here).
    pub max_leverage: f64,
    /// How stops and targets meet the strategy's orders.
    pub conventions: Conventions,
}

/// How stops and targets meet the strategy's orders, switch by switch:
/// sieve's own rules by default, or a peer's ([`Conventions::VECTORBT`],
/// [`Conventions::BACKTESTING_PY`]) so that ported research reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conventions {
    /// With `fill = "next_open"`: a trade's stop and target are first
    /// checked on the bar after its fill bar (vectorbt), not on the fill
    /// bar itself from its open on.
    pub stop_from_next_bar: bool,
    /// With `fill = "next_open"`: the order the previous close decided
    /// (an exit, a reversal) fills at the open before the bar's stop and
    /// target are checked (backtesting.py too: its close orders go
    /// first). Off: the stop and target are checked first (from the open
    /// on), as vectorbt does.
    pub exit_before_stop: bool,
    /// On a bar where a stop or target filled, the order the bar would
    /// also fill is dropped: with `fill = "close"` that close's decision,
    /// with `fill = "next_open"` and `exit_before_stop` off the rest of the
    /// previous close's order (a reversal's entry). vectorbt reads no
    /// signal on a stop bar.
    pub drop_orders_on_stop_bar: bool,
    /// The stop is taken whenever the bar reaches it, even where the open
    /// gapped through the target (both peers). Off: a level the open gapped
    /// through fills at the open first.
    pub stop_always_first: bool,
    /// Stops, targets and a trailing stop's peak are measured from the
    /// fill bar's close (vectorbt's `stop_entry_price = "close"`), not
    /// from the fill price.
    pub stop_from_close: bool,
    /// Slippage applies to stop and target fills (off: vectorbt's
    /// `stop_exit_price = "stoplimit"`, filled at the level itself).
    pub stop_slippage: bool,
}

impl Conventions {
    pub const SIEVE: Conventions = Conventions {
        stop_from_next_bar: false,
        exit_before_stop: true,
        drop_orders_on_stop_bar: false,
        stop_always_first: false,
        stop_from_close: false,
        stop_slippage: true,
    };
    /// vectorbt 1.2.0's `from_signals` defaults.
    pub const VECTORBT: Conventions = Conventions {
        stop_from_next_bar: true,
        exit_before_stop: false,
        drop_orders_on_stop_bar: true,
        stop_always_first: true,
        stop_from_close: true,
        stop_slippage: false,
    };
    /// backtesting.py 0.6.6 (`trade_on_close = False`).
    pub const BACKTESTING_PY: Conventions = Conventions {
        stop_from_next_bar: false,
        exit_before_stop: true,
        drop_orders_on_stop_bar: false,
        stop_always_first: true,
        stop_from_close: false,
        stop_slippage: true,
    };
}

impl Conventions {
    /// What a heading says of conventions other than sieve's: the preset's
    /// name, or the switches set differently (`None`: sieve's own).
    pub fn describe(&self) -> Option<String> {
        if *self == Conventions::SIEVE {
            return None;
        }
        if *self == Conventions::VECTORBT {
            return Some("vectorbt".into());
        }
        if *self == Conventions::BACKTESTING_PY {
            return Some("backtesting.py".into());
        }
        let s = Conventions::SIEVE;
        let switches = [
            (
                self.stop_from_next_bar != s.stop_from_next_bar,
                "stop_check = \"next_bar\"",
            ),
            (
                self.exit_before_stop != s.exit_before_stop,
                "exit_before_stop = false",
            ),
            (
                self.drop_orders_on_stop_bar != s.drop_orders_on_stop_bar,
                "stop_bar_orders = \"drop\"",
            ),
            (
                self.stop_always_first != s.stop_always_first,
                "stop_priority = \"stop\"",
            ),
            (
                self.stop_from_close != s.stop_from_close,
                "stop_price_from = \"close\"",
            ),
            (
                self.stop_slippage != s.stop_slippage,
                "stop_slippage = false",
            ),
        ];
        let set: Vec<&str> = switches
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, t)| *t)
            .collect();
        Some(set.join(", "))
    }
}

impl Default for Conventions {
    fn default() -> Self {
        Conventions::SIEVE
    }
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            fill: Fill::NextOpen,
            fee: 0.0,
            slippage: 0.0,
            lot_size: 0.0,
            initial_cash: 10_000.0,
            max_leverage: 1.0,
            conventions: Conventions::SIEVE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Conventions;

    /// Sieve's own say nothing; a preset its name; a mix its switches.
    #[test]
    fn conventions_describe_themselves() {
        assert_eq!(Conventions::SIEVE.describe(), None);
        assert_eq!(
            Conventions::VECTORBT.describe().as_deref(),
            Some("vectorbt")
        );
        assert_eq!(
            Conventions::BACKTESTING_PY.describe().as_deref(),
            Some("backtesting.py")
        );
        let mixed = Conventions {
            stop_slippage: false,
            ..Conventions::SIEVE
        };
        assert_eq!(mixed.describe().as_deref(), Some("stop_slippage = false"));
    }
}
