//! `sieve merge`: joins the shards of one sweep into exactly the file one
//! unsharded run writes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sieve_core::metrics::rank_order;
use sieve_core::{Error, Result};
use sieve_screen::{Batch, ObjectiveStats, StatsTree};

use crate::files::{self, SweepRow};
use crate::files::{NodeMeta, StatsMeta};
use crate::shard::Shard;
use crate::sweep::{ShardMeta, SweepMeta};

/// Refuses an output that is an input: the merged CSV or its meta file
/// (`out`'s `.meta.json`) on any part's CSV or meta file, whatever the
/// extension given (`--out part-0` would write `part-0.meta.json`).
fn check_outputs(parts: &[PathBuf], out: &Path) -> Result<()> {
    let outputs = [
        (out.to_path_buf(), "CSV"),
        (files::meta_path(out), "meta file"),
    ];
    for part in parts {
        for (input, role) in [(part.clone(), "CSV"), (files::meta_path(part), "meta file")] {
            for (output, what) in &outputs {
                if same_place(output, &input) {
                    return Err(Error::Invalid(format!(
                        "{}: the merged {what} would be written over {} (the {role} of a part); give --out a new name",
                        out.display(),
                        input.display()
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Whether two paths name the same file, existing or not: their folders
/// resolved, then their names.
fn same_place(a: &Path, b: &Path) -> bool {
    let resolved = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::canonicalize(dir)
            .ok()
            .map(|d| (d, p.file_name().map(|n| n.to_os_string())))
    };
    match (resolved(a), resolved(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The parts' statistics together (shard order), each a total and, where
/// exact, its tree: the parts' chunk trees appended — the unsharded
/// screen's numbers, bit for bit — where every part that evaluated
/// something has one and they follow one another; else (parts written by
/// an older sieve) their totals combined, equal to rounding, and no tree.
/// The Sharpe's only where every part that evaluated something has it.
struct Merged {
    total: ObjectiveStats,
    tree: Option<StatsTree>,
}

fn merged_stats(metas: &[(PathBuf, SweepMeta)]) -> (Merged, Option<Merged>) {
    type Pick = fn(&SweepMeta) -> (&[NodeMeta], Option<&StatsMeta>);
    let merged = |pick: Pick| -> Option<Merged> {
        let mut parts: Vec<(&[NodeMeta], StatsMeta)> = Vec::new();
        for (_, m) in metas {
            let (nodes, total) = pick(m);
            match total {
                Some(t) => parts.push((nodes, *t)),
                // A part that evaluated nothing has no Sharpe to give
                // (its chunks, if any, are all empty).
                None if m.objective_stats.combinations_evaluated == 0 => {
                    parts.push((nodes, StatsMeta::from(&ObjectiveStats::default())))
                }
                None => return None,
            }
        }
        let complete = parts
            .iter()
            .all(|(nodes, t)| !nodes.is_empty() || t.combinations_evaluated == 0);
        let nodes: Vec<NodeMeta> = parts.iter().flat_map(|(n, _)| n.iter().copied()).collect();
        if let Some(tree) = complete.then(|| files::tree_of(&nodes)).flatten() {
            return Some(Merged {
                total: tree.total(),
                tree: Some(tree),
            });
        }
        let mut total = ObjectiveStats::default();
        parts
            .iter()
            .for_each(|(_, t)| total.combine(&ObjectiveStats::from(t)));
        Some(Merged { total, tree: None })
    };
    let stats = merged(|m| (&m.objective_tree, Some(&m.objective_stats)));
    let sharpe = merged(|m| (&m.sharpe_tree, m.sharpe_stats.as_ref()));
    (
        stats.unwrap_or(Merged {
            total: ObjectiveStats::default(),
            tree: None,
        }),
        sharpe,
    )
}

/// Checks that `parts` are the complete, distinct shards of one sweep, then
/// writes the merged `out` (+ meta). Returns the merged meta.
pub fn merge(parts: &[PathBuf], out: &Path) -> Result<SweepMeta> {
    if parts.is_empty() {
        return Err(Error::Invalid("merge needs at least one part".into()));
    }
    check_outputs(parts, out)?;
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
        metas.push((p.clone(), read_meta(&meta_path)?));
    }
    let grid = Batch::whole(metas[0].1.grid_size);
    let joined = join(metas, &grid)?;
    let names: Vec<&str> = joined.meta.params.iter().map(String::as_str).collect();
    let text = files::sweep_csv(&names, &joined.rows);
    sieve_core::format::write_atomic(out, text.as_bytes())?;
    let meta = joined.meta.describing(&text, joined.rows.len());
    files::write_json(&files::meta_path(out), &meta)?;
    Ok(meta)
}

/// Shards of one screen joined: the top K rows and the meta of the whole
/// (not yet describing a CSV), with both statistics.
pub struct Joined {
    pub rows: Vec<SweepRow>,
    pub meta: SweepMeta,
    /// Both statistics chunk by chunk, where every part kept its tree.
    pub objective_tree: Option<StatsTree>,
    pub sharpe_tree: Option<StatsTree>,
}

/// Joins the parts (path and meta, as read) of one screen of `batch`
/// (the whole grid, or a search's list of indices), checking that they
/// are its complete, distinct shards and that each CSV is the one its meta
/// describes.
pub fn join(mut metas: Vec<(PathBuf, SweepMeta)>, batch: &Batch) -> Result<Joined> {
    check_parts_of(&metas, batch)?;
    let first = metas[0].1.clone();
    metas.sort_by_key(|(_, m)| m.shard.index);
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut counts = Counts::default();
    let mut screen_s = 0.0;
    for (path, m) in &metas {
        let part_rows = read_part(path, m, batch)?;
        rows.extend(part_rows);
        counts.add(&m.objective_stats, path)?;
        screen_s += m.timings.screen_s;
    }
    let (stats, sharpe) = merged_stats(&metas);
    if counts.evaluated > batch.len() {
        return Err(Error::Invalid(format!(
            "the parts claim {} combinations evaluated, more than the {} screened; is a meta file corrupt?",
            counts.evaluated,
            batch.len()
        )));
    }
    rows.sort_by(|a, b| rank_order(a.score, a.grid_index, b.score, b.grid_index));
    rows.truncate(first.top);

    let evaluated = stats.total.evaluated as f64;
    let mut meta = first.clone();
    let positions = batch.positions();
    meta.shard = ShardMeta {
        index: 0,
        count: 1,
        start: positions.start,
        end: positions.end,
    };
    let tree = |m: &Merged| m.tree.as_ref().map(files::tree_meta).unwrap_or_default();
    meta.objective_stats = StatsMeta::from(&stats.total);
    meta.sharpe_stats = sharpe.as_ref().map(|m| StatsMeta::from(&m.total));
    meta.objective_tree = tree(&stats);
    meta.sharpe_tree = sharpe.as_ref().map(tree).unwrap_or_default();
    // Total screening time over all shards (CPU-time-like, not wall time).
    meta.timings.screen_s = screen_s;
    meta.timings.combinations_per_s = evaluated / screen_s;
    meta.timings.bar_combinations_per_s = evaluated * first.bars_per_combination as f64 / screen_s;
    Ok(Joined {
        rows,
        meta,
        objective_tree: stats.tree,
        sharpe_tree: sharpe.and_then(|m| m.tree),
    })
}

/// Reads a part's meta, refusing one another version of sieve wrote (its
/// fields, and its numbers, may differ) before reading the rest.
pub fn read_meta(path: &Path) -> Result<SweepMeta> {
    let raw: serde_json::Value = files::read_json(path)?;
    let version = raw.get("sieve_version").and_then(|v| v.as_str());
    let ours = env!("CARGO_PKG_VERSION");
    if version != Some(ours) {
        return Err(Error::Invalid(format!(
            "{}: written by sieve {}, and this is sieve {ours}; sweep every shard with one version",
            path.display(),
            version.unwrap_or("(unknown)")
        )));
    }
    serde_json::from_value(raw).map_err(|e| Error::Data {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Reads a part's rows, checking them against its meta: the file is the
/// one the meta describes (its SHA-256 and row count), and each row's grid
/// index lies in the part's shard, appears once, and decodes to the row's
/// parameters.
pub(crate) fn read_part(path: &Path, m: &SweepMeta, batch: &Batch) -> Result<Vec<SweepRow>> {
    let bad = |what: String| Error::Invalid(format!("{}: {what}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    if crate::study::hash_text(&text) != m.csv_sha256 {
        return Err(bad(format!(
            "its content is not the file its meta ({}) describes (another SHA-256): was it edited, or swapped for another sweep's?",
            files::meta_path(path).display()
        )));
    }
    let (names, rows) = files::read_sweep_csv(path)?;
    if names != m.params {
        return Err(bad("its columns do not match its meta file".into()));
    }
    if rows.len() as u64 != m.rows || rows.len() > m.top {
        return Err(bad(format!(
            "{} rows where its meta says {} (top {})",
            rows.len(),
            m.rows,
            m.top
        )));
    }
    if m.grid.len() != m.params.len() {
        return Err(bad("its meta has no grid to check the rows against".into()));
    }
    let mut seen = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        let line = i + 2;
        if !in_positions(batch, m.shard.start..m.shard.end, row.grid_index) {
            return Err(bad(format!(
                "line {line}: grid index {} is outside shard {}/{} ({}..{})",
                row.grid_index, m.shard.index, m.shard.count, m.shard.start, m.shard.end
            )));
        }
        if !seen.insert(row.grid_index) {
            return Err(bad(format!(
                "line {line}: grid index {} appears twice",
                row.grid_index
            )));
        }
        let want = decode(&m.grid, row.grid_index);
        let same = want
            .iter()
            .zip(&row.params)
            .all(|(a, b)| a.to_bits() == b.to_bits());
        if want.len() != row.params.len() || !same {
            return Err(bad(format!(
                "line {line}: the parameters are not those of grid index {}",
                row.grid_index
            )));
        }
    }
    // A shard keeps its top K of what it evaluated: fewer rows is a file
    // with rows taken out.
    let kept = (m.top as u64).min(m.objective_stats.combinations_evaluated);
    if m.rows != kept {
        return Err(bad(format!(
            "its meta says {} rows, but a shard of {} combinations evaluated with top {} keeps {kept}",
            m.rows, m.objective_stats.combinations_evaluated, m.top
        )));
    }
    Ok(rows)
}

/// Whether `index` is the grid index at one of `batch`'s `positions`.
fn in_positions(batch: &Batch, positions: std::ops::Range<u64>, index: u64) -> bool {
    match batch {
        Batch::Range(_) => positions.contains(&index),
        Batch::Indices(list, _) => {
            let (start, end) = (positions.start as usize, positions.end as usize);
            list.get(start..end)
                .is_some_and(|part| part.binary_search(&index).is_ok())
        }
    }
}

/// The parameters at `index` of `grid` (the first parameter slowest).
fn decode(grid: &[crate::files::AxisRecord], mut index: u64) -> Vec<f64> {
    let mut out = vec![f64::NAN; grid.len()];
    for (slot, axis) in out.iter_mut().zip(grid).rev() {
        let n = axis.values.len().max(1) as u64;
        *slot = axis
            .values
            .get((index % n) as usize)
            .copied()
            .unwrap_or(f64::NAN);
        index /= n;
    }
    out
}

/// The parts' combination counts, summed with overflow refused (three
/// parts each claiming 2⁶⁴ − 1 combinations wrapped to a small number).
#[derive(Default)]
struct Counts {
    evaluated: u64,
    count: u64,
    nan: u64,
    infinite: u64,
}

impl Counts {
    fn add(&mut self, s: &StatsMeta, path: &Path) -> Result<()> {
        let sum = |a: u64, b: u64| {
            a.checked_add(b).ok_or_else(|| {
                Error::Invalid(format!(
                    "{}: its combination counts overflow the total; is the meta file corrupt?",
                    files::meta_path(path).display()
                ))
            })
        };
        let parts = sum(s.count, s.nan).and_then(|c| sum(c, s.infinite))?;
        if parts != s.combinations_evaluated {
            return Err(Error::Invalid(format!(
                "{}: {} combinations evaluated but {} counted; is the meta file corrupt?",
                files::meta_path(path).display(),
                s.combinations_evaluated,
                parts
            )));
        }
        self.evaluated = sum(self.evaluated, s.combinations_evaluated)?;
        self.count = sum(self.count, s.count)?;
        self.nan = sum(self.nan, s.nan)?;
        self.infinite = sum(self.infinite, s.infinite)?;
        Ok(())
    }
}

/// Checks the metas of the parts (as read, possibly corrupt or tampered
/// with): each a valid shard of its grid, all from one sweep (config, data,
/// grid, top K, backend), none repeated or missing. Never panics.
pub fn check_parts(metas: &[(PathBuf, SweepMeta)]) -> Result<()> {
    let grid = Batch::whole(metas.first().map_or(0, |(_, m)| m.grid_size));
    check_parts_of(metas, &grid)
}

/// [`check_parts`] of the shards of `batch` (a search's list of indices,
/// or the grid).
fn check_parts_of(metas: &[(PathBuf, SweepMeta)], batch: &Batch) -> Result<()> {
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
        let (positions, part) = (batch.positions(), shard.range(batch.len()));
        let range = positions.start + part.start..positions.start + part.end;
        // A part of an older sieve (no statistics tree) split evenly.
        let legacy = m.objective_tree.is_empty() && {
            let at =
                |k: u64| (u128::from(m.grid_size) * u128::from(k) / u128::from(shard.count)) as u64;
            (m.shard.start, m.shard.end) == (at(shard.index), at(shard.index + 1))
        };
        if (m.shard.start, m.shard.end) != (range.start, range.end) && !legacy {
            return Err(bad(format!(
                "shard {shard} of {} combinations covers {}..{}, not {}..{}",
                m.grid_size, range.start, range.end, m.shard.start, m.shard.end
            )));
        }
        // Each tree must be whole and say what the totals say.
        for (nodes, total, what) in [
            (
                &m.objective_tree,
                Some(&m.objective_stats),
                "objective_tree",
            ),
            (&m.sharpe_tree, m.sharpe_stats.as_ref(), "sharpe_tree"),
        ] {
            if nodes.is_empty() {
                continue;
            }
            let agrees = files::tree_of(nodes)
                .zip(total)
                .is_some_and(|(tree, total)| StatsMeta::from(&tree.total()) == *total);
            if !agrees {
                return Err(Error::Invalid(format!(
                    "{}: its {what} does not add up to its totals; is the meta file corrupt?",
                    files::meta_path(path).display()
                )));
            }
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
