//! `sieve sweep`: screen a grid (or one shard) and write `sweep.csv` and
//! `sweep.meta.json`.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use sieve_core::Result;
use std::ops::ControlFlow;

use sieve_screen::{Batch, Checkpoint, Screen, ScreenBackend, ScreenJob, Screened};

use crate::files::{self, AxisRecord, NodeMeta, StatsMeta, SweepRow};
use crate::outcome::{Ended, Stop};
use crate::shard::Shard;
use crate::Study;

/// What to run.
pub struct SweepPlan<'a> {
    pub backend: &'a dyn ScreenBackend,
    /// The combinations to screen: the whole grid, or a search's proposal.
    pub batch: Batch,
    /// The part of `batch` this run screens.
    pub shard: Shard,
    pub top: usize,
    pub threads: usize,
    pub resume: Option<Checkpoint>,
    /// Once set, the screen stops within its batch ([`ScreenJob::stop`]).
    pub stop: Option<&'a AtomicBool>,
}

/// `sweep.meta.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepMeta {
    pub sieve_version: String,
    pub strategy: String,
    pub params: Vec<String>,
    pub config_hash: String,
    pub data_hash: String,
    pub data: String,
    pub objective: String,
    pub screen_window: String,
    /// Grid indices in the whole grid (constraints not applied).
    pub grid_size: u64,
    /// Bars simulated per combination (up to the end of the screen window).
    pub bars_per_combination: u64,
    pub top: usize,
    pub backend: String,
    pub shard: ShardMeta,
    pub objective_stats: StatsMeta,
    /// The per-period score-window Sharpe over every combination evaluated
    /// (the Deflated Sharpe's trials); absent where the backend has none.
    #[serde(default)]
    pub sharpe_stats: Option<StatsMeta>,
    /// Both statistics chunk by chunk (the nodes of a fixed tree): merged
    /// shards give the unsharded numbers bit for bit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objective_tree: Vec<NodeMeta>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sharpe_tree: Vec<NodeMeta>,
    pub timings: Timings,
    /// Every parameter's values in strategy order (a fixed one has one):
    /// the grid a row's grid index decodes against. The first varies
    /// slowest.
    #[serde(default)]
    pub grid: Vec<AxisRecord>,
    /// Rows of the CSV this meta describes, and the SHA-256 of its bytes.
    #[serde(default)]
    pub rows: u64,
    #[serde(default)]
    pub csv_sha256: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShardMeta {
    pub index: u64,
    pub count: u64,
    /// Grid indices `start..end` screened by this shard.
    pub start: u64,
    pub end: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub screen_s: f64,
    pub combinations_per_s: f64,
    pub bar_combinations_per_s: f64,
}

/// The screening job of `plan` (its shard of its batch), and the
/// positions it covers.
fn job_of<'a>(study: &'a Study, plan: &SweepPlan<'a>) -> (ScreenJob<'a>, std::ops::Range<u64>) {
    let positions = plan.batch.positions();
    let part = plan.shard.range(plan.batch.len());
    let range = positions.start + part.start..positions.start + part.end;
    let job = ScreenJob {
        market: study.market(),
        strategy: study.strategy(),
        space: study.space(),
        batch: plan.batch.slice(range.clone()),
        top: plan.top,
        threads: plan.threads,
        resume: plan.resume.clone(),
        series_budget: study.settings().series_budget,
        stop: plan.stop,
    };
    (job, range)
}

/// Why `plan`'s backend will hand its screen to the CPU, if it will: what
/// the one running the screen tells the user first.
pub fn fallback(study: &Study, plan: &SweepPlan<'_>) -> Option<String> {
    plan.backend.fallback(&job_of(study, plan).0)
}

/// What a screen sees after each batch: the state so far; `Break(why)`
/// stops the screen there.
pub type OnBatch<'a> = dyn FnMut(&Checkpoint) -> Result<ControlFlow<Stop>> + 'a;

