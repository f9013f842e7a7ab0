//! Which column is which: names in any case, with the aliases exporters use.
//! The same rules for every file format.

use crate::data::validate::{Validator, PRICE_NAMES};
use crate::data::LoadOptions;

/// Names of a time column (any case).
pub const TIME_NAMES: [&str; 5] = ["date", "datetime", "time", "timestamp", "open_time"];
/// Names of an adjusted-close column (Yahoo's `Adj Close` and its kin).
pub(crate) const ADJ_CLOSE_NAMES: [&str; 5] = [
    "adj close",
    "adj_close",
    "adjclose",
    "adjusted_close",
    "adjusted close",
];
/// Names of a volume column, preferred first (MetaTrader writes `<TICKVOL>`
/// and `<VOL>`, the latter often all zero for currencies).
pub(crate) const VOLUME_NAMES: [&str; 4] = ["volume", "tickvol", "tick_volume", "vol"];
/// pandas' name for an unnamed index written to Parquet or Feather.
const PANDAS_INDEX: &str = "__index_level_0__";

/// A column name as compared: trimmed, lower case, MetaTrader's `<…>` dropped.
fn column_name(h: &str) -> String {
    extra_name(h).to_lowercase()
}

/// A column name as rules read it: trimmed, MetaTrader's `<…>` dropped.
pub(crate) fn extra_name(h: &str) -> &str {
    let h = h.trim();
    h.strip_prefix('<')
        .and_then(|x| x.strip_suffix('>'))
        .unwrap_or(h)
}

/// What a column the loader reads itself is, by its name: messages say so
/// when a rule asks for it by `col("…")`.
pub fn column_role(name: &str) -> Option<&'static str> {
    let n = column_name(name);
    if TIME_NAMES.contains(&n.as_str()) || n == PANDAS_INDEX {
        Some(
            "the data's time (rules read it through hour, minute, weekday, day, month and new_day)",
        )
    } else if ADJ_CLOSE_NAMES.contains(&n.as_str()) {
        Some("the data's adjusted close (data.adjust = true scales the prices by it)")
    } else if VOLUME_NAMES.contains(&n.as_str()) {
        Some("the data's volume (rules read it as volume)")
    } else if PRICE_NAMES.contains(&n.as_str()) {
        Some("one of the data's prices (rules read it as open, high, low or close)")
    } else {
        None
    }
}

/// Positions of the columns the loader reads.
#[derive(Debug, Clone)]
pub(crate) struct Columns {
    pub time: usize,
    /// A separate clock-time column joined to a `date` column (MetaTrader).
    pub clock: Option<usize>,
    pub price: [usize; 4],
    /// Only a close (or price) column: open, high and low read it too.
    pub close_only: bool,
    pub volume: Option<usize>,
    pub adj_close: Option<usize>,
    /// Every other named column, in file order: values rules may read
    /// (after [`Columns::choose_extra`], those the options ask for).
    pub extra: Vec<usize>,
    /// The other columns' names not read.
    pub unread: Vec<String>,
}

impl Columns {
    /// Every position read, in no particular order.
    pub fn all(&self) -> Vec<usize> {
        let mut all = vec![self.time];
        all.extend(self.clock);
        all.extend(self.price);
        all.extend(self.volume);
        all.extend(self.adj_close);
        all.extend(&self.extra);
        all
    }
}

impl Columns {
    /// Checks `data.adjust` against the columns found, and says when an
    /// adjusted close is present but unused. `names` as written.
    pub fn notices(&self, names: &[&str], options: &LoadOptions) -> Result<Vec<String>, String> {
        if options.adjust && self.adj_close.is_none() {
            return Err(format!(
                "{} = true needs an adjusted-close column (Adj Close, adj_close, adjclose or adjusted_close); found: {}",
                crate::key::DATA_ADJUST,
                names.join(", ")
            ));
        }
        let mut notes = Vec::new();
        if self.close_only {
            notes.push(format!(
                "note: only one price column ('{}'): open, high and low are taken to equal it, so a fill at the next open fills at the next bar's close, and stops and targets trigger on closes only",
                names[self.price[3]].trim()
            ));
        }
        if let (Some(col), false) = (self.adj_close, options.adjust) {
            notes.push(format!(
                "note: column '{}' (adjusted close) is ignored: prices are used as written; set data.adjust = true to scale open/high/low/close by adj_close/close",
                names[col].trim()
            ));
        }
        Ok(notes)
    }

