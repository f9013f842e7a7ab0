#!/usr/bin/env bash
# The optimize loop on a real Slurm (a single-node cluster on loopback,
# scripts/slurm-cluster.sh): every screen a job array of 4 shards, each
# result byte-identical to the same run on one machine.
#
#   1. a grid run and an evolve search: best.json and every iteration's
#      verified.csv equal the local run's;
#   2. the controller killed (SIGKILL) while its shards are out and one of
#      them cancelled, then run again: it finds them, submits only the
#      cancelled one again, and ends identical;
#   3. a queued shard cancelled with scancel: submitted again, same result;
#   4. a walk-forward over Slurm: walkforward.csv and every fold's best.json
#      equal the local one's.
#
# Prints the per-iteration overhead (submit → merged) of the executor.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

log() { echo "slurm-optimize-test: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
fail() { log "FAIL: $*"; exit 1; }

SIEVE=${CARGO_TARGET_DIR:-$ROOT/target}/release/sieve
[ -x "$SIEVE" ] || cargo build --release -q

# shellcheck source=scripts/slurm-cluster.sh
. scripts/slurm-cluster.sh
W=$T/work
mkdir -p "$W"
"$SIEVE" synth --bars 3000 --seed 11 --out "$W/bars.csv" 2>/dev/null

cat > "$W/grid.toml" <<'TOML'
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 60, step = 1 }
slow = { start = 10, stop = 240, step = 2 }
[score]
score_start = "40%"
holdout_start = "80%"
[sweep]
top = 300
[verify]
top = 300
[optimize]
iterations = 3
[executor]
shards = 4
poll_s = 0.2
cpus_per_task = 1
TOML
cat > "$W/evolve.toml" <<'TOML'
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 200, step = 1 }
slow = { start = 10, stop = 600, step = 1 }
[score]
score_start = "40%"
holdout_start = "80%"
[sweep]
top = 200
[verify]
top = 200
[search]
method = "evolve"
batch = 3000
evaluations = 9000
[executor]
shards = 4
poll_s = 0.2
cpus_per_task = 1
TOML
cat > "$W/wf.toml" <<'TOML'
[strategy]
name = "sma_cross"
constraints = ["fast < slow"]
[strategy.params]
fast = { start = 2, stop = 40, step = 2 }
slow = { start = 10, stop = 200, step = 5 }
[sweep]
top = 100
[verify]
top = 100
[optimize]
iterations = 2
[walkforward]
train = "1000"
test = "500"
[executor]
shards = 4
poll_s = 0.2
cpus_per_task = 1
TOML

run() { # name kind config [command] — paths relative to $W, as a user types them
  local name=$1 kind=$2 config=$3 cmd=${4:-optimize}
  (cd "$W" && "$SIEVE" "$cmd" --config "$config" --data bars.csv --out "$name" --executor "$kind") \
    >"$W/$name.out" 2>"$W/$name.err" || { cat "$W/$name.err" >&2; fail "$name exited $?"; }
}

