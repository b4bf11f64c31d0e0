"""An evaluation cell against a running app (`targets:` of an eval config), run as a campaign.

The cell's campaign journal lives in `OUT/campaigns/<cell>.jsonl`, so an interrupted cell
resumes where it stopped (the harness's transcript cache records it only once finished).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragshield.attacks.base import Attack
from ragshield.campaign.engine import CampaignJob, CampaignSettings, run_campaign
from ragshield.campaign.journal import Journal
from ragshield.targets import TargetSpec, make_target
from ragshield.types import Transcript

CAMPAIGN_DIR = "campaigns"


def target_transcript(
    out_dir: Path,
    cell: str,
    attack: Attack,
    spec: Any,
    target: TargetSpec,
    local_pipeline: Callable[[TargetSpec], Any],
    seed: int,
    progress: Callable[[int, int], None],
) -> Transcript:
    """The transcript of attack `spec` (an `AttackSpec`) against `target`, labelled with the
    attack's cell name and the target's label (as a defense would be)."""
    from ragshield.targets.local import LocalTarget

    runner = make_target(target, local=lambda given: LocalTarget(local_pipeline(given)))
    journal = Journal(
        out_dir / CAMPAIGN_DIR / f"{cell}.jsonl",
        header={"kind": "attack", "name": spec.cell, "defense": target.cell, "seed": seed},
        identity={"attack": spec.model_dump(mode="json"), "target": target.model_dump(mode="json"), "seed": seed},
    )
    settings = CampaignSettings(history=target.history)
    transcript, _ = run_campaign(CampaignJob(attack, spec.budget, journal, seed), runner, settings, progress=progress)
    return replace(transcript, name=spec.cell, defense=target.cell)
