//! Higher timeframes: bars resampled to `15m`, `1h`, `4h`, `1d`, `1w` or
//! `1M` bars on the clock of `data.timezone`, and when each higher bar's
//! value becomes visible on the base bars — never before the higher bar has
//! ended.
//!
//! A higher bar holds the base bars whose open time falls in it: open =
//! the first one's open, high = the highest high, low = the lowest low,
//! close = the last close, volume = the sum. Bars are stamped at their
//! open, so a base bar's close time is its open plus the bar length (given,
//! or the most common spacing: the next bar's time would be look-ahead). A
//! higher bar is visible from the first base bar whose close is at or after
//! the higher bar's end and which comes after every base bar of it.
//!
//! Days start at midnight, or at `day_start` (at noon or later: a session
//! that starts the evening before its date, e.g. 17:00), on the local clock; intraday bins (a length
//! that divides a day) are that much elapsed time from the first bar's day
//! start, as pandas' `resample(…, origin="start_day")` counts them (across
//! a clock change they keep their length and shift on the local clock);
//! weeks start on `week_start`; with `session_end`, a day ends at that
//! local time (a stock's 16:00), so its last bar sees the day's value.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, TimeZone, Weekday};
use chrono_tz::Tz;

use super::time::typical_spacing;
use super::Bars;

/// A higher bar's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timeframe {
    /// `n` minutes, dividing a day (`15m`, `1h` = 60, `4h` = 240).
    Minutes(u32),
    /// `1d`.
    Day,
    /// `1w`.
    Week,
    /// `1M`.
    Month,
}

const MINUTES_PER_DAY: u32 = 24 * 60;

impl Timeframe {
    /// `15m`, `1h`, `4h`, `1d`, `1w`, `1M` (minutes and hours: any count
    /// that divides a day).
    pub fn parse(text: &str) -> Result<Timeframe, String> {
        let t = text.trim();
        let bad = || {
            format!("\"{t}\": expected a timeframe such as \"15m\", \"1h\", \"4h\", \"1d\", \"1w\" or \"1M\"")
        };
        let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (count, unit) = t.split_at(split);
        let n: u32 = count.parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(bad());
        }
        let minutes = match unit {
            "m" | "min" => n,
            "h" => n.checked_mul(60).ok_or_else(bad)?,
            "d" | "w" | "M" if n != 1 => {
                return Err(format!(
                    "\"{t}\": days, weeks and months come one at a time (\"1d\", \"1w\", \"1M\")"
                ))
            }
            "d" => return Ok(Timeframe::Day),
            "w" => return Ok(Timeframe::Week),
            "M" => return Ok(Timeframe::Month),
            _ => return Err(bad()),
        };
        if minutes > MINUTES_PER_DAY || !MINUTES_PER_DAY.is_multiple_of(minutes) {
            return Err(format!(
                "\"{t}\": an intraday timeframe must divide a day (e.g. 5m, 15m, 1h, 4h, 12h)"
            ));
        }
        Ok(match minutes {
            MINUTES_PER_DAY => Timeframe::Day,
            m => Timeframe::Minutes(m),
        })
    }
}

/// How days, weeks and sessions fall on the data's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calendar {
    /// `data.timezone` (`None`: UTC).
    pub zone: Option<Tz>,
    /// The first day of a week.
    pub week_start: Weekday,
    /// Minutes after local midnight at which a day starts (0: midnight).
    pub day_start: u32,
    /// Minutes after local midnight at which a day's session ends, where
    /// the data says so: a day (and a week's, a month's last day) ends
    /// then, not at the next day's start.
    pub session_end: Option<u32>,
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar {
            zone: None,
            week_start: Weekday::Mon,
            day_start: 0,
            session_end: None,
        }
    }
}

/// The calendar `bars` fall on: their zone and their frames' days.
pub fn calendar_of(bars: &Bars) -> Calendar {
    let f = bars.frames.as_deref();
    Calendar {
        zone: bars.timezone,
        week_start: f.map_or(Weekday::Mon, |f| f.week_start),
        day_start: f.map_or(0, |f| f.day_start),
        session_end: f.and_then(|f| f.session_end),
    }
}

/// The length of `bars` (ms): their frames' `bar`, else their most common
/// spacing.
pub fn length_of(bars: &Bars) -> i64 {
    bar_length(&bars.time, bars.frames.as_ref().and_then(|f| f.bar))
}

