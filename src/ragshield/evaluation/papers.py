"""The numbers the two papers report, for side-by-side tables (labelled as the papers', never ours).

Sources: the RAG-CT paper (Lyu et al., arXiv 2609.16095, section 4:
Table 1 "Attack results without defense (100 prompts)", Llama2 target; Table 2 "Comparison of
defense performance across attacks (Healthcare dataset, 100 prompts)") and
the CanaryRAG paper (Xie et al., arXiv 2604.10717; only a
section summary is public, so only headline numbers are available).

The papers' setups differ from ours (Llama2-7B/Qwen2-72B/GPT-4 targets, 100 prompts,
BGE-large for Email; CanaryRAG: three agents, up to 1,500 attempts): compare trends, not
digits.
"""

from __future__ import annotations

from typing import Final

#: attack name in ragshield -> the RAG-CT paper's name
RAG_CT_ATTACK_NAMES: Final = {"tgtb": "TGTB", "pide": "PIDE", "rag-thief": "RAG-Thief", "pirates": "Pirate"}

#: RAG-CT Table 1: (ULC, PII, ASR) without defense, per dataset and attack, 100 prompts
RAG_CT_TABLE1: Final[dict[str, dict[str, tuple[int, int, float]]]] = {
    "healthcare": {
        "tgtb": (105, 78, 0.75),
        "pide": (124, 73, 0.69),
        "rag-thief": (156, 81, 0.72),
        "pirates": (212, 97, 0.93),
    },
    "email": {
        "tgtb": (112, 117, 1.00),
        "pide": (133, 109, 1.00),
        "rag-thief": (182, 156, 1.00),
        "pirates": (238, 201, 1.00),
    },
}

#: ragshield defense name -> the RAG-CT paper's row name in Table 2
RAG_CT_DEFENSE_NAMES: Final = {
    "rephrase": "Rephrasing",
    "summarize": "Summarization",
    "rule-based": "Rule-based",
    "erase-check": "Erase-check",
    "rag-ct": "RAG-CT",
}

#: RAG-CT Table 2 (Healthcare, 100 prompts), Llama2-7b-chat rows: defense -> attack -> (ULC, PII, ASR)
RAG_CT_TABLE2_LLAMA2: Final[dict[str, dict[str, tuple[int, int, float]]]] = {
    "rephrase": {
        "tgtb": (98, 75, 0.71),
        "pide": (109, 48, 0.48),
        "rag-thief": (119, 52, 0.43),
        "pirates": (199, 100, 1.00),
    },
    "summarize": {
        "tgtb": (87, 60, 0.52),
        "pide": (102, 55, 0.45),
        "rag-thief": (95, 63, 0.55),
        "pirates": (176, 82, 0.72),
    },
    "rule-based": {
        "tgtb": (12, 3, 0.03),
        "pide": (71, 36, 0.36),
        "rag-thief": (80, 45, 0.45),
        "pirates": (132, 38, 0.29),
    },
    "erase-check": {
        "tgtb": (35, 12, 0.12),
        "pide": (13, 3, 0.03),
        "rag-thief": (66, 15, 0.15),
        "pirates": (97, 60, 0.47),
    },
    "rag-ct": {"tgtb": (2, 0, 0.00), "pide": (6, 0, 0.00), "rag-thief": (22, 3, 0.03), "pirates": (67, 11, 0.08)},
}

#: RAG-CT Table 2, ASR only, for the other two targets (Qwen2-72B, ChatGPT-4)
RAG_CT_TABLE2_ASR_OTHER: Final[dict[str, dict[str, tuple[float, float, float, float]]]] = {
    "Qwen2-72B": {
        "rephrase": (0.60, 0.67, 0.35, 0.75),
        "summarize": (0.60, 0.53, 0.61, 0.85),
        "rule-based": (0.05, 0.37, 0.33, 0.55),
        "erase-check": (0.17, 0.10, 0.21, 0.53),
        "rag-ct": (0.00, 0.00, 0.05, 0.05),
    },
    "ChatGPT-4": {
        "rephrase": (0.76, 0.50, 0.70, 0.90),
        "summarize": (0.68, 0.40, 0.68, 0.87),
        "rule-based": (0.08, 0.30, 0.34, 0.40),
        "erase-check": (0.19, 0.07, 0.27, 0.68),
        "rag-ct": (0.00, 0.00, 0.04, 0.06),
    },
}

#: CanaryRAG headline numbers (section summary of arXiv 2604.10717)
CANARYRAG_HEADLINES: Final[dict[str, str]] = {
    "relative mean CRR vs no defense": "0.04x (about 96% reduction; Pirates and RAG-Thief, three agents, "
    "up to 1,500 attempts, detected users allowed to keep attacking)",
    "benign FPR": "below 0.15% (worst case across agents)",
    "TPR, standard extraction": "99.2%",
    "TPR, adaptive attacks (suppression, obfuscation, deferred injection)": "94%",
    "latency": "distribution close to no defense (negligible overhead)",
    "response quality (BERTScore)": "negligible change",
}

#: relative mean CRR (defended / undefended) the CanaryRAG and RAGFort papers report for baselines
PAPER_RELATIVE_CRR: Final[dict[str, tuple[float, str]]] = {
    "canary-rag": (0.04, "CanaryRAG paper, Table 1"),
    "summarize": (0.87, "RAGFort paper (arXiv 2511.10128), summarisation baseline"),
    "rerank": (0.91, "RAGFort paper (arXiv 2511.10128), re-ranking baseline"),
}

CANARYRAG_FPR_BOUND: Final = 0.0015
