// sieve GPU screen: one invocation per combination, f32 on device.
//
// The host decodes every combination of a chunk (grid index → parameters,
// constraints, indicator offsets) exactly as the CPU backend does, and
// uploads per combination: `params` (P floats) and `offs` (K u32: indicator
// offsets into `ind`; for the built-ins, then the first bar the strategy may
// act on). A rule strategy's generated entry point (sieve-core rules/wgsl.rs)
// follows this prelude: `params` then holds its scalar values. Each
// invocation runs the strategy's rule and the exact engine's rules over the
// bars up to the end of the screen window, streaming the window metrics, and
// writes the objective. Mirrors crates/sieve-core (engine, metrics) in f32.

struct Uniforms {
    count: u32,        // combinations in this chunk
    n_params: u32,
    n_offs: u32,
    end: u32,          // bars simulated (end of the screen window)
    win_start: u32,
    fill_close: u32,   // 0: next_open, 1: close
    long_short: u32,
    objective: u32,    // 0 calmar 1 sharpe 2 sortino 3 cagr 4 total_return 5 profit_factor
    min_trades: u32,
    n_bars: u32,       // bars in each column of `bars`
    inner_start: u32,  // the score window inside the screen window (its
    inner_end: u32,    // Sharpe); 0..0 when the two are one
    fee: f32,
    slippage: f32,
    lot_size: f32,
    initial_cash: f32,
    years: f32,
    sqrt_periods: f32,
    max_leverage: f32,
    _pad4: f32,
}

@group(0) @binding(0) var<uniform> u: Uniforms;
@group(0) @binding(1) var<storage, read> bars: array<f32>;   // open[0..n], close[0..n] (rules: then high, low, volume)
@group(0) @binding(2) var<storage, read> ind: array<f32>;
@group(0) @binding(3) var<storage, read> params: array<f32>;
@group(0) @binding(4) var<storage, read> offs: array<u32>;
@group(0) @binding(5) var<storage, read_write> out_score: array<f32>;
@group(0) @binding(6) var<storage, read_write> out_info: array<u32>; // trades | (sharpe undefined << 30) | (nan << 31)
@group(0) @binding(7) var<storage, read_write> out_sharpe: array<f32>; // per-bar Sharpe of the window

struct Sim {
    n_bars: u32,
    cash: f32,
    units: f32,
    pos: i32,
    entry_price: f32,
    entry_fee: f32,
    // window stats
    start_eq: f32,
    prev_eq: f32,
    peak: f32,
    trough: f32,
    max_dd: f32,
    n: f32,
    sum: f32,
    sum_sq: f32,
    down_sq: f32,
    in_n: f32,          // the inner (score) window's returns
    in_sum: f32,
    in_sum_sq: f32,
    trades: u32,
    wins: u32,
    gross_profit: f32,
    gross_loss: f32,
    // Trade management (rule kernels with stops, targets, bar limits, sizes
    // or the trade's state; crates/sieve-core/src/engine/managed.rs).
    intended: i32,      // what the last close decided
    fill_bar: u32,
    liquidated: bool,
    lvl_stop: f32,      // the open trade's levels, when on
    lvl_target: f32,
    stop_on: bool,
    target_on: bool,
    max_bars: f32,      // 0: none
    stop_frac: bool,    // stop_loss (else stop_distance)
    target_frac: bool,  // take_profit (else target_distance)
    p_stop: f32,        // this close's plan for a trade it opens (0: off)
    p_target: f32,
    p_max: f32,
    p_size: f32,        // 0: all equity
}

fn open_at(s: ptr<function, Sim>, t: u32) -> f32 { return bars[t]; }
fn close_at(s: ptr<function, Sim>, t: u32) -> f32 { return bars[(*s).n_bars + t]; }

fn new_sim(n_bars: u32) -> Sim {
    var s: Sim;
    s.n_bars = n_bars;
    s.cash = u.initial_cash;
    s.units = 0.0;
    s.pos = 0;
    s.start_eq = u.initial_cash;
    s.prev_eq = u.initial_cash;
    s.peak = u.initial_cash;
    s.trough = u.initial_cash;
    s.max_dd = 0.0;
    s.n = 0.0;
    s.sum = 0.0;
    s.sum_sq = 0.0;
    s.down_sq = 0.0;
    s.in_n = 0.0;
    s.in_sum = 0.0;
    s.in_sum_sq = 0.0;
    s.trades = 0u;
    s.wins = 0u;
    s.gross_profit = 0.0;
    s.gross_loss = 0.0;
    s.intended = 0;
    s.fill_bar = 0u;
    s.liquidated = false;
    s.stop_on = false;
    s.target_on = false;
    s.max_bars = 0.0;
    s.p_stop = 0.0;
    s.p_target = 0.0;
    s.p_max = 0.0;
    s.p_size = 0.0;
    return s;
}

