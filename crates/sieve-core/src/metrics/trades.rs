//! Trade statistics over the trades closed inside a window.

#[derive(Debug, Clone, Copy, Default)]
pub struct TradeStats {
    count: u64,
    wins: u64,
    gross_profit: f64,
    gross_loss: f64,
    sum_ret: f64,
}

impl TradeStats {
    #[inline]
    pub fn push(&mut self, pnl: f64, ret: f64) {
        self.count += 1;
        if pnl > 0.0 {
            self.wins += 1;
            self.gross_profit += pnl;
        } else {
            self.gross_loss -= pnl;
        }
        self.sum_ret += ret;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Winning trades (pnl > 0) / trades; NaN with no trades.
    pub fn win_rate(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.wins as f64 / self.count as f64
        }
    }

    /// Gross profit / gross loss; NaN with no trades, +inf with no loss.
    pub fn profit_factor(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else if self.gross_loss == 0.0 {
            if self.gross_profit > 0.0 {
                f64::INFINITY
            } else {
                f64::NAN
            }
        } else {
            self.gross_profit / self.gross_loss
        }
    }

    /// Mean trade return (pnl over the capital committed at entry).
    pub fn avg_trade(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else {
            self.sum_ret / self.count as f64
        }
    }
}