/// A screen that ran to its end: the top K and the meta file's content.
pub struct Swept {
    pub screen: Screen,
    pub meta: SweepMeta,
    /// Where a screen sent elsewhere ran (`None`: in this process).
    pub placement: Option<crate::rundir::Placement>,
}

/// Screens `plan.shard` of `plan.batch` of the study's grid. `on_batch`
/// sees the progress after each batch; `Break(why)` from it stops the
/// screen there, and `why` is how it ended.
pub fn run(
    study: &Study,
    plan: &SweepPlan<'_>,
    on_batch: &mut OnBatch<'_>,
) -> Result<Ended<Swept>> {
    study.space().check_satisfiable()?;
    let (job, range) = job_of(study, plan);
    let started = Instant::now();
    let mut why = None;
    let screened = plan.backend.screen(&job, &mut |c| {
        Ok(match on_batch(c)? {
            ControlFlow::Continue(()) => ControlFlow::Continue(()),
            ControlFlow::Break(stop) => {
                why = Some(stop);
                ControlFlow::Break(())
            }
        })
    })?;
    let screen = match screened {
        Screened::Done(screen) => screen,
        // A backend stops only when asked to.
        Screened::Stopped => return Ok(Ended::Stopped(why.unwrap_or(Stop::Interrupted))),
    };
    let secs = started.elapsed().as_secs_f64();
    // The speed of this run of the command: a resumed screen's earlier
    // combinations took earlier time.
    let before = plan
        .resume
        .as_ref()
        .map_or(0, |c| c.stats.total().evaluated);
    let (stats, sharpe) = (screen.stats.total(), screen.sharpe.total());
    let evaluated = stats.evaluated.saturating_sub(before) as f64;
    // Every instrument is simulated up to its screen window's end (a
    // portfolio's: its bars up to the end of the portfolio's).
    let market = study.market();
    let bars_per_combination: u64 = match &market.portfolio {
        Some(book) => {
            let end = market.primary().scoring.screen.end;
            (0..book.members.len())
                .map(|m| book.schedule.bars_until(m, end) as u64)
                .sum()
        }
        None => market
            .instruments
            .iter()
            .map(|i| i.scoring.screen.end as u64)
            .sum(),
    };
    let bars = bars_per_combination as f64;
    let meta = SweepMeta {
        sieve_version: env!("CARGO_PKG_VERSION").to_string(),
        strategy: study.strategy().name().to_string(),
        params: study.param_names().iter().map(|s| s.to_string()).collect(),
        config_hash: study.config_hash().to_string(),
        data_hash: study.data_hash().to_string(),
        data: study.data_label().to_string(),
        objective: study.scoring().objective.name().to_string(),
        screen_window: study.scoring().screen.kind.to_string(),
        grid_size: study.space().size(),
        bars_per_combination,
        top: plan.top,
        backend: plan.backend.name().to_string(),
        shard: ShardMeta {
            index: plan.shard.index,
            count: plan.shard.count,
            start: range.start,
            end: range.end,
        },
        objective_stats: StatsMeta::from(&stats),
        sharpe_stats: (sharpe.evaluated > 0).then(|| StatsMeta::from(&sharpe)),
        objective_tree: files::tree_meta(&screen.stats),
        // An empty part keeps its (empty) chunks too: the merge appends
        // trees without a gap.
        sharpe_tree: match sharpe.evaluated > 0 || stats.evaluated == 0 {
            true => files::tree_meta(&screen.sharpe),
            false => Vec::new(),
        },
        timings: Timings {
            screen_s: secs,
            combinations_per_s: evaluated / secs,
            bar_combinations_per_s: evaluated * bars / secs,
        },
        grid: grid_of(study),
        rows: 0,
        csv_sha256: String::new(),
    };
    Ok(Ended::Done(Swept {
        screen,
        meta,
        placement: None,
    }))
}

/// The rows of `sweep.csv` for a screen's top K.
pub fn rows(study: &Study, screen: &Screen) -> Vec<SweepRow> {
    screen
        .top
        .iter()
        .map(|s| SweepRow {
            grid_index: s.index,
            params: study.space().params_of(s.index),
            score: s.score,
            trades: s.trades,
        })
        .collect()
}

