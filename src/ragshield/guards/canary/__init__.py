"""CanaryRAG: canaries in retrieved chunks, a streaming monitor that sees through encodings, and an
oracle path that exposes suppression (Xie et al., "Detecting RAG Extraction Attack via Dual-Path
Runtime Integrity Game", ACL 2026)."""

from ragshield.guards.canary.canaries import CANARY_ALPHABET, DEFAULT_LENGTH, canary_bits, new_canaries
from ragshield.guards.canary.defense import build_defense, default_oracle_generator
from ragshield.guards.canary.injector import PLACEMENTS, CanaryInjector
from ragshield.guards.canary.matcher import CanaryHit, CanaryMatcher, CanaryScanner, skeleton
from ragshield.guards.canary.monitor import CanaryGuard, CanaryMonitor
from ragshield.guards.canary.oracle import OracleConfig, OracleHealth, OracleOutcome, OraclePath, self_check

__all__ = [
    "CANARY_ALPHABET",
    "DEFAULT_LENGTH",
    "PLACEMENTS",
    "CanaryGuard",
    "CanaryHit",
    "CanaryInjector",
    "CanaryMatcher",
    "CanaryMonitor",
    "CanaryScanner",
    "OracleConfig",
    "OracleHealth",
    "OracleOutcome",
    "OraclePath",
    "build_defense",
    "canary_bits",
    "default_oracle_generator",
    "new_canaries",
    "self_check",
    "skeleton",
]
