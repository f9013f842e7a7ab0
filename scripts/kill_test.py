#!/usr/bin/env python3
"""SIGKILLs, then SIGTERMs, `sieve sweep`, `sieve verify` and `sieve
optimize` at random moments, then checks that no file under a final name is
partial and that re-running completes with outputs identical to an
uninterrupted run. A SIGTERM (what `timeout`, Slurm and Kubernetes send)
must stop the command as Ctrl-C does: within seconds, checkpointed, with
exit status 130 (or 0 when it had just finished).

    python3 scripts/kill_test.py [--trials 20] [--seed 1]

Release build. Takes a few minutes on 2 cores; exits non-zero on the first
failure, printing what differed.
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIEVE = os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target"), "release", "sieve")

CONFIG = """
[strategy]
name = "activation"
[strategy.params]
trend_len = { start = 20, stop = 200, step = 30 }
rsi_len = 14
dc_len = { start = 10, stop = 50, step = 20 }
atr_len = 14
w_trend = 1.0
w_rsi = { values = [0.0, 0.5] }
w_dc = 1.0
entry = { start = 0.1, stop = 0.7, step = 0.1 }
exit = { start = -0.3, stop = 0.3, step = 0.1 }
stop_atr = { start = 0, stop = 4, step = 1 }
[score]
score_start = "2019-01-01"
holdout_start = "2025-01-01"
[sweep]
top = 2000
[verify]
top = 2000
[optimize]
iterations = 3
refine_top = 5
"""


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check_complete(folder):
    """Every file under a final name parses completely."""
    for dirpath, _, names in os.walk(folder):
        for n in names:
            if n.endswith(".tmp"):
                continue  # a temporary name, never a final one
            path = os.path.join(dirpath, n)
            with open(path, "rb") as f:
                data = f.read()
            if n.endswith(".json"):
                try:
                    json.loads(data)
                except ValueError as e:
                    fail(f"{path} is partial: {e}")
            elif n.endswith(".csv"):
                text = data.decode()
                if not text.endswith("\n"):
                    fail(f"{path} is cut short")
                lines = text.splitlines()
                width = lines[0].count(",")
                if any(l.count(",") != width for l in lines):
                    fail(f"{path} has a partial row")
            elif n.endswith(".html"):
                if not data.rstrip().endswith(b"</html>"):
                    fail(f"{path} is cut short")


def comparable(path):
    """File content, with the timings of meta/run files left out."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".meta.json"):
        d = json.loads(data)
        d.pop("timings", None)
        return json.dumps(d, sort_keys=True)
    return data


def outputs(folder, names):
    return {n: comparable(os.path.join(folder, n)) for n in names}


# How long a command may take to stop after SIGTERM.
TERM_GRACE_S = 10.0


def trial_loop(name, make_args, names, trials, rng, work, sig=signal.SIGKILL):
    ref = os.path.join(work, f"{name}-{int(sig)}-ref")
    os.makedirs(ref)
    t = time.perf_counter()
    subprocess.run([SIEVE] + make_args(ref), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    duration = time.perf_counter() - t
    want = outputs(ref, names)
    killed_mid = 0
    slowest_stop = 0.0
    for i in range(trials):
        d = os.path.join(work, f"{name}-{i}")
        os.makedirs(d)
        p = subprocess.Popen([SIEVE] + make_args(d), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.0, duration * 0.9))
        if p.poll() is None:
            p.send_signal(sig)
            killed_mid += 1
            sent = time.perf_counter()
            try:
                code = p.wait(timeout=TERM_GRACE_S if sig == signal.SIGTERM else None)
            except subprocess.TimeoutExpired:
                p.kill()
                fail(f"{name} trial {i}: still running {TERM_GRACE_S:.0f} s after SIGTERM")
            # -SIGTERM: the signal came before sieve set its handler (its
            # first milliseconds), when there is nothing to checkpoint yet.
            if sig == signal.SIGTERM and code not in (0, 130, -signal.SIGTERM):
                fail(f"{name} trial {i}: exit status {code} after SIGTERM (130 = interrupted)")
            if sig == signal.SIGTERM:
                slowest_stop = max(slowest_stop, time.perf_counter() - sent)
        p.wait()
        check_complete(d)
        subprocess.run([SIEVE] + make_args(d), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        check_complete(d)
        got = outputs(d, names)
        for n in names:
            if got[n] != want[n]:
                fail(f"{name} trial {i}: {n} differs from the uninterrupted run")
        shutil.rmtree(d)
    how = "SIGKILL" if sig == signal.SIGKILL else f"SIGTERM, stopped within {slowest_stop:.2f} s"
    print(f"{name}: {trials} trials ({killed_mid} signalled while running, {how}; uninterrupted run {duration:.2f} s): all outputs complete and identical after re-running")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="sieve-kill-")
    cfg = os.path.join(work, "kill.toml")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    data = os.path.join(work, "bars.csv")
    subprocess.run([SIEVE, "synth", "--bars", "4000", "--seed", "9", "--out", data], check=True, stderr=subprocess.DEVNULL)
    common = ["--config", cfg, "--data", data]
    started = time.perf_counter()
    cands = os.path.join(work, "cands.csv")
    subprocess.run([SIEVE, "sweep"] + common + ["--out", cands], check=True, stderr=subprocess.DEVNULL)
    for sig in (signal.SIGKILL, signal.SIGTERM):
        trial_loop("sweep", lambda d: ["sweep"] + common + ["--out", os.path.join(d, "sweep.csv")],
                   ["sweep.csv", "sweep.meta.json"], a.trials, rng, work, sig)
        trial_loop("verify", lambda d: ["verify"] + common + ["--candidates", cands, "--out", os.path.join(d, "verified.csv")],
                   ["verified.csv"], a.trials, rng, work, sig)
        trial_loop("optimize", lambda d: ["optimize"] + common + ["--out", os.path.join(d, "run"), "--checkpoint-every", "0"],
                   ["run/best.json", "run/iter-001/verified.csv", "run/iter-001/sweep.csv", "run/iter-002/verified.csv"],
                   a.trials, rng, work, sig)
    shutil.rmtree(work)
    print(f"kill test passed in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
