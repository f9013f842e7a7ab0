"""``sieve.optimize(..., search={...})``: the random and evolutionary
searches from Python, the same run whatever the threads, as the CLI's."""
import pytest

import sieve

CONFIG = {
    "strategy": {
        "name": "sma_cross",
        "constraints": ["fast < slow"],
        "params": {"fast": {"start": 2, "stop": 100, "step": 1}, "slow": {"start": 10, "stop": 250, "step": 1}},
    },
    "score": {"score_start": "2019-01-01"},
    "verify": {"top": 30},
}
SEARCH = {"method": "random", "seed": 4, "evaluations": 1000, "batch": 500}


@pytest.mark.parametrize("method", ["random", "evolve"])
def test_a_sampled_search_from_python_is_the_same_run_on_any_threads(tmp_path, method):
    search = dict(SEARCH, method=method)
    one = sieve.optimize(None, CONFIG, tmp_path / "one", threads=1, search=search)
    two = sieve.optimize(None, CONFIG, tmp_path / "two", threads=2, search=search)
    assert one["search"] == {"method": method, "seed": 4, "evaluated": 1000, "grid_size": 99 * 241}
    assert (tmp_path / "one" / "best.json").read_bytes() == (tmp_path / "two" / "best.json").read_bytes()
    assert one["params"]["fast"] < one["params"]["slow"]


def test_search_must_be_a_dict_of_strings_and_whole_numbers(tmp_path):
    with pytest.raises(TypeError, match="search"):
        sieve.optimize(None, CONFIG, tmp_path / "x", search="random")
    with pytest.raises(TypeError, match="evaluations"):
        sieve.optimize(None, CONFIG, tmp_path / "x", search={"evaluations": 1.5})
