"""The twenty-fifth round toward v14 (issue 18): ME's MiniLM refit with requests wrapped in a chat turn weighed up.

    OMP_NUM_THREADS=2 nice .venv/bin/python benchmarks/intent_minilm_chat.py --refit MW.npz --before OLD.npz \\
        --before-other E5.npz --rows ROWS.json --calib-rows CALIB.json [--candidate DIR] [--cost]

The twenty-fourth round (`intent_minilm_enron.py`) for a refit fitted by `intent_verifier.py --save --train-heldout
... --enron-weight 5 --chat-request-weight 3` (`CHAT_REQUEST_WEIGHT`: the training requests of the styles
`intent_verifier_fit.CHAT_REQUEST_STYLES` weigh 3), its settings chosen on sixteen development sets (`CHOOSING`: the
twenty-fourth round's fourteen and v33 and chat20, its judges), as the model card says ("Toward v14, twenty-fifth
round"). `--before` and `--before-other` are the packaged files, unchanged since the twenty-fourth round (`git show
92ae4c5:src/ragshield/data/...`). Writes the sweep to `--out` (default `benchmarks/results/intent_minilm_chat.json`).
"""

from __future__ import annotations

import dataclasses

import intent_e5_refit as er
import intent_minilm_enron as enron_round

CHOOSING = (*enron_round.CHOOSING, "v33", "chat20")
CHAT_REQUEST_WEIGHT = 3.0
ROUND = dataclasses.replace(
    enron_round.ROUND,
    choosing=CHOOSING,
    script="intent_minilm_chat",
    how_many="sixteen",
    chat_request_weight=CHAT_REQUEST_WEIGHT,
)


def main(argv: list[str] | None = None) -> None:
    er.main(argv, ROUND, __doc__)


if __name__ == "__main__":
    main()