/// Every parameter's values, in strategy order.
pub(crate) fn grid_of(study: &Study) -> Vec<AxisRecord> {
    let space = study.space();
    let base = space.params_of(0);
    study
        .param_names()
        .iter()
        .enumerate()
        .map(|(i, name)| AxisRecord {
            name: name.to_string(),
            values: match space.axes.iter().find(|a| a.param == i) {
                Some(axis) => axis.values.clone(),
                None => vec![base[i]],
            },
        })
        .collect()
}

/// Writes `sweep.csv` and `sweep.meta.json` (the CSV first: a meta file
/// always describes a complete CSV), the meta with the CSV's row count and
/// hash, which `sieve merge` checks.
pub fn write(path: &Path, study: &Study, screen: &Screen, meta: &SweepMeta) -> Result<()> {
    let rows = rows(study, screen);
    let text = files::sweep_csv(&study.param_names(), &rows);
    sieve_core::format::write_atomic(path, text.as_bytes())?;
    let meta = meta.clone().describing(&text, rows.len());
    files::write_json(&files::meta_path(path), &meta)
}

impl SweepMeta {
    /// This meta, describing the CSV `text` of `rows` rows.
    pub fn describing(mut self, text: &str, rows: usize) -> SweepMeta {
        self.rows = rows as u64;
        self.csv_sha256 = crate::study::hash_text(text);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Shard;
    use sieve_screen::{CpuBackend, Scored, StatsTree};

    /// A list of grid indices (a search's generation) and a range (a grid),
    /// each screened whole and in shards: the shards' top K together and
    /// their statistics trees appended are the whole screen's, bit for bit
    /// (the Deflated Sharpe's V and the merged meta do not depend on the
    /// split).
    #[test]
    fn shards_of_a_list_or_a_range_merge_to_the_whole_screen() {
        let config = sieve_core::config::Config::parse(
            "[strategy]\nname = \"sma_cross\"\nconstraints = [\"fast < slow\"]\n[strategy.params]\nfast = { start = 2, stop = 60, step = 1 }\nslow = { start = 10, stop = 300, step = 2 }\n[score]\nscore_start = \"50%\"\n",
        )
        .unwrap();
        let study =
            Study::new(config, sieve_core::data::synth(900, 3), "synthetic".into()).unwrap();
        let size = study.space().size();
        let list: Vec<u64> = (0..size).filter(|i| i % 3 != 1).collect();
        for batch in [Batch::whole(size), Batch::of_indices(list, size).unwrap()] {
            let screen = |shard: Shard| {
                let plan = SweepPlan {
                    backend: &CpuBackend,
                    batch: batch.clone(),
                    shard,
                    top: 200,
                    threads: 2,
                    resume: None,
                    stop: None,
                };
                match run(&study, &plan, &mut |_| Ok(ControlFlow::Continue(()))).unwrap() {
                    Ended::Done(swept) => swept.screen,
                    Ended::Stopped(_) => unreachable!("nothing stops it"),
                }
            };
            let whole = screen(Shard::WHOLE);
            assert!(
                whole.stats.nodes().len() > 1,
                "one chunk only: the test would not test"
            );
            for count in [2, 3, 5] {
                let (mut stats, mut sharpe, mut top) =
                    (StatsTree::default(), StatsTree::default(), Vec::new());
                for k in 0..count {
                    let part = screen(Shard::new(k, count).unwrap());
                    stats.append(&part.stats);
                    sharpe.append(&part.sharpe);
                    top.extend(part.top);
                }
                top.sort_by(Scored::rank_cmp);
                top.truncate(200);
                assert_eq!(stats, whole.stats, "{count} shards");
                assert_eq!(sharpe, whole.sharpe, "{count} shards");
                assert_eq!(top, whole.top, "{count} shards");
            }
        }
    }
}
