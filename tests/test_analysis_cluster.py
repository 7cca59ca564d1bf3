"""``durak analyze DB --bot BOT --cluster ADDRESS``: a bot's sample analyzed on a Dask cluster (test_cluster's
two-worker ``LocalCluster``) gives what ``--jobs`` gives, byte for byte, with the same progress line; a cluster
it cannot use is one line and the tournaments' exit code (8).

Without Dask installed these tests skip, and fail with CI=true, as test_cluster's do (importing its fixture).
"""

from __future__ import annotations

import socket
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from clirun import invoke
from test_analysis import stored  # noqa: F401 - the fixture: a database of 2 games, the random and heuristic bots
from test_cluster import cluster  # noqa: F401 - the fixture: a LocalCluster of two worker processes

from referee import __version__
from referee.cli import analyze as analyze_command
from referee.cli.exitcodes import ExitCode
from referee.tournament.executors import dask as executor


def test_a_sample_on_a_cluster_is_the_sample_analyzed_here(stored: Path, cluster: Any) -> None:  # noqa: F811
    sample = [str(stored), "--bot", "r", "--playouts", "3", "--seed", "5"]
    here = invoke("analyze", *sample, "--jobs", "2")
    there = invoke("analyze", *sample, "--cluster", cluster.scheduler_address)
    assert here.code == there.code == 0, there.output
    assert there.out == here.out and "worst decisions:" in there.out
    assert there.err == here.err and there.err.endswith("analyzed 2/2 games\n")
    data = invoke("analyze", *sample, "--json", "--cluster", cluster.scheduler_address)
    assert data.out == invoke("analyze", *sample, "--json").out  # and in this process alone
    other = invoke("analyze", *sample[:-1], "6", "--json", "--cluster", cluster.scheduler_address)
    assert other.code == 0 and other.out != data.out  # the seed reaches the workers


def test_a_worker_of_another_version_is_named_before_any_game(stored: Path, cluster: Any,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """This process claims another version than the workers run (they import the same package)."""
    monkeypatch.setattr(analyze_command, "__version__", "0.0.0-other")
    ran = invoke("analyze", str(stored), "--bot", "r", "--playouts", "3", "--cluster", cluster.scheduler_address)
    assert ran.code == ExitCode.CLUSTER and ran.out == ""
    worker = sorted(cluster.scheduler_info["workers"])[0]
    assert ran.err == (f"durak: error: Dask worker {worker} runs durak-referee {__version__}, this machine "
                       "0.0.0-other: install the same version on every worker\n")


def _closed_port() -> int:
    with closing(socket.socket()) as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


@pytest.mark.parametrize(("address", "says"), [
    ("tcp://127.0.0.1:{port}", "cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: Timed out trying to "
                               "connect"),
    ("nonsense", "cannot reach the Dask scheduler at nonsense: missing port number in address 'nonsense'"),
    ("foo://host:1", "cannot reach the Dask scheduler at foo://host:1: unknown address scheme 'foo'"),
    ("tls://127.0.0.1:{port}", "is a TLS scheduler, and Dask's settings hold no client certificate"),
])
def test_a_cluster_it_cannot_use_is_one_line_and_exit_code_8(stored: Path, address: str, says: str,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor, "CONNECT_SECONDS", 0.5)  # a tournament's 30 s too (one connect), shortened
    port = _closed_port()
    ran = invoke("analyze", str(stored), "--bot", "r", "--cluster", address.format(port=port))
    assert ran.code == ExitCode.CLUSTER and ran.out == ""
    assert ran.err.startswith("durak: error: ") and ran.err.count("\n") == 1, ran.err
    assert says.format(port=port) in ran.err


@pytest.mark.parametrize(("args", "says"), [
    (["--bot", "r", "--jobs", "2", "--cluster", "tcp://127.0.0.1:9"], "--jobs is for a run on this machine: with "
     "--cluster, the Dask workers' threads (dask worker --nthreads) set how many games run at once"),
    (["1", "--seat", "r", "--cluster", "tcp://127.0.0.1:9"], "--jobs and --cluster are for a sample of games "
                                                            "(--bot BOT), not one game"),
])
def test_cluster_options_that_do_not_go_together_are_a_usage_error(stored: Path, args: list[str],  # noqa: F811
                                                                   says: str) -> None:
    ran = invoke("analyze", str(stored), *args)
    assert ran.code == ExitCode.USAGE and ran.err == f"durak: error: {says}\n"