fn high_at(s: ptr<function, Sim>, t: u32) -> f32 { return bars[2u * (*s).n_bars + t]; }
fn low_at(s: ptr<function, Sim>, t: u32) -> f32 { return bars[3u * (*s).n_bars + t]; }

// Closes what is held, then opens `want` with all equity (the engine's rule).
fn rebalance(s: ptr<function, Sim>, want: i32, p: f32, t: u32) {
    rebalance_sized(s, want, p, t, 1.0);
}

// The same, committing `size` × equity.
fn rebalance_sized(s: ptr<function, Sim>, want: i32, p: f32, t: u32, size: f32) {
    if ((*s).pos != 0) {
        let side = f32((*s).pos);
        let price = p * (1.0 - side * u.slippage);
        let notional = (*s).units * price;
        let fee = notional * u.fee;
        (*s).cash += side * notional - fee;
        let pnl = side * (*s).units * (price - (*s).entry_price) - (*s).entry_fee - fee;
        if (t >= u.win_start && t < u.end) {
            (*s).trades += 1u;
            if (pnl > 0.0) { (*s).wins += 1u; (*s).gross_profit += pnl; } else { (*s).gross_loss -= pnl; }
        }
        (*s).pos = 0;
        (*s).units = 0.0;
    }
    if (want == 0) { return; }
    let equity = (*s).cash;
    if (equity <= 0.0) { return; }
    let price = p * (1.0 + f32(want) * u.slippage);
    var units = size * equity / (price * (1.0 + u.fee));
    if (u.lot_size > 0.0) { units = floor(units / u.lot_size) * u.lot_size; }
    let notional = units * price;
    // As the exact engine: no units, or a cost beyond what the float holds
    // (∞ or NaN compare false), is no trade.
    if (!(units > 0.0 && notional < 3.4e38)) { return; }
    let fee = notional * u.fee;
    (*s).cash -= f32(want) * notional + fee;
    (*s).pos = want;
    (*s).units = units;
    (*s).entry_price = price;
    (*s).entry_fee = fee;
}

// One bar: the fill of the want decided on the previous bar (next_open)
// or this one (close), then the close is marked into the window stats.
fn bar_step(s: ptr<function, Sim>, t: u32, prev_target: i32, want: i32) {
    if (u.fill_close == 1u) {
        if (want != (*s).pos) { rebalance(s, want, close_at(s, t), t); }
    } else if (t > 0u && prev_target != (*s).pos) {
        rebalance(s, prev_target, open_at(s, t), t);
    }
    mark(s, t);
}

// Trade management, steps 1 (the open) and 2 (inside the bar) of bar t:
// whether a stop or target closed the position (the rules are flat then).
fn mg_open(s: ptr<function, Sim>, t: u32) -> bool {
    if ((*s).liquidated) { return false; }
    if (u.fill_close == 0u && t > 0u && (*s).intended != (*s).pos) {
        mg_move(s, (*s).intended, open_at(s, t), t);
    }
    let side = (*s).pos;
    let exposed = select((*s).fill_bar < t, (*s).fill_bar <= t, u.fill_close == 0u);
    if (side == 0 || !exposed) { return false; }
    let o = open_at(s, t);
    let h = high_at(s, t);
    let l = low_at(s, t);
    let st = (*s).lvl_stop;
    let tg = (*s).lvl_target;
    let son = (*s).stop_on;
    let ton = (*s).target_on;
    var hit = false;
    var price = 0.0;
    if (side > 0) {
        if (son && o <= st) { hit = true; price = o; }
        else if (ton && o >= tg) { hit = true; price = o; }
        else if (son && l <= st) { hit = true; price = st; }
        else if (ton && h >= tg) { hit = true; price = tg; }
    } else {
        if (son && o >= st) { hit = true; price = o; }
        else if (ton && o <= tg) { hit = true; price = o; }
        else if (son && h >= st) { hit = true; price = st; }
        else if (ton && l <= tg) { hit = true; price = tg; }
    }
    if (hit) {
        rebalance(s, 0, price, t);
        (*s).intended = 0;
    }
    return hit;
}

