//! The files sieve writes: `sweep.csv` and its meta, written
//! to a temporary name and renamed. Floats in shortest round-trip form, so
//! reading a file back gives exactly the values that were written.

use std::path::{Path, PathBuf};

use serde::{de::DeserializeOwned, Serialize};
use std::fmt::Write as _;

use sieve_core::format::{push_float, write_atomic};
use sieve_core::grid::GridIndex;
use sieve_core::{Error, Result};
use sieve_screen::{ObjectiveStats, StatsNode, StatsTree};

/// One row of `sweep.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    pub grid_index: GridIndex,
    /// Every parameter, in strategy order.
    pub params: Vec<f64>,
    pub score: f64,
    pub trades: u64,
}

/// `sweep.csv` → `sweep.meta.json`.
pub fn meta_path(csv: &Path) -> PathBuf {
    let name = csv
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".csv").unwrap_or(&name);
    csv.with_file_name(format!("{stem}.meta.json"))
}

/// Creates a run folder (or checks an existing one) and checks it is writable.
pub fn create_run_folder(out: &Path) -> Result<()> {
    create_folder(out)?;
    check_writable_dir(out)
}

/// Creates the folder `out` (and its parents), or says why not.
pub fn create_folder(out: &Path) -> Result<()> {
    if out.exists() && !out.is_dir() {
        return Err(Error::Invalid(format!(
            "{}: exists and is not a folder",
            out.display()
        )));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| Error::Invalid(format!("{}: cannot create the folder ({e})", out.display())))
}

/// Writes [`sweep_csv`] to `path`.
pub fn write_sweep_csv(path: &Path, param_names: &[&str], rows: &[SweepRow]) -> Result<()> {
    write_atomic(path, sweep_csv(param_names, rows).as_bytes())
}

/// The text of `sweep.csv`: `rank,grid_index,<params…>,score,trades`, best first.
pub fn sweep_csv(param_names: &[&str], rows: &[SweepRow]) -> String {
    let mut out = String::with_capacity(64 + rows.len() * 16 * (param_names.len() + 4));
    out.push_str("rank,grid_index");
    for name in param_names {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",score,trades\n");
    for (rank, row) in rows.iter().enumerate() {
        let _ = write!(out, "{},{}", rank + 1, row.grid_index);
        for &v in &row.params {
            out.push(',');
            push_float(&mut out, v);
        }
        out.push(',');
        push_float(&mut out, row.score);
        let _ = writeln!(out, ",{}", row.trades);
    }
    out
}

/// Reads a `sweep.csv` written by [`write_sweep_csv`]: (parameter names, rows).
pub fn read_sweep_csv(path: &Path) -> Result<(Vec<String>, Vec<SweepRow>)> {
    let data_err = |message: String| Error::Data {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| data_err(format!("line 1: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
    let n = header.len();
    if n < 4
        || header[0] != "rank"
        || header[1] != "grid_index"
        || header[n - 2] != "score"
        || header[n - 1] != "trades"
    {
        return Err(data_err(format!(
            "line 1: not a sweep file (expected rank,grid_index,<params…>,score,trades; found {})",
            header.join(",")
        )));
    }
    let params = header[2..n - 2].to_vec();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| data_err(e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let num = |i: usize| -> Result<f64> {
            record[i].parse::<f64>().map_err(|_| {
                data_err(format!(
                    "line {line}: column '{}': cannot parse \"{}\"",
                    header[i], &record[i]
                ))
            })
        };
        let int = |i: usize| -> Result<u64> {
            record[i].parse::<u64>().map_err(|_| {
                data_err(format!(
                    "line {line}: column '{}': cannot parse \"{}\" as a whole number",
                    header[i], &record[i]
                ))
            })
        };
        rows.push(SweepRow {
            grid_index: int(1)?,
            params: (2..n - 2).map(num).collect::<Result<_>>()?,
            score: num(n - 2)?,
            trades: int(n - 1)?,
        });
    }
    Ok((params, rows))
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::Invalid(format!("{}: {e}", path.display())))?;
    text.push('\n');
    write_atomic(path, text.as_bytes())
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    parse_json(path, &text)
}

/// `text`, read from `path`, as JSON.
pub fn parse_json<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Data {
        path: path.to_path_buf(),
        message: format!("line {}: {e}", e.line()),
    })
}

/// NaN/inf as JSON null (JSON has no such numbers).
pub fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// One parameter's values on a grid, as run and meta files record it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct AxisRecord {
    pub name: String,
    pub values: Vec<f64>,
}

/// A metric in a JSON file, kept whole: a finite value is a number, an
/// infinite one the string `"inf"` or `"-inf"` (as `verified.csv` writes
/// it: a profit factor with no losing trade is +∞, not undefined), and an
/// undefined one (NaN) `null`. Reads all three back, and `"nan"` too.
#[derive(Debug, Clone, Copy)]
pub struct Num(pub f64);

impl PartialEq for Num {
    /// Equal when the same value, NaN included: a run's results compare
    /// equal to themselves read back.
    fn eq(&self, other: &Num) -> bool {
        self.0 == other.0 || (self.0.is_nan() && other.0.is_nan())
    }
}

/// An optional metric written as [`Num`] writes it (`None` as null, ±∞ as
/// "inf" / "-inf"); `#[serde(with = "crate::files::num_option")]`. A null
/// or "nan" reads back as `None`.
pub mod num_option {
    use super::Num;
    use serde::{Deserialize, Serialize};

    pub fn serialize<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        Num(v.unwrap_or(f64::NAN)).serialize(s)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let Num(v) = Num::deserialize(d)?;
        Ok((!v.is_nan()).then_some(v))
    }
}

