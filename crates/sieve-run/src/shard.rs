//! `--shard K/N`: the K-th (from 0) of N contiguous slices of the grid's
//! index range. Also read from job-array environments so a cluster job
//! needs no wrapper script.

use std::fmt;
use std::ops::Range;

use sieve_core::grid::GridIndex;
use sieve_core::{Error, Result};
use sieve_screen::CHUNK;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn new(index: u64, count: u64) -> Result<Shard> {
        if count == 0 {
            return Err(Error::Invalid("shard count must be at least 1".into()));
        }
        if index >= count {
            return Err(Error::Invalid(format!(
                "shard {index}/{count}: the index must be below the count (shards are numbered from 0)"
            )));
        }
        Ok(Shard { index, count })
    }

    /// Parses `K/N`.
    pub fn parse(s: &str) -> Result<Shard> {
        let bad = || Error::Invalid(format!("--shard {s}: expected K/N, e.g. 0/4"));
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k = k.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        Shard::new(k, n)
    }

    /// The shard given by the environment of a job array, if any:
    /// Slurm (`SLURM_ARRAY_TASK_ID` − `SLURM_ARRAY_TASK_MIN` of
    /// `SLURM_ARRAY_TASK_COUNT`), or a Kubernetes Indexed Job
    /// (`JOB_COMPLETION_INDEX` of `shards`).
    pub fn from_env(
        get: impl Fn(&str) -> Option<String>,
        shards: Option<u64>,
    ) -> Result<Option<Shard>> {
        let num = |name: &str| -> Result<Option<u64>> {
            match get(name) {
                None => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    Error::Invalid(format!(
                        "environment variable {name}={v} is not a whole number"
                    ))
                }),
            }
        };
        if let Some(id) = num("SLURM_ARRAY_TASK_ID")? {
            let count = num("SLURM_ARRAY_TASK_COUNT")?.ok_or_else(|| {
                Error::Invalid(
                    "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not".into(),
                )
            })?;
            let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let index = id.checked_sub(min).ok_or_else(|| {
                Error::Invalid(format!(
                    "SLURM_ARRAY_TASK_ID {id} is below SLURM_ARRAY_TASK_MIN {min}"
                ))
            })?;
            return Shard::new(index, count).map(Some);
        }
        if let Some(index) = num("JOB_COMPLETION_INDEX")? {
            let count = shards.ok_or_else(|| {
                Error::Invalid(
                    "JOB_COMPLETION_INDEX is set: give the number of shards with --shards N".into(),
                )
            })?;
            return Shard::new(index, count).map(Some);
        }
        Ok(None)
    }

    /// The task's own index where a job array runs it, as a shard job
    /// reads it: `SLURM_ARRAY_TASK_ID` itself (an array resubmitted for
    /// some shards, `--array=1,3`, numbers its tasks by shard, not from
    /// its minimum), else `JOB_COMPLETION_INDEX`.
    pub fn task_index(get: impl Fn(&str) -> Option<String>) -> Result<Option<u64>> {
        for name in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
            if let Some(v) = get(name) {
                return v.trim().parse().map(Some).map_err(|_| {
                    Error::Invalid(format!(
                        "environment variable {name}={v} is not a whole number"
                    ))
                });
            }
        }
        Ok(None)
    }

    /// This shard's slice of `0..size`: its bounds fall between the
    /// screen's chunks, whose statistics then merge exactly (on a batch
    /// of fewer than `count` chunks some shards are empty).
    pub fn range(&self, size: u64) -> Range<GridIndex> {
        let at = |k: u64| match k == self.count {
            true => size,
            false => {
                let even = (u128::from(size) * u128::from(k) / u128::from(self.count)) as u64;
                even / CHUNK * CHUNK
            }
        };
        at(self.index)..at(self.index + 1)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_range_once() {
        for size in [0u64, 1, 7, 100, 1001] {
            for count in 1..6 {
                let mut next = 0;
                for k in 0..count {
                    let r = Shard::new(k, count).unwrap().range(size);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, size);
            }
        }
    }

    #[test]
    fn bounds_fall_between_chunks() {
        for (size, count) in [
            (1_000_000u64, 7u64),
            (100_000, 4),
            (300, 4),
            (12_345_678, 16),
        ] {
            for k in 0..count {
                let r = Shard::new(k, count).unwrap().range(size);
                assert!(r.start.is_multiple_of(CHUNK), "{size} {k}/{count}");
                assert!(r.end.is_multiple_of(CHUNK) || r.end == size);
                // Within a chunk of the even split.
                let even = size * (k + 1) / count;
                assert!(r.end <= even && even - r.end < CHUNK);
            }
        }
    }

    #[test]
    fn parse_and_environment() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        assert!(
            Shard::parse("4/4").is_err()
                && Shard::parse("x").is_err()
                && Shard::parse("1/0").is_err()
        );
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.to_string())
        };
        let slurm = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(
            Shard::from_env(slurm, None).unwrap(),
            Some(Shard { index: 3, count: 4 })
        );
        let slurm1 = env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert_eq!(
            Shard::from_env(slurm1, None).unwrap(),
            Some(Shard { index: 3, count: 4 })
        );
        let k8s = env(&[("JOB_COMPLETION_INDEX", "1")]);
        assert_eq!(
            Shard::from_env(k8s, Some(2)).unwrap(),
            Some(Shard { index: 1, count: 2 })
        );
        assert!(Shard::from_env(env(&[("JOB_COMPLETION_INDEX", "1")]), None).is_err());
        assert_eq!(Shard::from_env(env(&[]), None).unwrap(), None);
    }
}