    /// Keeps in [`Columns::extra`] the other columns the options ask for
    /// (so a columnar reader projects no more), naming the rest unread.
    pub fn choose_extra(&mut self, names: &[&str], options: &LoadOptions) {
        let wanted = |c: &usize| {
            let name = extra_name(names[*c]);
            options
                .extra
                .as_ref()
                .is_none_or(|w| w.iter().any(|n| n == name))
        };
        let (read, unread): (Vec<usize>, Vec<usize>) = self.extra.iter().copied().partition(wanted);
        self.extra = read;
        self.unread = unread
            .iter()
            .map(|&c| extra_name(names[c]).to_string())
            .collect();
    }

    /// A validator for rows of these columns; `place` names a row in
    /// messages.
    pub fn validator(
        &self,
        place: &'static str,
        names: &[&str],
        options: &LoadOptions,
    ) -> Validator {
        let adj_name = self.adj_close.map_or("", |c| names[c].trim());
        let extra = self.extra.iter().map(|&c| extra_name(names[c])).collect();
        let volume = self.volume.is_some();
        let unread = self.unread.clone();
        Validator::new(place, options.adjust, adj_name, volume, extra, unread)
    }
}

/// Finds the columns among `header` (names as written). The error says what
/// is missing or ambiguous and lists what was found.
pub(crate) fn find_columns<S: AsRef<str>>(header: &[S]) -> Result<Columns, String> {
    let names: Vec<String> = header.iter().map(|h| column_name(h.as_ref())).collect();
    for (i, n) in names.iter().enumerate() {
        let wanted =
            TIME_NAMES.contains(&n.as_str()) || PRICE_NAMES.contains(&n.as_str()) || n == "volume";
        if wanted && names[..i].contains(n) {
            return Err(format!(
                "column '{n}' appears twice; which one is meant is ambiguous"
            ));
        }
    }
    let find = |want: &str| names.iter().position(|n| n == want);
    let adj_close = ADJ_CLOSE_NAMES.iter().find_map(|n| find(n));
    let time = TIME_NAMES
        .iter()
        .find_map(|n| find(n))
        .or_else(|| find(PANDAS_INDEX))
        // pandas writes its index to CSV as an unnamed first column.
        .or_else(|| (names.first().map(String::as_str) == Some("")).then_some(0));
    let mut missing: Vec<&str> = Vec::new();
    if time.is_none() {
        missing.push("a time column (date, datetime, time, timestamp or open_time)");
    }
    let mut price = [0; 4];
    let [open, high, low, close] = PRICE_NAMES.map(find);
    // Close-only data (many downloads): one price column is all four.
    let single = match (open, high, low, close) {
        (None, None, None, Some(c)) => Some(c),
        (None, None, None, None) => find("price"),
        _ => None,
    };
    match single {
        Some(c) => price = [c; 4],
        None => {
            for ((slot, name), found) in price
                .iter_mut()
                .zip(PRICE_NAMES)
                .zip([open, high, low, close])
            {
                match found {
                    Some(i) => *slot = i,
                    None => missing.push(name),
                }
            }
        }
    }
    if !missing.is_empty() {
        let found: Vec<&str> = header.iter().map(AsRef::as_ref).collect();
        return Err(format!(
            "missing column(s) {}; found: {}",
            missing.join(", "),
            found.join(", ")
        ));
    }
    let time = time.unwrap_or_default();
    let clock = find("time").filter(|&c| names[time] == "date" && c != time);
    let mut columns = Columns {
        time,
        clock,
        price,
        close_only: single.is_some(),
        volume: VOLUME_NAMES.iter().find_map(|n| find(n)),
        adj_close,
        extra: Vec::new(),
        unread: Vec::new(),
    };
    let read = columns.all();
    columns.extra = (0..names.len())
        .filter(|i| !read.contains(i) && !names[*i].is_empty() && names[*i] != PANDAS_INDEX)
        .collect();
    Ok(columns)
}
