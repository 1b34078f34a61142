"""The report: tables of speed-ups and times, the markdown file and the chart."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.programs import BENCHES, DEFAULT_BENCH
from harness.runners import Result, Runner


def fmt_time(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


# Kernel traffic under which a bandwidth is not reported (see `cell_kernel_bandwidth`).
MIN_KERNEL_BYTES = 1 << 20


# Compute times below this are start-up noise; ratios are computed with this floor.
MIN_COMPUTE = 1e-4


@dataclass
class Report:
    programs: list[str]
    runners: list[Runner]
    results: dict[tuple[str, str], Result]
    startup: dict[str, float]
    sizes: dict[str, dict[str, int]]
    stream: tuple[float, str] | None
    machine: dict[str, str]
    command: str
    quick: bool = False
    scaling: float | None = None

    def compute(self, program: str, runner: str) -> list[float] | None:
        res = self.results.get((program, runner))
        if res is None or not res.walls:
            return None
        return [max(w - self.startup[runner], MIN_COMPUTE) for w in res.walls]

    def median(self, program: str, runner: str) -> float | None:
        times = self.compute(program, runner)
        return statistics.median(times) if times else None

    def speedup(self, program: str, runner: str) -> float | None:
        res = self.results.get((program, runner))
        ref, other = self.median(program, "numpy"), self.median(program, runner)
        if res is None or res.status != "ok" or ref is None or other is None:
            return None
        return ref / other

    def cell_time(self, program: str, runner: str) -> str:
        res = self.results.get((program, runner))
        if res is None:
            return "–"
        if res.status != "ok":
            return res.status
        times = self.compute(program, runner)
        spread = (
            f" [{fmt_time(min(times))}–{fmt_time(max(times))}]"
            if len(times) > 1
            else ""
        )
        return fmt_time(statistics.median(times)) + spread

    def cell_speedup(self, program: str, runner: str) -> str:
        res = self.results.get((program, runner))
        if res is None:
            return "–"
        if res.status != "ok":
            return f"**{res.status}**"
        ratio = self.speedup(program, runner)
        return "–" if ratio is None else f"{ratio:.2f}×"

    def cell_bandwidth(self, program: str, runner: str) -> str:
        bench = BENCHES.get(program, DEFAULT_BENCH)
        median = self.median(program, runner)
        res = self.results.get((program, runner))
        if (
            bench.bytes_moved is None
            or median is None
            or res is None
            or res.status != "ok"
        ):
            return "–"
        gbs = bench.bytes_moved(self.sizes[program]) / median / 1e9
        frac = f" ({gbs / self.stream[0]:.0%})" if self.stream else ""
        return f"{gbs:.3g} GB/s{frac}"

    def cell_kernel_bandwidth(self, program: str, runner: str) -> str:
        res = self.results.get((program, runner))
        if res is None or res.status != "ok":
            return "–"
        rates = [b / s / 1e9 for b, s in res.kernels if b >= MIN_KERNEL_BYTES and s > 0]
        if not rates:
            # Kernels that compute from generators (a kept arange) and reduce move
            # almost nothing: a bandwidth of them would read as a near-zero share.
            return "– (no array traffic)" if res.kernels else "–"
        gbs = statistics.median(rates)
        frac = f" ({gbs / self.stream[0]:.0%})" if self.stream else ""
        return f"{gbs:.3g} GB/s{frac}"

    def table(
        self,
        cell: Callable[[str, str], str],
        programs: list[str] | None = None,
        runners: list[str] | None = None,
    ) -> str:
        names = runners or [r.name for r in self.runners]
        rows = [["program", *names]]
        for program in programs or self.programs:
            rows.append([program, *(cell(program, n) for n in names)])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = []
        for k, row in enumerate(rows):
            lines.append(
                "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"
            )
            if k == 0:
                lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        return "\n".join(lines)

    def failures(self) -> list[str]:
        out = []
        for (program, runner), res in self.results.items():
            if res.status != "ok":
                out.append(f"{res.status}: {program} under {runner}: {res.detail}")
        return out

    def markdown(self) -> str:
        streaming = [
            p for p in self.programs if BENCHES.get(p, DEFAULT_BENCH).bytes_moved
        ]
        m = self.machine
        parts = [
            "# Benchmark results",
            "",
            f"`{self.command}`",
            "",
            f"- Date: {m['date']}, commit {m['commit']}",
            f"- CPU: {m['cpu']}, {m['cores']} cores, {m['memory']} memory",
            f"- Load average (1, 5, 15 min) when the runs ended: {m['load']}",
            f"- OS: {m['os']}; Python {m['python']}",
            f"- Packages: {m['packages']}",
        ]
        if self.stream:
            parts.append(
                f"- STREAM triad: {self.stream[0]:.1f} GB/s ({self.stream[1]})"
            )
        if self.scaling:
            parts.append(
                f"- Vector arithmetic on 2 threads: {self.scaling:.2f}× one thread's"
                " throughput (2× on two separate cores; near 1× when they are"
                " hyperthreads sharing one core, which caps compute-bound kernels alike)"
            )
        startup = ", ".join(
            f"{r.name} {fmt_time(self.startup[r.name])}" for r in self.runners
        )
        if self.quick:
            parts.append(
                "- **--quick run: sizes are tiny, times are start-up noise, not results**"
            )
        parts += [
            (
                "- Start-up (empty program, fastest of the probes taken at the start and"
                f" before each program, subtracted below): {startup}"
            ),
            "",
            "## Speed-up over NumPy (NumPy time / runner time; > 1 is faster than NumPy)",
            "",
            self.table(self.cell_speedup),
            "",
            "## Compute time: median [min–max] of wall time minus start-up",
            "",
            self.table(self.cell_time),
        ]
        if streaming:
            parts += [
                "",
                "## Achieved bandwidth (estimated minimal traffic / time; share of STREAM)",
                "",
                self.table(self.cell_bandwidth, streaming),
            ]
        engines = [r.name for r in self.runners if r.kind == "hassium"]
        if engines:
            parts += [
                "",
                (
                    "## Kernel bandwidth (bytes the engine's kernels must move / time "
                    "executing them, median; share of STREAM)"
                ),
                "",
                self.table(self.cell_kernel_bandwidth, runners=engines),
            ]
        parts += ["", "## Sizes and checksums (NumPy)", ""]
        for program in self.programs:
            ref = self.results[(program, "numpy")].checksums
            sizes = " ".join(f"--{k} {v}" for k, v in self.sizes[program].items())
            value = repr(ref[0]) if ref else "none"
            parts.append(f"- {program} `{sizes or '(defaults)'}`: {value}")
        failures = self.failures()
        if failures:
            parts += ["", "## Failures", "", *(f"- {f}" for f in failures)]
        return "\n".join(parts) + "\n"

    def chart(self, path: Path) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        others = [r.name for r in self.runners if r.name != "numpy"]
        fig, ax = plt.subplots(figsize=(max(8.0, 0.9 * len(self.programs) + 2), 5.0))
        width = 0.8 / max(len(others), 1)
        for k, name in enumerate(others):
            xs, ys = [], []
            for i, program in enumerate(self.programs):
                ratio = self.speedup(program, name)
                if ratio is not None:
                    xs.append(i + (k - (len(others) - 1) / 2) * width)
                    ys.append(ratio)
            ax.bar(xs, ys, width=width, label=name)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(self.programs)))
        ax.set_xticklabels(self.programs, rotation=35, ha="right")
        ax.set_ylabel("speed-up over NumPy (log scale)")
        ax.set_title(f"{self.machine['cpu']}, {self.machine['cores']} cores")
        if others:
            ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)
