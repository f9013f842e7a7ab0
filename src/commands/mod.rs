mod backtest;
mod strategies;
mod synth;

use anyhow::Result;

use crate::args::{Cli, Command};

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Backtest(a) => backtest::run(a),
        Command::Strategies => strategies::run(),
        Command::Synth(a) => synth::run(a),
    }
}