/// Base bars resampled to a higher timeframe.
#[derive(Debug, Clone, PartialEq)]
pub struct Resampled {
    /// The higher bars, stamped at their bucket's start.
    pub bars: Bars,
    /// Each higher bar's end (Unix ms): its value is known from then on.
    pub end: Vec<i64>,
    /// Each higher bar's last base bar.
    pub last: Vec<usize>,
}

impl Calendar {
    fn local(&self, ms: i64) -> Option<NaiveDateTime> {
        let utc = chrono::DateTime::from_timestamp_millis(ms)?;
        Some(match self.zone {
            Some(z) => utc.with_timezone(&z).naive_local(),
            None => utc.naive_utc(),
        })
    }

    /// A local time as Unix ms: the earlier of an ambiguous time (a
    /// clock set back), and for a time the clock skipped, the first time
    /// after the gap.
    fn utc(&self, local: NaiveDateTime) -> i64 {
        let Some(z) = self.zone else {
            return local.and_utc().timestamp_millis();
        };
        let mut t = local;
        for _ in 0..8 {
            if let Some(d) = z.from_local_datetime(&t).earliest() {
                return d.timestamp_millis();
            }
            t += Duration::minutes(15);
        }
        local.and_utc().timestamp_millis()
    }

    /// Where a day starts, in minutes from its date's midnight: a day
    /// starting at noon or later opens the evening before its date (a
    /// 17:00 session is the next date's, as exchanges date it).
    fn day_offset(&self) -> i64 {
        let start = i64::from(self.day_start);
        match start >= 12 * 60 {
            true => start - 24 * 60,
            false => start,
        }
    }

    /// The trading day a local time belongs to (days start at `day_start`).
    fn day_of(&self, local: NaiveDateTime) -> NaiveDate {
        (local - Duration::minutes(self.day_offset())).date()
    }

    /// `minutes` after the start of `day`.
    fn at(&self, day: NaiveDate, minutes: u32) -> NaiveDateTime {
        day.and_time(chrono::NaiveTime::MIN)
            + Duration::minutes(self.day_offset() + i64::from(minutes))
    }

    /// When the session of `day` ends (its next day's start without
    /// `session_end`).
    fn day_end(&self, day: NaiveDate) -> NaiveDateTime {
        let next = self.at(day + Duration::days(1), 0);
        match self.session_end {
            // The first such time after the day's start (a session
            // starting 17:00 the evening before ends on the next date).
            Some(end) => {
                let mut t =
                    day.and_time(chrono::NaiveTime::MIN) + Duration::minutes(i64::from(end));
                while t <= self.at(day, 0) {
                    t += Duration::days(1);
                }
                t.min(next)
            }
            None => next,
        }
    }

    /// Where intraday bins are counted from for bars starting at `first`
    /// (ms): the start of its day, as pandas' `origin="start_day"`.
    pub fn origin(&self, first: i64) -> Option<i64> {
        let day = self.day_of(self.local(first)?);
        Some(self.utc(self.at(day, 0)))
    }

    /// The bucket of the base bar opening at `ms`: its start and end (ms).
    /// Intraday bins are `n` minutes of elapsed time from `origin` (see
    /// [`Calendar::origin`]), so across a clock change they keep their
    /// length and shift on the local clock, as pandas' are; days, weeks and
    /// months follow the local calendar.
    pub fn bucket(&self, ms: i64, tf: Timeframe, origin: i64) -> Option<(i64, i64)> {
        let day = self.day_of(self.local(ms)?);
        let (start, end) = match tf {
            Timeframe::Minutes(n) => {
                let n = i64::from(n) * 60_000;
                let start = origin + (ms - origin).div_euclid(n) * n;
                return Some((start, start + n));
            }
            Timeframe::Day => (self.at(day, 0), self.day_end(day)),
            Timeframe::Week => {
                let back = (7 + day.weekday().num_days_from_monday()
                    - self.week_start.num_days_from_monday())
                    % 7;
                let first = day - Duration::days(i64::from(back));
                (self.at(first, 0), self.day_end(first + Duration::days(6)))
            }
            Timeframe::Month => {
                let first = day.with_day(1)?;
                let next = match first.month() {
                    12 => NaiveDate::from_ymd_opt(first.year() + 1, 1, 1)?,
                    m => NaiveDate::from_ymd_opt(first.year(), m + 1, 1)?,
                };
                (self.at(first, 0), self.day_end(next - Duration::days(1)))
            }
        };
        Some((self.utc(start), self.utc(end)))
    }

