"""The twenty-fourth round toward v14 (issue 18): the MiniLM second opinion refitted with Enron's e-mails weighed up.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_enron.py --refit ME.npz --before OLD.npz \\
        --before-other E5.npz --rows ROWS.json --calib-rows CALIB.json [--candidate DIR] [--cost]

The nineteenth round (`intent_minilm_bounded.py`: the eighteenth round's rule, bounded on the calibration split) for
a refit fitted by `intent_verifier.py --save --train-heldout ... --enron-weight 5` (`ENRON_WEIGHT`: its 803 benign
Enron training rows weigh 5, as in the first stage), its settings chosen on fourteen development sets (`CHOOSING`:
the eighteenth round's twelve and v32 and chat19), as the model card says ("Toward v14, twenty-fourth round").
`--before` is the packaged MiniLM file (`git show 92ae4c5:src/ragshield/data/intent_veto_minilm.npz`),
`--before-other` the packaged e5 file (`git show 92ae4c5:src/ragshield/data/intent_veto_e5.npz`). Writes the sweep
to `--out` (default `benchmarks/results/intent_minilm_enron.json`).
"""

from __future__ import annotations

import dataclasses

import intent_e5_refit as er
import intent_minilm_bounded as bounded
import intent_minilm_spent as spent

CHOOSING = (*spent.CHOOSING, "v32", "chat19")
ENRON_WEIGHT = 5.0
ROUND = dataclasses.replace(
    bounded.ROUND,
    choosing=CHOOSING,
    script="intent_minilm_enron",
    before="92ae4c5",
    other_before="92ae4c5",
    how_many="fourteen",
    session=44,
    enron_weight=ENRON_WEIGHT,
)


def main(argv: list[str] | None = None) -> None:
    er.main(argv, ROUND, __doc__)


if __name__ == "__main__":
    main()