// Step 3 (the close) of bar t with the rules' decision `want` and the plan
// in p_*: liquidation, the bar limit, a close fill; returns the position
// the rules hold from here.
fn mg_close(s: ptr<function, Sim>, t: u32, want: i32) -> i32 {
    let c = close_at(s, t);
    if ((*s).liquidated) { mark(s, t); return 0; }
    let side = (*s).pos;
    // Held, or flat after a stop or an open fill that lost more than the
    // equity.
    if ((*s).cash + f32(side) * (*s).units * c <= 0.0) {
        rebalance(s, 0, c, t);
        (*s).cash = max((*s).cash, 0.0);
        (*s).liquidated = true;
        (*s).intended = 0;
        mark(s, t);
        return 0;
    }
    var intended = want;
    if (side != 0 && want == side && (*s).max_bars > 0.0 && f32(t - (*s).fill_bar) >= (*s).max_bars) {
        intended = 0;
    }
    (*s).intended = intended;
    if (u.fill_close == 1u && intended != side) { mg_move(s, intended, c, t); }
    mark(s, t);
    return intended;
}

// Fills the decided position at p on bar t with the plan in p_*.
fn mg_move(s: ptr<function, Sim>, want: i32, p: f32, t: u32) {
    let size = select(1.0, min((*s).p_size, u.max_leverage), (*s).p_size > 0.0);
    rebalance_sized(s, want, p, t, size);
    if ((*s).pos != 0 && want != 0) {
        let e = (*s).entry_price;
        let sign = f32((*s).pos);
        let ds = (*s).p_stop;
        let dt = (*s).p_target;
        (*s).stop_on = ds > 0.0;
        (*s).target_on = dt > 0.0;
        (*s).lvl_stop = select(e - sign * ds, e * (1.0 - sign * ds), (*s).stop_frac);
        (*s).lvl_target = select(e + sign * dt, e * (1.0 + sign * dt), (*s).target_frac);
        (*s).max_bars = (*s).p_max;
        (*s).fill_bar = t;
    }
}

// Marks the close of bar t into the window stats.
fn mark(s: ptr<function, Sim>, t: u32) {
    let e = (*s).cash + f32((*s).pos) * (*s).units * close_at(s, t);
    if (t + 1u == u.win_start) {
        (*s).start_eq = e; (*s).prev_eq = e; (*s).peak = e; (*s).trough = e;
    } else if (t >= u.win_start) {
        let r = e / (*s).prev_eq - 1.0;
        (*s).n += 1.0;
        (*s).sum += r;
        (*s).sum_sq += r * r;
        (*s).down_sq += min(r, 0.0) * min(r, 0.0);
        if (t >= u.inner_start && t < u.inner_end) {
            (*s).in_n += 1.0;
            (*s).in_sum += r;
            (*s).in_sum_sq += r * r;
        }
        if (e > (*s).peak) { (*s).peak = e; (*s).trough = e; }
        else if (e < (*s).trough) { (*s).trough = e; (*s).max_dd = max((*s).max_dd, 1.0 - e / (*s).peak); }
        (*s).prev_eq = e;
    }
}

// The objective; `nan` set where the CPU gives NaN (WGSL does not promise to
// carry NaN, so it travels as a flag).
fn finish(s: ptr<function, Sim>, i: u32) {
    var score = 0.0;
    var nan = false;
    let end_eq = select((*s).start_eq, (*s).prev_eq, (*s).n > 0.0);
    let ratio = end_eq / (*s).start_eq;
    let cagr_ok = u.years > 0.0 && ratio >= 0.0;
    let cagr = pow(max(ratio, 0.0), 1.0 / u.years) - 1.0;
    let mean = (*s).sum / max((*s).n, 1.0);
    let var_ = max((*s).sum_sq - (*s).sum * (*s).sum / max((*s).n, 1.0), 0.0) / max((*s).n - 1.0, 1.0);
    switch u.objective {
        case 0u: { score = cagr / (*s).max_dd; nan = !cagr_ok || (*s).max_dd == 0.0; }
        case 1u: { score = mean / sqrt(var_) * u.sqrt_periods; nan = (*s).n < 2.0 || var_ == 0.0; }
        case 2u: { score = mean / sqrt((*s).down_sq / max((*s).n, 1.0)) * u.sqrt_periods; nan = (*s).n == 0.0 || (*s).down_sq == 0.0; }
        case 3u: { score = cagr; nan = !cagr_ok; }
        case 4u: { score = ratio - 1.0; }
        default: {
            score = (*s).gross_profit / (*s).gross_loss;
            nan = (*s).trades == 0u || ((*s).gross_loss == 0.0 && (*s).gross_profit == 0.0);
            if ((*s).trades > 0u && (*s).gross_loss == 0.0 && (*s).gross_profit > 0.0) { score = 3.0e38; }
        }
    }
    if ((*s).trades < u.min_trades) { nan = true; }
    out_score[i] = score;
    // The Deflated Sharpe's trials: mean / std of the score window's
    // returns (the screen window's when the two are one).
    let inner = u.inner_end > 0u;
    let n = select((*s).n, (*s).in_n, inner);
    let sum = select((*s).sum, (*s).in_sum, inner);
    let sum_sq = select((*s).sum_sq, (*s).in_sum_sq, inner);
    let t_mean = sum / max(n, 1.0);
    let t_var = max(sum_sq - sum * sum / max(n, 1.0), 0.0) / max(n - 1.0, 1.0);
    let sharpe_ok = n >= 2.0 && t_var > 0.0;
    out_sharpe[i] = select(0.0, t_mean / sqrt(t_var), sharpe_ok);
    out_info[i] = min((*s).trades, 0x3fffffffu) | select(0u, 1u << 30u, !sharpe_ok) | select(0u, 1u << 31u, nan);
}