    /// Whether `ms` is after its day's session end (and before the next
    /// day's start).
    fn after_session(&self, ms: i64) -> bool {
        let Some(local) = self.local(ms) else {
            return false;
        };
        self.session_end.is_some() && local >= self.day_end(self.day_of(local))
    }

    /// The bucket after `bucket` (a session's end is not the next day's
    /// start: the next bucket starts on the next day).
    fn following(&self, bucket: (i64, i64), tf: Timeframe, origin: i64) -> Option<(i64, i64)> {
        let next = self.bucket(bucket.1, tf, origin)?;
        if next.0 > bucket.0 {
            return Some(next);
        }
        let day = self.day_of(self.local(bucket.1)?) + Duration::days(1);
        let next = self.bucket(self.utc(self.at(day, 0)), tf, origin)?;
        (next.0 > bucket.0).then_some(next)
    }
}

/// `bars` (each `length` ms long) resampled to `tf` on `calendar`'s clock.
/// A higher bar is complete once a base bar has closed at or after its
/// end; a base bar that opens in it after that (bars closer together than
/// `length`, or a bar after a session's end) counts in the next one, so
/// that what a base bar sees never depends on a later bar. Bars whose time
/// is out of the calendar's range (never in loaded data) are left out.
pub fn resample(bars: &Bars, tf: Timeframe, calendar: &Calendar, length: i64) -> Resampled {
    let volume = bars.volume.as_ref().map(|_| Vec::new());
    let mut out = Bars {
        timezone: bars.timezone,
        ..Bars::new(Vec::new(), Default::default(), volume)
    };
    let (mut end, mut last) = (Vec::new(), Vec::new());
    let origin = bars
        .time
        .first()
        .and_then(|&t| calendar.origin(t))
        .unwrap_or(0);
    // The latest close so far: higher bars ending by then are complete.
    let mut closed = i64::MIN;
    // The last bucket found on the calendar: the bars in it need no
    // clock arithmetic (days, weeks and months cost one lookup each).
    let mut known: Option<(i64, i64)> = None;
    for i in 0..bars.len() {
        let ms = bars.time[i];
        let natural = match known.filter(|&(a, b)| a <= ms && ms < b) {
            Some(b) => b,
            None => match calendar.bucket(ms, tf, origin) {
                Some(b) => b,
                None => continue,
            },
        };
        known = Some(natural);
        // With a session end, a bar after it (after-hours) is in no day,
        // week or month: they hold the sessions.
        let after_session = calendar.session_end.is_some()
            && match tf {
                Timeframe::Minutes(_) => false,
                Timeframe::Day => ms >= natural.1,
                Timeframe::Week | Timeframe::Month => calendar.after_session(ms),
            };
        if after_session {
            continue;
        }
        let mut bucket = natural;
        while bucket.1 <= closed.max(ms) {
            match calendar.following(bucket, tf, origin) {
                Some(next) => bucket = next,
                None => break,
            }
        }
        closed = closed.max(ms.saturating_add(length));
        let (start, stop) = bucket;
        if out.time.last() != Some(&start) {
            out.time.push(start);
            out.open.push(bars.open[i]);
            out.high.push(bars.high[i]);
            out.low.push(bars.low[i]);
            out.close.push(bars.close[i]);
            if let (Some(v), Some(src)) = (&mut out.volume, &bars.volume) {
                v.push(src[i]);
            }
            end.push(stop);
            last.push(i);
            continue;
        }
        let k = out.time.len() - 1;
        out.high[k] = out.high[k].max(bars.high[i]);
        out.low[k] = out.low[k].min(bars.low[i]);
        out.close[k] = bars.close[i];
        if let (Some(v), Some(src)) = (&mut out.volume, &bars.volume) {
            v[k] += src[i];
        }
        last[k] = i;
    }
    Resampled {
        bars: out,
        end,
        last,
    }
}

/// The length of the bars: `given` (ms), else their most common spacing.
pub fn bar_length(time: &[i64], given: Option<i64>) -> i64 {
    given.unwrap_or_else(|| typical_spacing(time))
}

