"""The eighteenth round toward v14 (issue 18): the MiniLM second opinion refitted with spent development sets' rows.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_spent.py --refit FILE.npz --before OLD.npz \\
        --before-other E5.npz --rows ROWS.json [--candidate DIR] [--cost]

The seventeenth round (`intent_e5_refit.py`, whose docstring says what is read and how) for the MiniLM lane:
`--refit` is a MiniLM veto file fitted by `intent_verifier.py --save --train-heldout` on v13's training rows, the
contrastive pairs' training share and every row of the same twelve older development sets (`TRAINED_ON`); its
settings are chosen on the seventeenth round's ten sets and its judges v31 and chat18 (`CHOOSING`, their rows unseen
by v13, the verifiers' pairs and `TRAINED_ON`), MiniLM lane only, over `GRID`, by the rule in the model card ("Toward
v14, eighteenth round"); the e5 lane keeps the file the round read with (EC). `--before` is the MiniLM file compared
with (`git show 717aa0a:src/ragshield/data/intent_veto_minilm.npz`), `--before-other` that e5 file (`git show
b8d1b66:src/ragshield/data/intent_veto_e5.npz`). Writes the sweep to `--out` (default
`benchmarks/results/intent_minilm_spent.json`).
"""

from __future__ import annotations

import intent_e5_refit as er

CHOOSING = (*er.CHOOSING, "v31", "chat18")
GRID = ((-1.0, -0.5, 0.0, 0.5, 1.0, 1.5), (1.0, 2.0, 3.0, 4.0), (0.0, 1.0, 2.0, 3.0, 4.0, 6.0))
ROUND = er.SpentRound("minilm", CHOOSING, GRID, er.GRID, "intent_minilm_spent", "717aa0a", "b8d1b66", "twelve", True)


def main(argv: list[str] | None = None) -> None:
    er.main(argv, ROUND, __doc__)


if __name__ == "__main__":
    main()
