"""`ragshield calibrate`: refit the `intent` guard's threshold on your own users' benign questions.

    ragshield calibrate QUESTIONS.jsonl --out intent-calibrated.json [--target-fpr 0.01]

The shipped `intent` model works with no calibration (its operating point was set on a mixed
public benign set). Calibrate when your users' questions differ from medical / e-mail / general
questions (another domain, another language, a house style), or when the verdicts show benign
users blocked: give a few hundred real questions (at least 3 / target-fpr, e.g. 300 for 1%),
with no extraction attempts among them. Then use the file:
`defense_params: {intent: {load: intent-calibrated.json}}`.

Input lines are JSON objects with `query` (or `text` / `question`). The command prints the
shipped threshold's false-positive rate on these questions, the new threshold, and how many of
the packaged extraction phrasings the new threshold still blocks (a new threshold that lets
most of them through means the "benign" file holds extraction-like requests).
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer

from ragshield.errors import ConfigError
from ragshield.metrics.intervals import wilson
from ragshield.types import iter_jsonl

PHRASINGS = "intent_phrasings.jsonl"


def read_questions(path: Path) -> list[str]:
    """The question texts of a JSONL file (`query`, `text` or `question` per line).

    Raises:
        ConfigError: a missing file, a line that is not a JSON object, or a line with no question.
    """
    if not path.is_file():
        raise ConfigError(f"benign questions file not found: {path}")
    questions = []
    try:
        for number, row in enumerate(iter_jsonl(path), start=1):
            text = row.get("query", row.get("text", row.get("question")))
            if not isinstance(text, str) or not text.strip():
                raise ConfigError(f"{path}: line {number} has no non-empty 'query' (or 'text' / 'question') field")
            questions.append(text)
    except ValueError as error:
        raise ConfigError(str(error)) from error
    return questions


def packaged_extraction_phrasings() -> list[str]:
    """The project's own extraction requests shipped with the package (all styles and languages)."""
    text = resources.files("ragshield").joinpath("data", PHRASINGS).read_text(encoding="utf-8")
    return [row["text"] for row in map(json.loads, text.splitlines()) if row and row.get("label") == 1]


def calibrate(questions: list[str], *, target_fpr: float, out: Path, model: Path | None = None) -> dict[str, Any]:
    """Fit the intent threshold on `questions`, save the calibrated model to `out`, return a summary."""
    from ragshield.guards.intent import MIN_FIT, ExtractionIntent

    if not 0.0 < target_fpr < 1.0:
        raise ConfigError(f"--target-fpr must be strictly between 0 and 1 (e.g. 0.01), got {target_fpr}")
    guard = ExtractionIntent(model=model, threshold="fit")
    if len(questions) < MIN_FIT:
        raise ConfigError(f"calibration needs at least {MIN_FIT} benign questions, got {len(questions)}")
    scores = guard.score_many(questions)
    shipped_threshold = guard._model().threshold
    guard.fit_scores(scores, target_fpr)
    before = int((scores >= shipped_threshold).sum())
    # read again at the fitted line: the second opinion reads flags and near misses relative to the guard's own
    # line, so what it vetoes or raises there is what a user of the file will see
    after = int((guard.score_many(questions) >= guard.threshold_).sum())
    attacks = guard.score_many(packaged_extraction_phrasings())
    caught = int((attacks >= guard.threshold_).sum())
    guard.save(out, calibrated_on=f"{len(questions)} questions from the user's own file")
    return {
        "questions": len(questions),
        "target_fpr": target_fpr,
        "shipped_threshold": shipped_threshold,
        "shipped_fpr": before / len(questions),
        "shipped_fpr_ci95": wilson(before, len(questions)),
        "threshold": guard.threshold_,
        "fpr": after / len(questions),
        "packaged_extraction_phrasings": int(attacks.size),
        "packaged_tpr": caught / attacks.size,
        "packaged_tpr_ci95": wilson(caught, int(attacks.size)),
        "out": str(out),
        "resolvable": len(questions) * target_fpr >= 3,
    }


def register(app: typer.Typer) -> None:
    @app.command("calibrate")
    def calibrate_command(
        questions: Annotated[Path, typer.Argument(help='JSONL of your users\' benign questions ({"query": ...})')],
        out: Annotated[Path, typer.Option(help="calibrated intent model to write (JSON, e.g. intent.json)")],
        target_fpr: Annotated[float, typer.Option(help="share of these questions the guard may block")] = 0.01,
        model: Annotated[Path | None, typer.Option(help="intent model to start from (default: shipped)")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="print a JSON object")] = False,
    ) -> None:
        """Refit the `intent` guard's threshold on your own benign questions and save it."""
        texts = read_questions(questions)
        summary = calibrate(texts, target_fpr=target_fpr, out=out, model=model)
        if as_json:
            typer.echo(json.dumps(summary))
            return
        low, high = summary["shipped_fpr_ci95"]
        typer.echo(
            f"{summary['questions']} questions; shipped threshold {summary['shipped_threshold']:.4f} blocks "
            f"{100 * summary['shipped_fpr']:.2f}% of them (95% CI {100 * low:.2f}-{100 * high:.2f}%)"
        )
        low, high = summary["packaged_tpr_ci95"]
        typer.echo(
            f"new threshold {summary['threshold']:.4f} (target {100 * target_fpr:.2f}%): blocks "
            f"{100 * summary['fpr']:.2f}% of them and {100 * summary['packaged_tpr']:.1f}% of the "
            f"{summary['packaged_extraction_phrasings']} packaged extraction phrasings (95% CI {100 * low:.1f}-"
            f"{100 * high:.1f}%)"
        )
        if not summary["resolvable"]:
            typer.secho(
                f"warning: {summary['questions']} questions cannot resolve a {100 * target_fpr:.2f}% rate; "
                f"give at least {math.ceil(3 / target_fpr)}",
                err=True,
                fg=typer.colors.YELLOW,
            )
        if summary["packaged_tpr"] < 0.9:
            typer.secho(
                "warning: the new threshold lets more than 10% of known extraction requests through; "
                "check the file for extraction-like requests, or keep the shipped threshold",
                err=True,
                fg=typer.colors.YELLOW,
            )
        typer.echo(f"wrote {out}; use it with defense_params: {{intent: {{load: {out}}}}}")
