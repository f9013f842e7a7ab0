//! `sieve kube-manifest`: a Kubernetes Indexed Job that sweeps a grid in
//! shards into a shared volume.

use anyhow::Result;

use crate::args::KubeManifestArgs;

pub fn run(a: KubeManifestArgs) -> Result<()> {
    let sweep = sieve_run::kube::KubeSweep {
        name: a.name,
        image: a.image,
        claim: a.claim,
        mount: a.mount,
        config: a.config,
        data: a.data,
        shards: a.shards,
        parallelism: a.parallelism,
        top: a.top,
        cpus: a.cpus,
    };
    let manifest = sieve_run::kube::KubeSweep::manifest(&sweep)?;
    println!("{}", serde_json::to_string_pretty(&manifest)?);
    eprintln!(
        "kubectl apply -f this; when the Job completes: sieve merge {} --out merged.csv",
        sweep.part("*")
    );
    Ok(())
}
