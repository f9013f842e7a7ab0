//! Candidate files for `sieve verify`: a `sweep.csv`, or any CSV whose
//! columns include the strategy's parameters. Every row is checked before
//! any work starts; errors name the row (file line) and column.

use std::path::Path;

use rayon::prelude::*;
use sieve_core::grid::GridIndex;
use sieve_core::strategy::Strategy;
use sieve_core::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Line of the file the candidate came from.
    pub line: u64,
    /// From a `grid_index` column; else the row's position (from 0).
    pub grid_index: GridIndex,
    /// From a `rank` column; else the row's position (from 1).
    pub screen_rank: u64,
    /// Every parameter in strategy order.
    pub params: Vec<f64>,
}

/// Reads the first `top` candidates (all when `None`) in file order.
pub fn read(path: &Path, strategy: &dyn Strategy, top: Option<usize>) -> Result<Vec<Candidate>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    parse(&bytes, strategy, top).map_err(|message| Error::Data {
        path: path.to_path_buf(),
        message,
    })
}

pub fn parse(
    bytes: &[u8],
    strategy: &dyn Strategy,
    top: Option<usize>,
) -> Result<Vec<Candidate>, String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("empty file: expected a header and at least one candidate".into());
    }
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(bytes);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| format!("line 1: {e}"))?
        .iter()
        .map(|h| h.to_string())
        .collect();
    let column = |name: &str| header.iter().position(|h| h.eq_ignore_ascii_case(name));
    let params: Vec<(usize, usize)> = strategy
        .params()
        .iter()
        .enumerate()
        .filter_map(|(i, p)| column(&p.name).map(|c| (i, c)))
        .collect();
    // Every parameter needs its column: a misspelt one must not be
    // replaced by a default without a word.
    let missing: Vec<&str> = strategy
        .params()
        .iter()
        .filter(|p| column(&p.name).is_none())
        .map(|p| p.name.as_ref())
        .collect();
    if !missing.is_empty() {
        let names: Vec<_> = strategy.params().iter().map(|p| p.name.as_ref()).collect();
        return Err(format!(
            "line 1: missing parameter column(s) {} of '{}' (it needs {}); found: {}",
            missing.join(", "),
            strategy.name(),
            names.join(", "),
            header.join(", ")
        ));
    }
    let (index_col, rank_col) = (column("grid_index"), column("rank"));
    let defaults = vec![0.0; strategy.params().len()];
    let limit = top.unwrap_or(usize::MAX);
    // Split into records in order, then parse the fields in parallel (the
    // number parsing is most of the cost); the first error by line wins.
    let mut records = Vec::new();
    for record in reader.records() {
        if records.len() >= limit {
            break;
        }
        records.push(record.map_err(|e| match e.position() {
            Some(p) => format!("line {}: {e}", p.line()),
            None => e.to_string(),
        })?);
    }
    let parse_row = |(row, record): (usize, &csv::StringRecord)| -> Result<Candidate, String> {
        let row = row as u64;
        let line = record.position().map_or(0, |p| p.line());
        let whole = |col: usize| -> Result<u64, String> {
            record[col].parse::<u64>().map_err(|_| {
                format!(
                    "line {line}: column '{}': \"{}\" is not a whole number",
                    header[col], &record[col]
                )
            })
        };
        let mut p = defaults.clone();
        for &(i, col) in &params {
            let spec = &strategy.params()[i];
            let v: f64 = record[col].parse().map_err(|_| {
                format!(
                    "line {line}: column '{}': cannot parse \"{}\" as a number",
                    header[col], &record[col]
                )
            })?;
            spec.check(v)
                .map_err(|e| format!("line {line}: column '{}': {e}", header[col]))?;
            p[i] = v;
        }
        Ok(Candidate {
            line,
            grid_index: index_col.map(whole).transpose()?.unwrap_or(row),
            screen_rank: rank_col.map(whole).transpose()?.unwrap_or(row + 1),
            params: p,
        })
    };
    let out: Vec<Candidate> = records
        .par_iter()
        .enumerate()
        .map(parse_row)
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<_, String>>()?;
    if out.is_empty() {
        return Err("line 1: the file has a header but no candidates".into());
    }
    if index_col.is_some() {
        // A grid index names one combination: twice is a file put together
        // wrongly (two sweeps concatenated, a row pasted twice).
        let mut first_line = std::collections::HashMap::new();
        for c in &out {
            if let Some(earlier) = first_line.insert(c.grid_index, c.line) {
                return Err(format!(
                    "line {}: grid index {} appears again (first on line {earlier})",
                    c.line, c.grid_index
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sma() -> &'static dyn Strategy {
        sieve_core::strategy::lookup("sma_cross").unwrap()
    }

    #[test]
    fn sweep_file_columns_and_defaults() {
        let c = parse(
            b"rank,grid_index,fast,slow,score\n1,17,5,100,0.5\n2,3,8,90,0.4\n",
            sma(),
            None,
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].grid_index, c[0].screen_rank, c[0].params.clone()),
            (17, 1, vec![5.0, 100.0])
        );
        assert_eq!(c[1].line, 3);
        let c = parse(b"slow,fast\n50,5\n60,6\n70,7\n", sma(), Some(2)).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[1].grid_index, c[1].screen_rank, c[1].params.clone()),
            (1, 2, vec![6.0, 60.0])
        );
    }

    #[test]
    fn errors_name_row_and_column() {
        for (text, want) in [
            ("", "empty"),
            ("fast,slow\n", "no candidates"),
            ("a,b\n1,2\n", "missing parameter column(s) fast, slow"),
            // A misspelt column is named, not filled with a default.
            ("fast,slwo\n5,50\n", "missing parameter column(s) slow"),
            ("fast,slow\n5,50\n5,x\n", "line 3: column 'slow'"),
            ("fast,slow\n0,50\n", "line 2: column 'fast'"),
            ("fast,slow\n5.5,50\n", "whole"),
            ("rank,fast,slow\n-1,5,50\n", "line 2: column 'rank'"),
            ("fast,slow\n5,50,1\n", "line 2"),
        ] {
            let e = parse(text.as_bytes(), sma(), None).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