same_run() { # local slurm
  cmp -s "$W/$1/best.json" "$W/$2/best.json" || { diff "$W/$1/best.json" "$W/$2/best.json" | head >&2; fail "$2/best.json differs from $1's"; }
  local n=0
  for f in "$W/$1"/iter-*/verified.csv; do
    local g=$W/$2/${f#"$W/$1/"}
    cmp -s "$f" "$g" || fail "$g differs from $f"
    n=$((n + 1))
  done
  [ "$n" -ge 2 ] || fail "$1 ran $n iteration(s): the test would not test the loop"
  [ -d "$W/$2/cluster" ] || fail "$2 kept no cluster jobs: did it run on Slurm?"
  log "PASS: $2 == $1 (best.json and $n verified.csv)"
}

# Every shard of every job submitted exactly once (no resubmission).
submitted_once() {
  python3 - "$1" <<'PY'
import glob, json, sys, collections
bad = []
for path in glob.glob(sys.argv[1] + "/**/cluster/*/state.json", recursive=True):
    n = collections.Counter(s["shard"] for s in json.load(open(path))["submissions"])
    bad += [f"{path}: shard {k} submitted {c} times" for k, c in n.items() if c != 1]
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

# 1. grid and search.
run grid-local local grid.toml
run grid-slurm slurm grid.toml
same_run grid-local grid-slurm
submitted_once "$W/grid-slurm" || fail "a shard was submitted twice with nothing failing"
python3 - "$W/grid-slurm/run.json" "$W/grid-local/run.json" <<'PY' >&2
import json, sys
run, local = (json.load(open(p))["iterations"] for p in sys.argv[1:3])
for it, here in zip(run, local):
    p = it.get("placement")
    if p:
        print(f"slurm-optimize-test: iteration {it['iteration']}: {p['shards']} shards, wall {p['wall_s']:.2f} s (longest queue {p['longest_queue_s']:.2f} s, longest run {p['longest_run_s']:.2f} s); the screen in one process {here['sweep_s']:.2f} s")
PY
# What Slurm alone takes for the same array (4 tasks that do nothing,
# cpus-per-task 1): the part of each iteration's wall time that is the
# queue, not sieve.
for i in 1 2 3; do
  t0=$(date +%s.%N)
  id=$(sbatch --parsable --array=0-3 --cpus-per-task=1 --output=/dev/null --wrap true)
  while squeue -h -r -j "$id" 2>/dev/null | grep -q .; do sleep 0.05; done
  python3 -c "import sys; print('slurm-optimize-test: baseline: an array of 4 empty tasks took %.2f s (submit to gone from squeue)' % ($(date +%s.%N) - $t0))" >&2
done

run evolve-local local evolve.toml
run evolve-slurm slurm evolve.toml
same_run evolve-local evolve-slurm

# 2. the controller killed while its shards are out; one of them cancelled
#    meanwhile; the controller run again: it waits for the others, submits
#    the cancelled one again, and nothing else twice.
"$SIEVE" optimize --config "$W/grid.toml" --data "$W/bars.csv" --out "$W/killed" --executor slurm >"$W/killed.out" 2>"$W/killed.err" &
pid=$!
for _ in $(seq 300); do
  compgen -G "$W/killed/cluster/*/state.json" >/dev/null && break
  sleep 0.05
done
kill -9 "$pid" 2>/dev/null || fail "the controller ended before its first shards were out"
wait "$pid" 2>/dev/null || true
compgen -G "$W/killed/cluster/*/state.json" >/dev/null || fail "no shard was out when the controller was killed"
orphan=$(squeue -h -r -o %i | head -1)
[ -n "$orphan" ] || fail "the killed controller's shards had all ended: nothing to cancel"
scancel "$orphan"
log "killed the controller with shards out; cancelled its shard $orphan"
run killed slurm grid.toml
same_run grid-local killed
python3 - "$W/killed" "$orphan" <<'PY' || fail "the controller run again did not submit exactly the cancelled shard again"
import glob, json, sys, collections
counts = []
for path in glob.glob(sys.argv[1] + "/cluster/*/state.json"):
    subs = json.load(open(path))["submissions"]
    counts += [(path, k, c) for k, c in collections.Counter(s["shard"] for s in subs).items()]
twice = [(p, k) for p, k, c in counts if c == 2]
assert all(c in (1, 2) for _, _, c in counts), counts
assert len(twice) == 1, twice
cancelled = int(sys.argv[2].split("_")[1])
assert twice[0][1] == cancelled, (twice, sys.argv[2])
PY
log "PASS: the controller run again submitted the cancelled shard again and no other"

# 3. a queued shard cancelled: submitted again.
"$SIEVE" optimize --config "$W/grid.toml" --data "$W/bars.csv" --out "$W/cancelled" --executor slurm >"$W/cancelled.out" 2>"$W/cancelled.err" &
pid=$!
victim=""
for _ in $(seq 400); do
  victim=$(squeue -h -r -t PENDING -o %i | head -1)
  [ -n "$victim" ] && break
  sleep 0.05
done
[ -n "$victim" ] || fail "no shard was ever queued (2 CPUs, 4 shards of 1): cannot test scancel"
scancel "$victim"
log "cancelled queued shard $victim"
wait "$pid" || { cat "$W/cancelled.err" >&2; fail "the run with a cancelled shard failed"; }
same_run grid-local cancelled
if submitted_once "$W/cancelled" >/dev/null; then fail "the cancelled shard $victim was not submitted again"; fi
grep -q "ended without its part: submitted again" "$W/cancelled.err" || fail "no note of the resubmission"
log "PASS: cancelled shard $victim submitted again"

# 4. walk-forward.
run wf-local local wf.toml walkforward
run wf-slurm slurm wf.toml walkforward
cmp -s "$W/wf-local/walkforward.csv" "$W/wf-slurm/walkforward.csv" || fail "walkforward.csv differs"
folds=0
for f in "$W"/wf-local/fold-*/best.json; do
  cmp -s "$f" "$W/wf-slurm/${f#"$W/wf-local/"}" || fail "${f#"$W/wf-local/"} differs"
  folds=$((folds + 1))
done
[ "$folds" -ge 2 ] || fail "$folds fold(s): the test would not test"
[ -d "$W/wf-slurm/cluster" ] || fail "the walk-forward kept no cluster jobs"
log "PASS: walk-forward over Slurm == local ($folds folds)"
