//! The `sieve` subcommands, one file each, and the dispatch from the parsed
//! command line to each one's `run`.

mod backtest;
mod kube;
mod merge;
pub(crate) mod optimize;
mod report;
mod shard_job;
mod strategies;
mod sweep;
mod synth;
mod verify;
mod walkforward;

use anyhow::Result;

use crate::args::{Cli, Command};

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Optimize(a) => optimize::run(a),
        Command::Walkforward(a) => walkforward::run(a),
        Command::Report(a) => report::run(a),
        Command::Backtest(a) => backtest::run(a),
        Command::Strategies(a) => strategies::run(a),
        Command::Synth(a) => synth::run(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Verify(a) => verify::run(a),
        Command::ShardJob(a) => shard_job::run(a),
        Command::KubeManifest(a) => kube::run(a),
    }
}
