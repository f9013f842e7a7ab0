"""sieve.optimize / sieve.walkforward with executor=: each screen sent to a
concurrent.futures.Executor in shards, merged exactly — the same files as
the run of one process, byte for byte."""

import concurrent.futures
import multiprocessing
import os
import subprocess

import pandas as pd
import pytest

import sieve

CONFIG = {
    "strategy": {
        "name": "sma_cross",
        "constraints": ["fast < slow"],
        "params": {
            "fast": {"start": 2, "stop": 80, "step": 2},
            "slow": {"start": 10, "stop": 400, "step": 10},
        },
    },
    "score": {"score_start": "40%", "holdout_start": "80%"},
    "sweep": {"top": 80},
    "verify": {"top": 80},
    "optimize": {"iterations": 2},
    "executor": {"shards": 3, "poll_s": 0.05},
}


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "bars.csv"
    subprocess.run(
        [os.environ.get("SIEVE_BIN", "sieve"), "synth", "--bars", "2500", "--seed", "5", "--out", str(path)],
        check=True,
        capture_output=True,
    )
    return pd.read_csv(path, parse_dates=["date"]).set_index("date")


def pool():
    """Processes started by a server, not forked from this multithreaded
    one (what the README recommends)."""
    return concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("forkserver"))


def same_run(a, b):
    """best.json and every iteration's verified.csv of `a` equal `b`'s."""
    assert (a / "best.json").read_bytes() == (b / "best.json").read_bytes()
    iterations = sorted(p.name for p in a.glob("iter-*") if (p / "verified.csv").exists())
    assert len(iterations) >= 2, "one iteration: the loop was not tested"
    for name in iterations:
        assert (a / name / "verified.csv").read_bytes() == (b / name / "verified.csv").read_bytes(), name
    # The shards really went out: one job folder per screen, parts in each.
    jobs = list((b / "cluster").iterdir())
    assert len(jobs) == len(iterations)
    assert all(len(list(j.glob("part-*.meta.json"))) == 3 for j in jobs)


def test_a_process_pool_gives_the_local_run(frame, tmp_path):
    local = sieve.optimize(frame, CONFIG, out=tmp_path / "local")
    with pool() as p:
        sent = sieve.optimize(frame, CONFIG, out=tmp_path / "pool", executor=p)
    assert sent == local
    same_run(tmp_path / "local", tmp_path / "pool")


def test_a_dask_cluster_gives_the_local_run(frame, tmp_path):
    distributed = _distributed()
    sieve.optimize(frame, CONFIG, out=tmp_path / "local")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            sieve.optimize(frame, CONFIG, out=tmp_path / "dask", executor=client.get_executor())
    same_run(tmp_path / "local", tmp_path / "dask")


def test_a_walkforward_on_a_pool_gives_the_local_one(frame, tmp_path):
    config = dict(CONFIG, walkforward={"train": "1000", "test": "500"})
    local = sieve.walkforward(frame, config, out=tmp_path / "local")
    with pool() as p:
        sent = sieve.walkforward(frame, config, out=tmp_path / "pool", executor=p)
    assert sent == local
    assert (tmp_path / "local" / "walkforward.csv").read_bytes() == (tmp_path / "pool" / "walkforward.csv").read_bytes()
    folds = sorted(f.name for f in (tmp_path / "local").glob("fold-*"))
    assert len(folds) >= 2
    for fold in folds:
        assert (tmp_path / "local" / fold / "best.json").read_bytes() == (tmp_path / "pool" / fold / "best.json").read_bytes()
    assert (tmp_path / "pool" / "cluster").is_dir()


def test_indicators_that_do_not_pickle_are_refused_before_anything_runs(frame, tmp_path):
    indicators = {"twice": (lambda close: close * 2, ["close"])}
    with pool() as p:
        with pytest.raises(TypeError, match="top level"):
            sieve.optimize(frame, CONFIG, out=tmp_path / "x", executor=p, indicators=indicators)
    assert not (tmp_path / "x").exists()


def test_an_executor_whose_calls_fail_stops_the_run_naming_the_error(frame, tmp_path):
    class Broken(concurrent.futures.ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            return super().submit(_raise)

    config = dict(CONFIG, executor={"shards": 3, "poll_s": 0.05, "retries": 1})
    with Broken(1) as pool:
        with pytest.raises(sieve.SieveError, match=r"shard \d/3 .* failed 2 time\(s\).*RuntimeError: no node"):
            sieve.optimize(frame, config, out=tmp_path / "broken", executor=pool)


def _distributed():
    """Dask's distributed: CI installs it and must run this test."""
    if os.environ.get("SIEVE_REQUIRE_DASK"):
        import distributed

        return distributed
    return pytest.importorskip("distributed")


def _raise():
    raise RuntimeError("no node")
