//! `sieve verify`: re-run a sweep's candidates through the exact engine in
//! parallel, ranked on the score window, and print how far screen and
//! verification agree.

use std::io::Write;

use anyhow::Result;
use sieve_run::{candidates, verify};

use crate::args::VerifyArgs;
use crate::output::human;
use crate::progress::Progress;

pub fn run(a: VerifyArgs) -> Result<()> {
    let config =
        crate::inputs::load_config(&a.common, &[("verify.top", a.top.map(|t| t.to_string()))])?;
    let strategy = config.config.strategy()?;
    let top = config.settings.verify_top;
    {
        let mut inputs = crate::inputs::input_paths(&a.common, &config.config);
        inputs.extend([a.candidates.as_path()]);
        sieve_run::files::check_output(&a.out, &inputs)?;
    }
    // Loading the bars and reading the candidates overlap, on the same
    // number of threads as the verification.
    let pool = sieve_screen::thread_pool(a.threads)?;
    let (inputs, list) = pool.install(|| {
        rayon::join(
            || crate::inputs::with_config(&a.common, config),
            || candidates::read(&a.candidates, &*strategy, Some(top)),
        )
    });
    let study = inputs?.into_study()?;
    let list = list?;
    let progress = Progress::new(list.len() as u64, "verify", "cand", a.common.verbose);
    let result = verify::verify(&study, list, a.threads, Some(&crate::INTERRUPT), &|| {
        progress.inc()
    })?;
    let sieve_run::control::Ended::Done(result) = result else {
        return Err(crate::Exit {
            status: crate::status::INTERRUPTED,
            message: "interrupted".into(),
        }
        .into());
    };
    progress.finish();
    verify::write_csv(&a.out, &result)?;
    let mut out = std::io::stdout().lock();
    // The sweep's meta beside the candidates says whether its screen was
    // exact (then the ranks agree by construction).
    let exact = sieve_run::files::read_json::<sieve_run::sweep::SweepMeta>(
        &sieve_run::files::meta_path(&a.candidates),
    )
    .is_ok_and(|m| {
        m.config_hash == study.config_hash() && m.backend == "cpu" && m.screen_window == "score"
    });
    writeln!(out, "{}", summary(&study, &result, exact))?;
    writeln!(out, "wrote {}", a.out.display())?;
    if result.rows.first().is_none_or(|r| r.score.is_nan()) {
        return Err(crate::Exit {
            status: crate::status::NO_RESULT,
            message: sieve_run::optimize::no_finite_objective(&study),
        }
        .into());
    }
    Ok(())
}

/// The agreement summary printed after verifying.
pub fn summary(study: &sieve_run::Study, v: &verify::Verification, exact: bool) -> String {
    let ag = &v.agreement;
    let mut s = format!(
        "verified {} candidates of {} on the score window ({} = objective)\n",
        ag.candidates,
        study.strategy().name(),
        study.scoring().objective
    );
    if let Some(best) = v.rows.first().filter(|r| !r.score.is_nan()) {
        s.push_str(&format!(
            "best: {} = {} (screen rank {}, grid index {})\n",
            study.scoring().objective,
            human(best.score),
            best.candidate.screen_rank,
            best.candidate.grid_index
        ));
    }
    s.push_str(&match exact {
        true => "screen/verify agreement: exact (the CPU screen scored the score window with this engine)\n".to_string(),
        false => format!("screen/verify agreement: Spearman {}\n", human(ag.spearman)),
    });
    let ranks: Vec<String> = ag.top_screen_ranks.iter().map(u64::to_string).collect();
    s.push_str(&format!(
        "screen ranks of the verified top {}: {}",
        ranks.len(),
        ranks.join(", ")
    ));
    if ag.best_from_bottom_tenth {
        s.push_str(&format!(
            "\nwarning: the verified best came from screen rank {} of {} (the bottom tenth): the sweep kept too few candidates; raise sweep.top / verify.top",
            ag.top_screen_ranks.first().copied().unwrap_or(0),
            ag.candidates
        ));
    }
    s
}