/// For each base bar (opening at `time`, `length` ms long), the higher
/// bar it sees of those ending at `ends` (a [`Resampled::end`], or another
/// instrument's bars' closes): the last one that has ended by the base
/// bar's close (`None` before the first).
pub fn visible(time: &[i64], length: i64, ends: &[i64]) -> Vec<Option<usize>> {
    let mut k = 0; // higher bars 0..k have ended by this base bar's close
    time.iter()
        .map(|&open| {
            let close = open.saturating_add(length);
            while k < ends.len() && ends[k] <= close {
                k += 1;
            }
            k.checked_sub(1)
        })
        .collect()
}

/// Values of the higher bars (`values[k]` of higher bar k) on the base
/// bars, each as of its visible higher bar (NaN before the first).
pub fn as_of(values: &[f64], visible: &[Option<usize>]) -> Vec<f64> {
    visible
        .iter()
        .map(|v| v.and_then(|k| values.get(k).copied()).unwrap_or(f64::NAN))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;

    fn ms(text: &str) -> i64 {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M")
            .unwrap()
            .and_utc()
            .timestamp_millis()
    }

    /// Bars at `times`, each bar's prices i + 1 (open), i + 2 (high),
    /// i (low), i + 1.5 (close), volume 10.
    fn bars(times: Vec<i64>) -> Bars {
        let n = times.len();
        let f = |d: f64| (0..n).map(|i| i as f64 + d).collect::<Vec<_>>();
        Bars::new(times, [f(1.0), f(2.0), f(0.0), f(1.5)], Some(vec![10.0; n]))
    }

    #[test]
    fn timeframes_parse_and_odd_ones_are_refused() {
        assert_eq!(Timeframe::parse("4h"), Ok(Timeframe::Minutes(240)));
        assert_eq!(Timeframe::parse("15m"), Ok(Timeframe::Minutes(15)));
        assert_eq!(Timeframe::parse("24h"), Ok(Timeframe::Day));
        assert_eq!(Timeframe::parse("1w"), Ok(Timeframe::Week));
        assert_eq!(Timeframe::parse("1M"), Ok(Timeframe::Month));
        assert!(Timeframe::parse("7h").unwrap_err().contains("divide a day"));
        assert!(Timeframe::parse("2d")
            .unwrap_err()
            .contains("one at a time"));
        assert!(Timeframe::parse("0h").is_err() && Timeframe::parse("h").is_err());
    }

    /// Six-hourly bars over two UTC days, the second missing its 06:00 bar:
    /// daily bars by hand, and each day's value seen from the next day's
    /// first bar (its close, 06:00, is after the day's end, midnight).
    #[test]
    fn days_by_hand_and_seen_from_the_next_day() {
        let t = vec![
            ms("2024-03-04 00:00"),
            ms("2024-03-04 06:00"),
            ms("2024-03-04 12:00"),
            ms("2024-03-04 18:00"),
            ms("2024-03-05 00:00"),
            ms("2024-03-05 12:00"),
            ms("2024-03-05 18:00"),
        ];
        let b = bars(t.clone());
        let r = resample(&b, Timeframe::Day, &Calendar::default(), 6 * HOUR);
        assert_eq!(
            r.bars.time,
            [ms("2024-03-04 00:00"), ms("2024-03-05 00:00")]
        );
        assert_eq!(r.bars.open, [1.0, 5.0]);
        assert_eq!(r.bars.high, [5.0, 8.0]);
        assert_eq!(r.bars.low, [0.0, 4.0]);
        assert_eq!(r.bars.close, [4.5, 7.5]);
        assert_eq!(r.bars.volume, Some(vec![40.0, 30.0]));
        assert_eq!(r.end, [ms("2024-03-05 00:00"), ms("2024-03-06 00:00")]);
        let length = bar_length(&t, None);
        assert_eq!(length, 6 * HOUR);
        let v = visible(&t, length, &r.end);
        assert_eq!(v, [None, None, None, Some(0), Some(0), Some(0), Some(1)]);
        // The last bar of a day closes at midnight: its day's close is its
        // own, known at its close.
        assert_eq!(as_of(&r.bars.close, &v)[3], 4.5);
    }

    /// A stock's 5-minute bars 09:30–16:00: without a session end a day is
    /// seen from the next day's first bar; with `session_end` 16:00, from
    /// the day's own last bar (09:30–15:55 opens; its close is 16:00).
    #[test]
    fn a_session_end_shows_the_day_on_its_last_bar() {
        let mut t = Vec::new();
        for day in ["2024-03-04", "2024-03-05"] {
            let open = ms(&format!("{day} 09:30"));
            t.extend((0..78).map(|k| open + k * 300_000));
        }
        let b = bars(t.clone());
        let plain = Calendar::default();
        let r = resample(&b, Timeframe::Day, &plain, 300_000);
        let v = visible(&t, 300_000, &r.end);
        assert_eq!(v[77], None);
        assert_eq!(v[78], Some(0));
        let stock = Calendar {
            session_end: Some(16 * 60),
            ..plain
        };
        let r = resample(&b, Timeframe::Day, &stock, 300_000);
        assert_eq!(r.end[0], ms("2024-03-04 16:00"));
        let v = visible(&t, 300_000, &r.end);
        assert_eq!((v[76], v[77]), (None, Some(0)));
        assert_eq!(v[155], Some(1));
        // After-hours bars (16:00–17:55) are in no day: each day opens at
        // 09:30 and closes at 15:55; they still see the day that ended.
        let mut t = Vec::new();
        for day in ["2024-03-04", "2024-03-05"] {
            let open = ms(&format!("{day} 09:30"));
            t.extend((0..102).map(|k| open + k * 300_000));
        }
        let r = resample(&bars(t.clone()), Timeframe::Day, &stock, 300_000);
        assert_eq!(r.bars.time.len(), 2);
        assert_eq!((r.bars.open[1], r.last[0], r.last[1]), (103.0, 77, 179));
        let w = resample(&bars(t.clone()), Timeframe::Week, &stock, 300_000);
        assert_eq!((w.bars.time.len(), w.last[0]), (1, 179));
        let v = visible(&t, 300_000, &r.end);
        assert_eq!((v[77], v[100], v[102]), (Some(0), Some(0), Some(0)));
    }

    /// Hourly bars across New York's spring-forward (2024-03-10, 02:00 →
    /// 03:00): 4-hour bins are 4 hours of elapsed time from the first day's
    /// local midnight (as pandas' `resample("4h", origin="start_day")`:
    /// 00:00 EST, then 05:00, 09:00 … EDT); the day that lost an hour still
    /// ends at the next local midnight.
    #[test]
    fn bins_follow_the_local_clock_across_a_clock_change() {
        let ny: Tz = "America/New_York".parse().unwrap();
        let cal = Calendar {
            zone: Some(ny),
            ..Calendar::default()
        };
        // Local midnight of 10 March is 05:00 UTC (EST, −5).
        let t: Vec<i64> = (0..30).map(|h| ms("2024-03-10 05:00") + h * HOUR).collect();
        let r = resample(&bars(t.clone()), Timeframe::Minutes(240), &cal, HOUR);
        // The first bin holds local 00, 01, 03 and 04 (02:00 never
        // happened) and ends 4 hours after it began: 05:00 EDT.
        assert_eq!(r.bars.time[0], ms("2024-03-10 05:00"));
        assert_eq!(r.end[0], ms("2024-03-10 09:00"));
        assert_eq!(r.last[0], 3);
        assert_eq!(r.bars.time[1], ms("2024-03-10 09:00"));
        let d = resample(&bars(t), Timeframe::Day, &cal, HOUR);
        assert_eq!(d.end[0], ms("2024-03-11 04:00"), "local midnight in EDT");
        assert_eq!(d.last[0], 22, "a day of 23 hours");
    }

    #[test]
    fn weeks_start_where_told_and_months_on_the_first() {
        // Daily bars from Friday 2024-03-01 to Tuesday 2024-04-02.
        let t: Vec<i64> = (0..33)
            .map(|d| ms("2024-03-01 00:00") + d * 24 * HOUR)
            .collect();
        let monday = resample(
            &bars(t.clone()),
            Timeframe::Week,
            &Calendar::default(),
            24 * HOUR,
        );
        assert_eq!(
            monday.bars.time[0],
            ms("2024-02-26 00:00"),
            "partial first week"
        );
        assert_eq!(monday.bars.time[1], ms("2024-03-04 00:00"));
        assert_eq!(monday.last[0], 2, "Friday to Sunday");
        let sunday = Calendar {
            week_start: Weekday::Sun,
            ..Calendar::default()
        };
        let r = resample(&bars(t.clone()), Timeframe::Week, &sunday, 24 * HOUR);
        assert_eq!(r.bars.time[1], ms("2024-03-03 00:00"));
        let m = resample(&bars(t), Timeframe::Month, &Calendar::default(), 24 * HOUR);
        assert_eq!(
            m.bars.time,
            [ms("2024-03-01 00:00"), ms("2024-04-01 00:00")]
        );
        assert_eq!(m.end[0], ms("2024-04-01 00:00"));
        assert_eq!(m.last[0], 30);
    }

    #[test]
    fn a_day_that_starts_the_evening_before() {
        // A session from 17:00 to 17:00: a bar at 18:00 on Monday belongs
        // to Tuesday's day.
        let cal = Calendar {
            day_start: 17 * 60,
            ..Calendar::default()
        };
        let t = vec![
            ms("2024-03-04 16:00"),
            ms("2024-03-04 18:00"),
            ms("2024-03-05 16:00"),
        ];
        let r = resample(&bars(t), Timeframe::Day, &cal, HOUR);
        assert_eq!(
            r.bars.time,
            [ms("2024-03-03 17:00"), ms("2024-03-04 17:00")]
        );
        assert_eq!(r.last, [0, 2]);
        // Weeks and months count the session by its date: Sunday 17:00
        // opens Monday's session, so a new week (from Monday) and, on
        // 31 March, April.
        let t = vec![
            ms("2024-03-08 15:00"),
            ms("2024-03-10 18:00"),
            ms("2024-03-29 18:00"),
            ms("2024-03-31 18:00"),
        ];
        let w = resample(&bars(t.clone()), Timeframe::Week, &cal, HOUR);
        assert_eq!(
            w.bars.time[..2],
            [ms("2024-03-03 17:00"), ms("2024-03-10 17:00")]
        );
        assert_eq!(w.end[0], ms("2024-03-10 17:00"));
        let m = resample(&bars(t), Timeframe::Month, &cal, HOUR);
        assert_eq!(
            m.bars.time,
            [ms("2024-02-29 17:00"), ms("2024-03-31 17:00")]
        );
        assert_eq!(m.last, [2, 3]);
        // A session ending 16:00 ends on its own date.
        let futures = Calendar {
            session_end: Some(16 * 60),
            ..cal
        };
        let d = resample(
            &bars(vec![ms("2024-03-04 15:00")]),
            Timeframe::Day,
            &futures,
            HOUR,
        );
        assert_eq!(d.end[0], ms("2024-03-04 16:00"));
    }

    /// No look-ahead by construction: cutting the bars after any bar leaves
    /// every earlier bar's visible value unchanged, on irregular bars too.
    #[test]
    fn cutting_the_data_changes_no_earlier_value() {
        let mut state = 12345u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        for tf in [
            Timeframe::Minutes(60),
            Timeframe::Minutes(240),
            Timeframe::Day,
            Timeframe::Week,
        ] {
            let mut t = vec![ms("2024-03-01 09:00")];
            for _ in 0..300 {
                // Mostly 15 minutes apart; now and then a gap, or two bars
                // closer than the bar length.
                let gap = match next() % 20 {
                    0 => 600 * 60_000,
                    1 => 5 * 60_000,
                    _ => 15 * 60_000,
                };
                t.push(t[t.len() - 1] + gap as i64);
            }
            let b = bars(t.clone());
            let length = bar_length(&t, None);
            let whole = resample(&b, tf, &Calendar::default(), length);
            let full = as_of(&whole.bars.close, &visible(&t, length, &whole.end));
            for cut in 1..=t.len() {
                let part = bars(t[..cut].to_vec());
                let r = resample(&part, tf, &Calendar::default(), length);
                let seen = as_of(&r.bars.close, &visible(&t[..cut], length, &r.end));
                for i in 0..cut {
                    assert!(
                        seen[i].to_bits() == full[i].to_bits(),
                        "{tf:?}: bar {i} of a cut at {cut}: {} vs {}",
                        seen[i],
                        full[i]
                    );
                }
            }
            assert!(
                full.iter().any(|v| v.is_finite()),
                "{tf:?}: nothing visible"
            );
        }
    }
}
