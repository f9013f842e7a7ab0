//! The shard meta reader of `sieve merge`: any bytes (up to four meta files
//! separated by NUL bytes) are accepted as a complete set of shards or
//! refused with an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let metas: Vec<_> = data
        .split(|&b| b == 0)
        .take(4)
        .enumerate()
        .filter_map(|(i, part)| {
            let meta = serde_json::from_slice::<sieve_run::sweep::SweepMeta>(part).ok()?;
            Some((std::path::PathBuf::from(format!("part-{i}.csv")), meta))
        })
        .collect();
    if sieve_run::merge::check_parts(&metas).is_ok() {
        let count = metas[0].1.shard.count;
        assert_eq!(metas.len() as u64, count);
    }
});
