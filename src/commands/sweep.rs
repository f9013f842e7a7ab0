//! `sieve sweep`: screen every combination of the grid (or one shard) and
//! write the best K with its meta; optionally a rule strategy's WGSL kernel.

use anyhow::Result;
use sieve_run::shard::Shard;
use sieve_run::{jobs, sweep};

use crate::args::SweepArgs;
use crate::output::human;
use crate::progress::Progress;
use crate::{status, Exit};

pub fn run(a: SweepArgs) -> Result<()> {
    let flags = [
        ("sweep.top", a.top.map(|t| t.to_string())),
        (
            "sweep.backend",
            a.backend.as_deref().map(crate::inputs::toml_string),
        ),
    ];
    let study = crate::inputs::load(&a.common, &flags)?.into_study()?;
    sieve_run::files::check_output(
        &a.out,
        &crate::inputs::input_paths(&a.common, study.config()),
    )?;
    let shard = match &a.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::from_env(|k| std::env::var(k).ok(), a.shards)?.unwrap_or(Shard::WHOLE),
    };
    let top = study.settings().sweep_top;
    let backend = jobs::backend(&study)?;
    let range = shard.range(study.space().size());
    if let Some(path) = &a.emit_wgsl {
        let wgsl = sieve_screen::wgsl::strategy_module(study.strategy())
            .map_err(|why| anyhow::anyhow!("--emit-wgsl: {why}"))?;
        sieve_core::format::write_atomic(path, wgsl.as_bytes())?;
        eprintln!(
            "wrote the GPU kernel of '{}' ({} bytes of WGSL) to {}",
            study.strategy().name(),
            wgsl.len(),
            path.display()
        );
    }
    if a.common.verbose {
        eprintln!("backend: {}", backend.describe());
        if backend.name() == "gpu" {
            eprintln!("{}", crate::inputs::gpu_kernel_note(study.strategy()));
        } else {
            let path = match &study.market().portfolio {
                Some(book) if book.weights.is_some() => format!(
                    "a portfolio of {} instruments held at target weights: each combination's weights (rank, count and total across the instruments), then its rebalances, one combination at a time",
                    book.members.len()
                ),
                Some(book) => format!(
                    "a portfolio of {} instruments from one account: each instrument's changes by its strategy's lane code ({}), then the shared cash one combination at a time",
                    book.members.len(),
                    sieve_core::lanes::screen_path(study.strategy(), &book.members[0].scoring)
                ),
                None => sieve_core::lanes::screen_path(study.strategy(), study.scoring()),
            };
            eprintln!("screen: {path}");
        }
        let budget = study.settings().series_budget;
        let series =
            sieve_screen::SeriesPlan::of(study.strategy(), study.space(), study.market(), budget);
        eprintln!("{}", series.describe(budget));
    }
    let shard_note = if shard == Shard::WHOLE {
        String::new()
    } else {
        format!("; shard {shard} = indices {}..{}", range.start, range.end)
    };
    eprintln!(
        "sweep: {} on {}: grid {} = {} combinations{shard_note}",
        study.strategy().name(),
        study.data_label(),
        study.space(),
        study.space().size(),
    );
    let progress = Progress::new(range.end - range.start, "sweep", "comb", a.common.verbose);
    let outcome = jobs::sweep(
        &study,
        backend.as_ref(),
        shard,
        top,
        a.threads,
        Some(&crate::INTERRUPT),
        &mut |note| eprintln!("{note}"),
        &mut |done| progress.set(done),
    )?;
    let jobs::Ended::Done(sieve_run::sweep::Swept { screen, meta, .. }) = outcome else {
        return Err(Exit {
            status: status::INTERRUPTED,
            message: "interrupted".into(),
        }
        .into());
    };
    progress.finish();
    sweep::write(&a.out, &study, &screen, &meta)?;
    let best = screen
        .top
        .first()
        .filter(|s| !s.score.is_nan())
        .map(|s| {
            format!(
                "best {} {} at grid index {}",
                study.scoring().objective,
                human(s.score),
                s.index
            )
        })
        .unwrap_or_else(|| "no finite objective".into());
    eprintln!(
        "screened {} combinations in {:.2} s ({} comb/s, {} bar-comb/s); {best}; wrote {} ({} rows) and its .meta.json",
        meta.objective_stats.combinations_evaluated,
        meta.timings.screen_s,
        human(meta.timings.combinations_per_s),
        human(meta.timings.bar_combinations_per_s),
        a.out.display(),
        screen.top.len()
    );
    if screen.top.first().is_none_or(|s| s.score.is_nan()) {
        // One shard's part may hold nothing finite (or nothing at all, on a
        // grid of fewer chunks than shards): the merge judges the whole.
        if meta.shard.count > 1 {
            eprintln!(
                "note: shard {}/{} has no finite objective; `sieve merge` of all the shards decides",
                meta.shard.index, meta.shard.count
            );
            return Ok(());
        }
        return Err(Exit {
            status: status::NO_RESULT,
            message: sieve_run::optimize::no_finite_objective(&study),
        }
        .into());
    }
    Ok(())
}