fn n_bars_total() -> u32 { return u.n_bars; }

// sma_cross / ema_cross: offs = [fast, slow, start].
@compute @workgroup_size(64)
fn cross(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u.count) { return; }
    let fo = offs[i * u.n_offs];
    let so = offs[i * u.n_offs + 1u];
    let start = offs[i * u.n_offs + 2u];
    var s = new_sim(n_bars_total());
    var position = 0;
    var last_side = 0;
    var prev = 0;
    for (var t = 0u; t < u.end; t++) {
        if (t >= start) {
            let f = ind[fo + t];
            let sl = ind[so + t];
            let side = select(0, 1, f > sl) - select(0, 1, f < sl);
            if (side != 0 && side != last_side) {
                let enter = side > 0 && last_side < 0;
                let exit = side < 0 && last_side > 0;
                if (u.long_short == 1u) {
                    if (enter && position != 1) { position = 1; } else if (exit && position != -1) { position = -1; }
                } else {
                    if (position == 0 && enter) { position = 1; } else if (position == 1 && exit) { position = 0; }
                }
                last_side = side;
            }
        }
        bar_step(&s, t, prev, position);
        prev = position;
    }
    finish(&s, i);
}

// activation: params as the strategy's order; offs = [trend, momentum,
// breakout, atr, start].
@compute @workgroup_size(64)
fn activation(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= u.count) { return; }
    let pb = i * u.n_params;
    let w_trend = params[pb + 4u];
    let w_rsi = params[pb + 5u];
    let w_dc = params[pb + 6u];
    let w_sum = w_trend + w_rsi + w_dc;
    var entry = params[pb + 7u];
    var exit = params[pb + 8u];
    if (w_sum != 0.0) { entry *= w_sum; exit *= w_sum; }
    let stop_atr = params[pb + 9u];
    let ob = i * u.n_offs;
    let to = offs[ob];
    let mo = offs[ob + 1u];
    let bo = offs[ob + 2u];
    let ao = offs[ob + 3u];
    let start = offs[ob + 4u];
    let shorts = u.long_short == 1u;
    var s = new_sim(n_bars_total());
    var position = 0;
    var extreme = 0.0;
    var prev = 0;
    for (var t = 0u; t < u.end; t++) {
        if (t >= start) {
            let c = close_at(&s, t);
            let score = w_trend * ind[to + t] + w_rsi * ind[mo + t] + w_dc * ind[bo + t];
            let atr = ind[ao + t];
            if (position == 1) {
                extreme = max(extreme, c);
                if (shorts && score <= -entry) { position = -1; extreme = c; }
                else if (score <= exit || (stop_atr > 0.0 && c < extreme - stop_atr * atr)) { position = 0; }
            } else if (position == -1) {
                extreme = min(extreme, c);
                if (score >= entry) { position = 1; extreme = c; }
                else if (score >= -exit || (stop_atr > 0.0 && c > extreme + stop_atr * atr)) { position = 0; }
            } else {
                if (score >= entry) { position = 1; extreme = c; }
                else if (shorts && score <= -entry) { position = -1; extreme = c; }
            }
        }
        bar_step(&s, t, prev, position);
        prev = position;
    }
    finish(&s, i);
}
