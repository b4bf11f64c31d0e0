"""Extraction campaigns against running RAG applications (`ragshield.targets`): an async engine
with in-flight and rate limits, retries, and a resumable transcript."""

from ragshield.campaign.engine import (
    MAX_BUDGET,
    CampaignAborted,
    CampaignJob,
    CampaignSettings,
    CampaignStats,
    run_campaign,
    run_campaigns,
)
from ragshield.campaign.journal import Journal

__all__ = [
    "MAX_BUDGET",
    "CampaignAborted",
    "CampaignJob",
    "CampaignSettings",
    "CampaignStats",
    "Journal",
    "run_campaign",
    "run_campaigns",
]
