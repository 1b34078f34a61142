"""The runners a program runs under (NumPy, its peers, each Hassium stack) and what
one program under one runner gave (``Result``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.programs import PEER_RUNNERS, PEERS_DIR, PROGRAMS_DIR, UsageError

# Environment variable through which the Python bridge takes its kernel-cache directory.
CACHE_ENV = "HASSIUM_CACHE_DIR"


# Programs the runners' start-up time is measured with: the imports, nothing else.
EMPTY_PROGRAMS = {
    "numpy": "import numpy as np\n",
    "numexpr": "import numexpr\nimport numpy as np\n",
    "jax": 'import jax\njax.config.update("jax_enable_x64", True)\nimport jax.numpy as jnp\n',
    "hassium": "import numpy as np\n",
}


@dataclass(frozen=True)
class Runner:
    name: str  # column title: numpy, numexpr, jax, jax-cold, hassium-<stack>[-cold]
    kind: str  # numpy | numexpr | jax | hassium
    stack: str | None = None
    cold: bool = False

    def script(self, program: str) -> Path | None:
        """The file this runner executes for a program, or None if it has no version of it."""
        if self.kind in PEER_RUNNERS:
            path = PEERS_DIR / f"{self.kind}_{program}.py"
            return path if path.exists() else None
        return PROGRAMS_DIR / f"{program}.py"

    def command(self, python: str, script: Path, args: list[str]) -> list[str]:
        prefix = [python, "-m", "hassium"] if self.kind == "hassium" else [python]
        return [*prefix, str(script), *args]

    def env(self, cache_dir: Path | None) -> dict[str, str]:
        env = dict(os.environ)
        if self.kind == "hassium":
            env["HASSIUM_STACK"] = self.stack or ""
            env["HASSIUM_STATS"] = "1"
            if cache_dir is not None:
                env[CACHE_ENV] = str(cache_dir)
        elif self.kind == "jax":
            # JAX at its best: compiled programs come from its persistent cache, as
            # Hassium's warm runs take kernels from theirs (every program, however
            # quick to compile, and however small). A cold run's directory is empty.
            env.pop("JAX_COMPILATION_CACHE_DIR", None)
            if cache_dir is not None:
                env["JAX_COMPILATION_CACHE_DIR"] = str(cache_dir)
                env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"
                env["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "0"
        elif self.kind == "numexpr":
            # Every core: numexpr caps its threads at 8 unless told otherwise.
            cores = str(os.cpu_count() or 1)
            env["NUMEXPR_MAX_THREADS"] = cores
            env["NUMEXPR_NUM_THREADS"] = cores
        return env


@dataclass
class Result:
    """One program under one runner: its repetitions and the worst status seen."""

    walls: list[float] = field(default_factory=list)
    checksums: list[float] = field(default_factory=list)
    # Hassium runs: (bytes the kernels moved, seconds executing them) per run.
    kernels: list[tuple[int, float]] = field(default_factory=list)
    status: str = "ok"  # ok | FAIL | CRASH | TIMEOUT
    detail: str = ""

    def mark(self, status: str, detail: str) -> None:
        if self.status == "ok":
            self.status, self.detail = status, detail


def hassium_stacks(python: str) -> list[str]:
    """Stacks the installed bridge offers, or [] when Hassium is not installed or broken."""
    try:
        proc = subprocess.run(
            [python, "-m", "hassium", "--list-stacks"],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if proc.returncode != 0:
        if "No module named hassium" not in proc.stderr:
            tail = proc.stderr.strip().splitlines()[-1:]
            print(
                f"note: `-m hassium --list-stacks` failed {tail}; no Hassium runners",
                file=sys.stderr,
            )
        return []
    stacks = []
    for line in proc.stdout.splitlines():
        words = line.strip().split()
        if (
            words
            and not words[0].startswith("#")
            and re.fullmatch(r"[\w.-]+", words[0])
        ):
            stacks.append(words[0])
    return stacks


def available_runners(python: str) -> list[Runner]:
    runners = [Runner("numpy", "numpy")]
    for peer in PEER_RUNNERS:
        probe = subprocess.run(
            [python, "-c", f"import {peer}"], check=False, capture_output=True
        )
        if probe.returncode == 0:
            if peer == "jax":
                # Cold: compiling every run; warm: from its persistent cache.
                runners.append(Runner("jax-cold", peer, cold=True))
            runners.append(Runner(peer, peer))
    for stack in hassium_stacks(python):
        if stack == "cluster":
            continue  # needs mpirun; benches/cluster.py measures it
        runners.append(Runner(f"hassium-{stack}-cold", "hassium", stack, cold=True))
        runners.append(Runner(f"hassium-{stack}", "hassium", stack))
    return runners


def select_runners(available: list[Runner], wanted: str | None) -> list[Runner]:
    """Filter by --runners; NumPy always runs because it is the reference for checksums."""
    if wanted is None:
        return available
    names = {w.strip() for w in wanted.split(",") if w.strip()}
    known = {r.name for r in available} | {r.kind for r in available}
    unknown = names - known - {"numpy"}
    if unknown:
        raise UsageError(
            f"runner(s) {', '.join(sorted(unknown))} not available here; "
            f"available: {', '.join(r.name for r in available)}"
        )
    chosen = []
    for r in available:
        base = r.name.removesuffix("-cold")
        if r.kind == "numpy" or r.name in names or base in names or r.kind in names:
            chosen.append(r)
    return chosen