impl Serialize for Num {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            v if v.is_finite() => s.serialize_f64(v),
            v if v.is_nan() => s.serialize_none(),
            v if v > 0.0 => s.serialize_str("inf"),
            _ => s.serialize_str("-inf"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Num {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Num, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
            Null(()),
        }
        match Raw::deserialize(d)? {
            Raw::Number(v) => Ok(Num(v)),
            Raw::Null(()) => Ok(Num(f64::NAN)),
            Raw::Text(t) => match t.as_str() {
                "inf" => Ok(Num(f64::INFINITY)),
                "-inf" => Ok(Num(f64::NEG_INFINITY)),
                "nan" => Ok(Num(f64::NAN)),
                _ => Err(serde::de::Error::custom(format!(
                    "expected a number, \"inf\", \"-inf\" or null, found \"{t}\""
                ))),
            },
        }
    }
}

/// Checks, before any work starts, that `out` can be written and is not one
/// of `inputs` (a typo must not overwrite the data it reads).
pub fn check_output(out: &Path, inputs: &[&Path]) -> Result<()> {
    if out.is_dir() {
        return Err(Error::Invalid(format!(
            "{}: is a folder; give a file name",
            out.display()
        )));
    }
    if let Ok(target) = std::fs::canonicalize(out) {
        for input in inputs {
            if std::fs::canonicalize(input).is_ok_and(|i| i == target) {
                return Err(Error::Invalid(format!(
                    "{}: refusing to overwrite an input file with an output",
                    out.display()
                )));
            }
        }
    }
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    check_writable_dir(&dir)
}

/// Checks that `dir` exists (or can be created) and accepts new files.
pub fn check_writable_dir(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Invalid(format!(
            "{}: exists and is not a folder",
            dir.display()
        )));
    }
    if !dir.exists() {
        return Err(Error::Invalid(format!(
            "{}: the output folder does not exist",
            dir.display()
        )));
    }
    let probe = dir.join(format!(".sieve-write-test.{}.tmp", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(Error::Invalid(format!(
            "{}: cannot write here ({e})",
            dir.display()
        ))),
    }
}

/// The named numeric columns of a CSV sieve wrote (e.g. `verified.csv`),
/// one `Vec` per name, in file order; an unparsable cell reads as NaN.
pub fn read_columns(path: &Path, names: &[&str]) -> Result<Vec<Vec<f64>>> {
    let data_err = |message: String| Error::Data {
        path: path.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let header = reader
        .headers()
        .map_err(|e| data_err(format!("line 1: {e}")))?
        .clone();
    let cols: Vec<usize> = names
        .iter()
        .map(|n| {
            header
                .iter()
                .position(|h| h == *n)
                .ok_or_else(|| data_err(format!("line 1: no '{n}' column")))
        })
        .collect::<Result<_>>()?;
    let mut out = vec![Vec::new(); names.len()];
    for record in reader.records() {
        let record = record.map_err(|e| data_err(e.to_string()))?;
        for (v, &c) in out.iter_mut().zip(&cols) {
            v.push(
                record
                    .get(c)
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(f64::NAN),
            );
        }
    }
    Ok(out)
}

/// One named numeric column (see [`read_columns`]).
pub fn read_column(path: &Path, name: &str) -> Result<Vec<f64>> {
    Ok(read_columns(path, &[name])?.remove(0))
}

/// Count, mean and variance of the objective over every combination
/// evaluated (constraint-satisfying); NaN/inf objectives counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct StatsMeta {
    pub combinations_evaluated: u64,
    pub count: u64,
    pub mean: Option<f64>,
    pub variance: Option<f64>,
    /// Sum of squared deviations (what merging shards needs).
    pub m2: f64,
    pub nan: u64,
    pub infinite: u64,
}

impl From<&ObjectiveStats> for StatsMeta {
    fn from(s: &ObjectiveStats) -> Self {
        StatsMeta {
            combinations_evaluated: s.evaluated,
            count: s.count,
            mean: finite(s.mean()),
            variance: finite(s.variance()),
            m2: s.m2,
            nan: s.nan,
            infinite: s.infinite,
        }
    }
}

/// One node of a screen's statistics tree ([`StatsTree`]): the chunks
/// `start..start + 2^level` of the batch's positions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct NodeMeta {
    pub start: u64,
    pub level: u32,
    pub stats: StatsMeta,
}

/// A tree's nodes as files keep them.
pub fn tree_meta(tree: &StatsTree) -> Vec<NodeMeta> {
    tree.nodes()
        .iter()
        .map(|n| NodeMeta {
            start: n.start,
            level: n.level,
            stats: StatsMeta::from(&n.stats),
        })
        .collect()
}

/// The tree of nodes read back from a file; `None` where they do not
/// follow one another.
pub fn tree_of(nodes: &[NodeMeta]) -> Option<StatsTree> {
    let nodes: Vec<StatsNode> = nodes
        .iter()
        .map(|n| StatsNode {
            start: n.start,
            level: n.level,
            stats: ObjectiveStats::from(&n.stats),
        })
        .collect();
    StatsTree::from_nodes(&nodes)
}

impl From<&StatsMeta> for ObjectiveStats {
    fn from(m: &StatsMeta) -> Self {
        ObjectiveStats {
            evaluated: m.combinations_evaluated,
            count: m.count,
            mean: m.mean.unwrap_or(0.0),
            m2: m.m2,
            nan: m.nan,
            infinite: m.infinite,
        }
    }
}
