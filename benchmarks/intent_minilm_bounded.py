"""The nineteenth round toward v14 (issue 18): MC's settings bounded on the calibration split's real benign text too.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_bounded.py --refit MC.npz --before OLD.npz \\
        --before-other E5.npz --rows ROWS.json --calib-rows CALIB.json [--candidate DIR] [--cost]

The eighteenth round (`intent_minilm_spent.py`) with one more condition, as the model card says ("Toward v14,
nineteenth round"): a grid point must flag at most as many rows of the calibration split (`--calib-rows` caches
their records, read as the development sets are) as the packaged MiniLM file with its settings. `--refit` is the
eighteenth round's fitted file, `--rows` may be its records (the same sets, read the same way). Writes the sweep to
`--out` (default `benchmarks/results/intent_minilm_bounded.json`).
"""

from __future__ import annotations

import dataclasses

import intent_e5_refit as er
import intent_minilm_spent as spent

ROUND = dataclasses.replace(spent.ROUND, script="intent_minilm_bounded", calibration_budget=True)


def main(argv: list[str] | None = None) -> None:
    er.main(argv, ROUND, __doc__)


if __name__ == "__main__":
    main()
