"""The cluster stack across three fake hosts on this one machine, over TCP.

scripts/fake-cluster.sh makes each host a network and UTS namespace of its own (node0,
node1, node2 on a bridge, 10.77.0.10-12) and runs mpirun in the first, so the ranks
talk over TCP between hosts that MPI sees as different machines. Every run must give
the bits of the cpu engine in one process, and leave nothing behind: no process it
started (found through a mark in their environment), no network interface in the
machine's own namespace, no temporary directory (the script's TMPDIR points into the
test's own directory). Needs root, as creating namespaces does.

Every run goes from a temporary directory so nothing is written into the checkout.
"""

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = str(ROOT / ".venv" / "bin" / "python")
FAKE = str(ROOT / "scripts" / "fake-cluster.sh")
HEAT = str(ROOT / "examples" / "python" / "heat_equation.py")
HEAT_ARGS = ["500", "60"]
TIMEOUT = 240
MARK = "HASSIUM_TEST_FAKE_CLUSTER_MARK"

# Network namespaces need root (scripts/setup.sh installs the tools: util-linux,
# iproute2, Open MPI).
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="fake hosts need root (network namespaces)"
)


def links():
    """The network interfaces of the machine's own namespace, by name."""
    out = subprocess.run(
        ["ip", "-o", "link"], capture_output=True, text=True, check=True
    ).stdout
    return sorted(line.split(":")[1].strip() for line in out.splitlines())


def marked(mark):
    """Live processes whose environment carries `mark`, with their command lines."""
    want = f"{MARK}={mark}".encode()
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes().split(b"\0")
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if want in env:
            found.append((int(d.name), cmd.decode(errors="replace").strip()))
    return found


class FakeCluster:
    """One run of scripts/fake-cluster.sh, and what it must not leave behind."""

    def __init__(self, tmp_path, env=None, ranks_per_host=1):
        self.cwd = tmp_path
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.mark = uuid.uuid4().hex
        self.links = links()
        self.env = dict(os.environ)
        self.env.pop("HASSIUM_STACK", None)
        self.env.update(
            {
                "HASSIUM_STACK": "cluster",
                "HASSIUM_MPI_TIMEOUT": str(TIMEOUT - 40),
                "TMPDIR": str(self.tmp),
                MARK: self.mark,
            }
        )
        self.env.update(env or {})
        self.argv = [FAKE, "--ranks-per-host", str(ranks_per_host), "--"]

    def run(self, argv):
        try:
            p = subprocess.run(
                [*self.argv, *argv],
                check=False,
                capture_output=True,
                text=True,
                env=self.env,
                timeout=TIMEOUT,
                cwd=self.cwd,
            )
        except subprocess.TimeoutExpired:
            # Killed on a timeout, the script's watchdog still tears down, in seconds.
            self.assert_nothing_left(grace=30)
            raise
        self.assert_nothing_left()
        return p.returncode, p.stdout, p.stderr

    def popen(self, argv):
        # A shell started in the background (`cmd &`, nohup) hands its children SIGINT
        # ignored, and bash cannot trap a signal ignored on entry: the script gets the
        # default disposition back (env --default-signal), as from a terminal.
        return subprocess.Popen(
            ["env", "--default-signal=INT", *self.argv, *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=self.cwd,
        )

    def assert_nothing_left(self, grace=0):
        deadline = time.monotonic() + grace
        while True:
            procs, now, tmp = marked(self.mark), links(), sorted(self.tmp.iterdir())
            if (not procs and now == self.links and not tmp) or (
                time.monotonic() >= deadline
            ):
                break
            time.sleep(0.2)
        assert not procs, f"processes left behind: {procs}"
        assert now == self.links, f"interfaces before {self.links}, after {now}"
        assert not tmp, f"temporary files left behind: {tmp}"


@pytest.fixture(scope="module")
def cpu_checksum(tmp_path_factory):
    env = {k: v for k, v in os.environ.items() if k != "HASSIUM_STACK"}
    p = subprocess.run(
        [PY, "-m", "hassium", HEAT, *HEAT_ARGS],
        check=False,
        capture_output=True,
        text=True,
        env={**env, "HASSIUM_STACK": "cpu"},
        timeout=TIMEOUT,
        cwd=tmp_path_factory.mktemp("cpu"),
    )
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("checksum: ")]
    assert len(lines) == 1, p.stdout
    return lines[0]


def test_each_rank_runs_on_a_host_of_its_own(tmp_path):
    rc, out, err = FakeCluster(tmp_path).run(["hostname"])
    assert rc == 0, err
    assert sorted(out.split()) == ["node0", "node1", "node2"], (out, err)


def test_info_reports_three_ranks_on_three_hosts(tmp_path):
    rc, out, err = FakeCluster(tmp_path).run([PY, "-m", "hassium", "--info"])
    assert rc == 0, err
    assert re.search(r"MPI: 3 ranks on 3 hosts \(node0, node1, node2\)", out), out
    assert out.count("hassium info") == 1, out


@pytest.mark.parametrize("ranks_per_host", [1, 2])
def test_heat_equation_over_tcp_has_the_cpu_engines_bits(
    ranks_per_host, cpu_checksum, tmp_path
):
    # The checksum is printed with repr, so equal strings mean equal bits.
    rc, out, err = FakeCluster(tmp_path, ranks_per_host=ranks_per_host).run(
        [PY, "-m", "hassium", HEAT, *HEAT_ARGS]
    )
    assert rc == 0, err
    lines = [ln for ln in out.splitlines() if ln.startswith("checksum: ")]
    assert lines == [cpu_checksum], (out, err)


def test_the_commands_exit_status_comes_back(tmp_path):
    rc, _, err = FakeCluster(tmp_path).run(["sh", "-c", "exit 7"])
    assert rc == 7, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signalled_run_leaves_nothing_behind(sig, tmp_path):
    """Interrupted or terminated, the script tears down before it exits; killed
    outright, its watchdog does, within seconds."""
    fc = FakeCluster(tmp_path)
    p = fc.popen(["sleep", "297"])
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ranks = [c for _, c in marked(fc.mark) if c == "sleep 297"]
            if len(ranks) == 3:
                break
            time.sleep(0.1)
        assert len(ranks) == 3, marked(fc.mark)
        # The mark finds the namespace holders too: the bridge's and each host's.
        holders = [c for _, c in marked(fc.mark) if c.endswith("sleep 3600")]
        assert len(holders) == 4, marked(fc.mark)
        start = time.monotonic()
        p.send_signal(sig)
        p.communicate(timeout=60)
        assert time.monotonic() - start < 30
        assert p.returncode != 0
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    fc.assert_nothing_left(grace=30 if sig == signal.SIGKILL else 0)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
