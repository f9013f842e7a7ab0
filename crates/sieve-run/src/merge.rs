//! `sieve merge`: joins the shards of one sweep into exactly the file one
//! unsharded run writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sieve_core::metrics::rank_order;
use sieve_core::{Error, Result};
use sieve_screen::ObjectiveStats;

use crate::files::{self, SweepRow};
use crate::shard::Shard;
use crate::sweep::{ShardMeta, StatsMeta, SweepMeta};

/// Checks that `parts` are the complete, distinct shards of one sweep, then
/// writes the merged `out` (+ meta). Returns the merged meta.
pub fn merge(parts: &[PathBuf], out: &Path) -> Result<SweepMeta> {
    if parts.is_empty() {
        return Err(Error::Invalid("merge needs at least one part".into()));
    }
    let mut metas: Vec<(PathBuf, SweepMeta)> = Vec::new();
    for p in parts {
        let meta_path = files::meta_path(p);
        if !meta_path.exists() {
            return Err(Error::Invalid(format!(
                "{}: no {} beside it; merge needs the meta file each shard writes",
                p.display(),
                meta_path.display()
            )));
        }
        metas.push((p.clone(), files::read_json(&meta_path)?));
    }
    check_parts(&metas)?;
    let first = metas[0].1.clone();
    metas.sort_by_key(|(_, m)| m.shard.index);
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut stats = ObjectiveStats::default();
    let mut sharpe = Some(ObjectiveStats::default());
    let mut screen_s = 0.0;
    for (path, m) in &metas {
        let (names, part_rows) = files::read_sweep_csv(path)?;
        if names != first.params {
            return Err(Error::Invalid(format!(
                "{}: its columns do not match its meta file",
                path.display()
            )));
        }
        rows.extend(part_rows);
        stats.combine(&ObjectiveStats::from(&m.objective_stats));
        // Known only when every part has it.
        sharpe = sharpe.zip(m.sharpe_stats.as_ref()).map(|(mut s, p)| {
            s.combine(&ObjectiveStats::from(p));
            s
        });
        screen_s += m.timings.screen_s;
    }
    rows.sort_by(|a, b| rank_order(a.score, a.grid_index, b.score, b.grid_index));
    rows.truncate(first.top);

    let names: Vec<&str> = first.params.iter().map(String::as_str).collect();
    files::write_sweep_csv(out, &names, &rows)?;
    let evaluated = stats.evaluated as f64;
    let mut meta = first.clone();
    meta.shard = ShardMeta {
        index: 0,
        count: 1,
        start: 0,
        end: first.grid_size,
    };
    meta.objective_stats = StatsMeta::from(&stats);
    meta.sharpe_stats = sharpe.as_ref().map(StatsMeta::from);
    // Total screening time over all shards (CPU-time-like, not wall time).
    meta.timings.screen_s = screen_s;
    meta.timings.combinations_per_s = evaluated / screen_s;
    meta.timings.bar_combinations_per_s = evaluated * first.bars_per_combination as f64 / screen_s;
    files::write_json(&files::meta_path(out), &meta)?;
    Ok(meta)
}

/// Checks the metas of the parts (as read, possibly corrupt or tampered
/// with): each a valid shard of its grid, all from one sweep (config, data,
/// grid, top K, backend), none repeated or missing. Never panics.
pub fn check_parts(metas: &[(PathBuf, SweepMeta)]) -> Result<()> {
    let Some((first_path, first)) = metas.first() else {
        return Err(Error::Invalid("merge needs at least one part".into()));
    };
    for (path, m) in metas {
        let bad = |what: String| {
            Error::Invalid(format!(
                "{}: {what}; is the meta file corrupt?",
                files::meta_path(path).display()
            ))
        };
        let shard = Shard::new(m.shard.index, m.shard.count).map_err(|e| bad(e.to_string()))?;
        if m.shard.count > m.grid_size.max(1) {
            return Err(bad(format!(
                "{} shards of a grid of {} combinations",
                m.shard.count, m.grid_size
            )));
        }
        let range = shard.range(m.grid_size);
        if (m.shard.start, m.shard.end) != (range.start, range.end) {
            return Err(bad(format!(
                "shard {shard} of {} combinations covers {}..{}, not {}..{}",
                m.grid_size, range.start, range.end, m.shard.start, m.shard.end
            )));
        }
    }
    for (path, m) in &metas[1..] {
        let differs = |what: &str| {
            Error::Invalid(format!(
                "{} and {} come from different sweeps: their {what} differ",
                first_path.display(),
                path.display()
            ))
        };
        if m.config_hash != first.config_hash
            || m.strategy != first.strategy
            || m.params != first.params
        {
            return Err(differs("configs"));
        }
        if m.data_hash != first.data_hash {
            return Err(differs("data"));
        }
        if m.grid_size != first.grid_size {
            return Err(differs("grid sizes"));
        }
        if m.top != first.top {
            return Err(differs("top K"));
        }
        if m.backend != first.backend {
            return Err(Error::Invalid(format!(
                "{} was screened on the {} backend and {} on the {} backend; the GPU screens in f32, so their scores do not rank together: sweep every shard on one backend",
                first_path.display(),
                first.backend,
                path.display(),
                m.backend
            )));
        }
        if m.shard.count != first.shard.count {
            return Err(differs("shard counts"));
        }
    }
    let count = first.shard.count;
    let mut seen: BTreeMap<u64, &PathBuf> = BTreeMap::new();
    for (path, m) in metas {
        if let Some(other) = seen.insert(m.shard.index, path) {
            return Err(Error::Invalid(format!(
                "shard {}/{count} is given twice: {} and {}",
                m.shard.index,
                other.display(),
                path.display()
            )));
        }
    }
    if (seen.len() as u64) < count {
        const LISTED: usize = 10;
        let missing = (0..count).filter(|i| !seen.contains_key(i));
        let listed: Vec<String> = missing
            .take(LISTED)
            .map(|i| format!("{i}/{count}"))
            .collect();
        let more = count - seen.len() as u64 - listed.len() as u64;
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        return Err(Error::Invalid(format!(
            "missing shard(s) {}{tail}; merge needs all {count}",
            listed.join(", ")
        )));
    }
    Ok(())
}
