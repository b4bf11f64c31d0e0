"""Install size and import time of each ragshield extra.

Size: pip resolves `ragshield[EXTRA]` from scratch (`pip install --dry-run --ignore-installed
--report`, the same resolution a fresh virtual environment gets, with this machine's pip
configuration: its constraints and local wheels) and the script adds up the installed size of
every resolved distribution (the file sizes in its RECORD) as installed in this environment. pip's
report gives no sizes, and installing the `models` extra for real would download several GB; a
resolved distribution that is not installed here (another version, or absent) is listed and its
size counted as missing, so the total is then a lower bound and says so.

Import time: a fresh interpreter imports what the extra is for (median of `--repeats` runs, minus
the interpreter's own start-up), in this environment.

    python benchmarks/install_size.py [--extras core,guard,server,models,langchain,llamaindex] [--repeats 3]

Writes benchmarks/results/install_size.json and prints a table. `benchmarks/guard_service.py`
measures the guard-only service's latency.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: what each extra is for, as imports (the guard-only service; the full service; the models; the adapters)
IMPORTS: dict[str, str] = {
    "core": "ragshield.guards.layered, ragshield.integrations.shield",
    "guard": "ragshield.service.app, ragshield.service.guard_only",
    "server": "ragshield.service.app, ragshield.system",
    "models": "torch, sentence_transformers, faiss, llama_cpp",
    "langchain": "ragshield.integrations.langchain",
    "llamaindex": "ragshield.integrations.llama_index",
}
HEAVY = ("torch", "faiss", "llama_cpp")
PIP_DRY_RUN = (sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet")


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_sizes() -> dict[str, tuple[str, int]]:
    """Distribution name -> (version, bytes on disk per its RECORD) for this environment."""
    sizes: dict[str, tuple[str, int]] = {}
    for dist in metadata.distributions():
        total = 0
        for file in dist.files or ():
            if file.size is not None:
                total += int(file.size)
            else:  # RECORD without sizes (rare): measure the file
                path = Path(str(dist.locate_file(file)))
                total += path.stat().st_size if path.is_file() else 0
        sizes[normalise(dist.metadata["Name"])] = (dist.version, total)
    return sizes


def resolve(extra: str, timeout_s: float) -> list[tuple[str, str]]:
    """(name, version) of every distribution pip installs for `ragshield[extra]` from scratch."""
    target = f"ragshield[{extra}] @ file://{REPO}" if extra != "core" else f"ragshield @ file://{REPO}"
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        done = subprocess.run(
            [*PIP_DRY_RUN, "--report", str(report), target],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pip could not resolve {target}: {done.stderr.strip()[-500:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
    return [(item["metadata"]["name"], item["metadata"]["version"]) for item in data["install"]]


def size_of(resolved: list[tuple[str, str]], local: dict[str, tuple[str, int]]) -> dict[str, Any]:
    measured, missing, total = [], [], 0
    for name, version in resolved:
        here = local.get(normalise(name))
        # the project itself is installed editable here: its size is its source tree, counted apart
        if normalise(name) == "ragshield":
            continue
        if here is None or here[0].split("+")[0] != version.split("+")[0]:
            missing.append(f"{name}=={version}" + (f" (here {here[0]})" if here else ""))
            continue
        measured.append((name, here[1]))
        total += here[1]
    largest = sorted(measured, key=lambda item: -item[1])[:5]
    return {
        "distributions": len(resolved),
        "size_mb": round(total / 1e6, 1),
        "lower_bound": bool(missing),
        "missing": missing,
        "largest_mb": {name: round(size / 1e6, 1) for name, size in largest},
        "heavy": sorted(name for name, _ in resolved if normalise(name) in {"torch", "faiss-cpu", "llama-cpp-python"}),
    }


def import_time(modules: str, repeats: int) -> dict[str, Any]:
    """Median seconds a fresh interpreter takes to import `modules`, minus its bare start-up."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1"}
    probe = f"import sys; import {modules}; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"

    def once(code: str) -> tuple[float, str]:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "import failed")
        return time.perf_counter() - started, done.stdout.strip()

    bare = statistics.median(once("pass")[0] for _ in range(repeats))
    try:
        runs = [once(probe) for _ in range(repeats)]
    except RuntimeError as error:
        return {"imports": modules, "seconds": None, "error": str(error)}
    return {
        "imports": modules,
        "seconds": round(max(0.0, statistics.median(r[0] for r in runs) - bare), 2),
        "runs": [round(r[0] - bare, 2) for r in runs],
        "heavy_imported": [m for m in runs[-1][1].split(",") if m],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    local = installed_sizes()
    rows: dict[str, Any] = {}
    for extra in args.extras.split(","):
        print(f"[{extra}] resolving ...", file=sys.stderr, flush=True)
        row: dict[str, Any] = {}
        try:
            row.update(size_of(resolve(extra, args.timeout), local))
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            row.update(size_mb=None, error=str(error)[:300])
        row["import"] = import_time(IMPORTS[extra], args.repeats) if extra in IMPORTS else None
        rows[extra] = row
    return {
        "benchmark": "install_size",
        "python": sys.version.split()[0],
        "load_average": os.getloadavg()[0],
        "method": "pip --dry-run --ignore-installed --report, sizes from this environment's RECORD files",
        "extras": rows,
    }


def print_table(report: dict[str, Any]) -> None:
    print(f"\ninstall size and import time (Python {report['python']}, load average {report['load_average']:.1f})")
    print(f"{'extra':<11} {'dists':>5} {'size MB':>9} {'import s':>8}  heavy   largest")
    for extra, row in report["extras"].items():
        size = (
            "missing" if row.get("size_mb") is None else f"{row['size_mb']:.0f}" + ("+" if row["lower_bound"] else "")
        )
        seconds = (row.get("import") or {}).get("seconds")
        largest = ", ".join(f"{name} {mb:.0f}" for name, mb in list(row.get("largest_mb", {}).items())[:3])
        heavy = ",".join(row.get("heavy", [])) or "-"
        shown = "missing" if seconds is None else f"{seconds:.2f}"
        print(f"{extra:<11} {row.get('distributions', '-')!s:>5} {size:>9} {shown:>8}  {heavy:<7} {largest}")
    print("+: lower bound (some resolved distributions are not installed here; see 'missing' in the JSON)")


def write_report(report: dict[str, Any], out: Path, show: Callable[[dict[str, Any]], None]) -> None:
    """Write `report` as JSON to `out` (folders created) and print its table with `show`."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    show(report)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--extras", default="core,guard,server,models,langchain,llamaindex")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for one pip resolution")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "install_size.json")
    args = parser.parse_args()
    write_report(run(args), args.out, print_table)


if __name__ == "__main__":
    main()
