//! One clock over several instruments' bars: the union of their times in
//! order, and at each time the instruments that have a bar then. An
//! instrument without a bar at a time neither trades nor moves there (an
//! account values it at its last close).

/// Walks the union of several instruments' bar times (each ascending) in
/// order. Allocates nothing per step.
#[derive(Debug, Clone)]
pub struct Clock<'a> {
    times: Vec<&'a [i64]>,
    /// Each instrument's next bar.
    next: Vec<usize>,
}

impl<'a> Clock<'a> {
    /// A clock over these instruments' times (each strictly ascending, as
    /// loaded bars are).
    pub fn new(times: Vec<&'a [i64]>) -> Self {
        let next = vec![0; times.len()];
        Clock { times, next }
    }

    /// The next time of the union, with `(instrument, bar)` for every
    /// instrument that has a bar then, in instrument order (`out` is
    /// cleared first); `None` after the last.
    pub fn advance(&mut self, out: &mut Vec<(usize, usize)>) -> Option<i64> {
        out.clear();
        let now = self
            .times
            .iter()
            .zip(&self.next)
            .filter_map(|(times, &k)| times.get(k).copied())
            .min()?;
        for (i, (times, k)) in self.times.iter().zip(&mut self.next).enumerate() {
            if times.get(*k) == Some(&now) {
                out.push((i, *k));
                *k += 1;
            }
        }
        Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(times: Vec<&[i64]>) -> Vec<(i64, Vec<(usize, usize)>)> {
        let mut clock = Clock::new(times);
        let mut out = Vec::new();
        let mut steps = Vec::new();
        while let Some(t) = clock.advance(&mut out) {
            steps.push((t, out.clone()));
        }
        steps
    }

    /// A stock with a holiday and a coin that trades every day: every day
    /// once, the stock absent on its holiday and before its first bar.
    #[test]
    fn the_union_of_two_calendars_by_hand() {
        let stock = [2, 3, 5, 6];
        let coin = [1, 2, 3, 4, 5, 6, 7];
        let steps = walk(vec![&stock, &coin]);
        let want = vec![
            (1, vec![(1, 0)]),
            (2, vec![(0, 0), (1, 1)]),
            (3, vec![(0, 1), (1, 2)]),
            (4, vec![(1, 3)]),
            (5, vec![(0, 2), (1, 4)]),
            (6, vec![(0, 3), (1, 5)]),
            (7, vec![(1, 6)]),
        ];
        assert_eq!(steps, want);
    }

    /// Random calendars: times strictly increase, every bar of every
    /// instrument is visited exactly once, at its own time.
    #[test]
    fn every_bar_once_in_time_order() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..50 {
            let calendars: Vec<Vec<i64>> = (0..1 + next() % 5)
                .map(|_| (0..200).filter(|_| next() % 3 != 0).collect())
                .collect();
            let steps = walk(calendars.iter().map(Vec::as_slice).collect());
            assert!(steps.windows(2).all(|w| w[0].0 < w[1].0));
            let mut seen: Vec<Vec<usize>> = vec![Vec::new(); calendars.len()];
            for (t, bars) in &steps {
                assert!(!bars.is_empty());
                for &(i, k) in bars {
                    assert_eq!(calendars[i][k], *t);
                    seen[i].push(k);
                }
            }
            for (i, s) in seen.iter().enumerate() {
                assert_eq!(*s, (0..calendars[i].len()).collect::<Vec<_>>());
            }
        }
    }
}
