use anyhow::Result;
use sieve_run::shard::Shard;
use sieve_run::sweep::{self, SweepPlan};

use crate::args::SweepArgs;
use crate::output::human;
use crate::progress::Progress;

pub fn run(a: SweepArgs) -> Result<()> {
    let study = crate::inputs::load(&a.common)?.into_study()?;
    sieve_run::files::check_output(
        &a.out,
        &crate::inputs::input_paths(&a.common, &study.config),
    )?;
    let shard = match &a.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::from_env(|k| std::env::var(k).ok(), a.shards)?.unwrap_or(Shard::WHOLE),
    };
    let top = a.top.unwrap_or(study.config.sweep_top);
    if top == 0 {
        anyhow::bail!("--top must be at least 1");
    }
    let backend =
        sieve_screen::backend_by_name(a.backend.as_deref().unwrap_or(&study.config.backend))?;
    let range = shard.range(study.space.size());
    if a.common.verbose {
        eprintln!("backend: {}", backend.describe());
        eprintln!(
            "sweep: {} on {}: grid {} = {} combinations; shard {shard} = indices {}..{}",
            study.strategy.name(),
            study.data_label,
            study.space,
            study.space.size(),
            range.start,
            range.end
        );
    }
    let progress = Progress::new(range.end - range.start, "sweep", "comb", a.common.verbose);
    let plan = SweepPlan {
        backend: backend.as_ref(),
        shard,
        top,
        threads: a.threads,
        resume: None,
    };
    let (screen, meta) = sweep::run(&study, &plan, &mut |c| {
        progress.set(c.next - range.start);
        Ok(())
    })?;
    progress.finish();
    sweep::write(&a.out, &study, &screen, &meta)?;
    let best = screen
        .top
        .first()
        .map(|s| {
            format!(
                "best {} {} at grid index {}",
                study.scoring.objective,
                human(s.score),
                s.index
            )
        })
        .unwrap_or_else(|| "no combination satisfied the constraints".into());
    eprintln!(
        "screened {} combinations in {:.2} s ({} comb/s, {} bar-comb/s); {best}; wrote {} ({} rows) and its .meta.json",
        meta.objective_stats.combinations_evaluated,
        meta.timings.screen_s,
        human(meta.timings.combinations_per_s),
        human(meta.timings.bar_combinations_per_s),
        a.out.display(),
        screen.top.len()
    );
    Ok(())
}
