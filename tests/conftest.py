"""Test configuration: hypothesis profiles and the slow-test switch.

* ``HYPOTHESIS_PROFILE=ci`` (set by ``.ci/run``, and chosen automatically when ``CI`` is
  set): derandomized, bounded examples, no deadline, so CI never flakes.
* default ``dev`` profile: random, more examples, no deadline.
* ``--run-slow`` runs the tests marked ``slow`` (exhaustive sweeps); CI runs a bounded
  sample without it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, max_examples=60, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev", max_examples=100, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else
                                     "dev"))

DATA = Path(__file__).parent / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the exhaustive sweeps marked slow")


#: Test modules that start Ray or Dask clusters, or look for the processes a corpus run
#: leaves: run in parallel (``pytest -n 2 --dist loadgroup``, the README's command), they
#: share one worker and run one after another, as a cluster is one per machine.
CLUSTER_MODULES = frozenset({"test_corpus_ray", "test_corpus_dask", "test_corpus_addresses",
                             "test_corpus_orphans", "test_corpus"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in CLUSTER_MODULES:
            item.add_marker(pytest.mark.xdist_group("clusters"))
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def data_dir() -> Path:
    return DATA
