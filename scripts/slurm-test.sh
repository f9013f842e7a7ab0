#!/usr/bin/env bash
# Proves sharded sweeps on a real Slurm: starts a single-node cluster on
# loopback under a temporary folder (no systemd), submits `sieve sweep` as a
# job array of 4 and `sieve merge` as a job that depends on it (afterok),
# then checks the merged file is byte-identical to an unsharded sweep.
#
#   scripts/slurm-test.sh                 # must pass
#   scripts/slurm-test.sh --drop-shard 2  # removes part 2 before the merge: must FAIL
#
# Installs Debian's slurmctld slurmd slurm-client munge when missing. Stops
# every daemon it started (by PID) and removes its folder on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

drop=""
if [ "${1:-}" = "--drop-shard" ]; then drop=${2:?--drop-shard needs a shard number}; fi

log() { echo "slurm-test: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

SIEVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/sieve
[ -x "$SIEVE" ] || cargo build --release -q

# shellcheck source=scripts/slurm-cluster.sh
. scripts/slurm-cluster.sh
mkdir -p "$T/work/parts"

# The sweep: a grid with a constraint, small enough for CI.
W=$T/work
cat > "$W/sweep.toml" <<'TOML'
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 80, step = 1 }
slow = { start = 10, stop = 250, step = 5 }
[score]
score_start = "2019-01-01"
TOML
"$SIEVE" synth --bars 4000 --seed 7 --out "$W/bars.csv" 2>/dev/null

# What a user writes (README, "Sweeping on a cluster").
cat > "$W/sweep.sh" <<SH
#!/bin/bash
#SBATCH --job-name=sieve-sweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=1
#SBATCH --output=$W/sweep-%a.log
"$SIEVE" sweep --config "$W/sweep.toml" --data "$W/bars.csv" --top 500 --out "$W/parts/part-\${SLURM_ARRAY_TASK_ID}.csv"
SH

array=$(sbatch --parsable --chdir="$W" "$W/sweep.sh")
log "submitted array job $array"
# Held only when a shard is to be removed first (the test of the test).
hold=()
[ -n "$drop" ] && hold=(--hold)
merge=$(sbatch --parsable "${hold[@]}" --dependency=afterok:"$array" --chdir="$W" --output="$W/merge.log" \
  --wrap "\"$SIEVE\" merge $W/parts/part-*.csv --out $W/merged.csv")
log "submitted merge job $merge (afterok:$array)"

job_state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
wait_job() {
  for _ in $(seq 600); do
    # An array job reports one line per task; wait until none is pending or running.
    if ! squeue -h -j "$1" 2>/dev/null | grep -q .; then return 0; fi
    sleep 0.2
  done
  log "job $1 did not finish in 120 s"; squeue || true; return 1
}

wait_job "$array"
for k in 0 1 2 3; do
  [ -s "$W/parts/part-$k.csv" ] || { log "shard $k wrote nothing"; cat "$W/sweep-$k.log" >&2 || true; exit 1; }
done
if [ -n "$drop" ]; then
  log "removing shard $drop before the merge (this run must fail)"
  rm -f "$W/parts/part-$drop.csv" "$W/parts/part-$drop.meta.json"
fi
[ -n "$drop" ] && scontrol release "$merge"
wait_job "$merge"
state=$(job_state "$merge")
log "merge job: $state"
cat "$W/merge.log" >&2 || true
[ "$state" = "COMPLETED" ] || { log "the merge job failed"; exit 1; }

"$SIEVE" sweep --config "$W/sweep.toml" --data "$W/bars.csv" --top 500 --out "$W/whole.csv" 2>/dev/null
if cmp -s "$W/merged.csv" "$W/whole.csv"; then
  log "PASS: merged shards == unsharded sweep ($(wc -l < "$W/whole.csv") lines)"
else
  log "FAIL: merged shards differ from the unsharded sweep"
  diff "$W/merged.csv" "$W/whole.csv" | head >&2 || true
  exit 1
fi
