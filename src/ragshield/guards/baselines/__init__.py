"""Baseline defenses the papers compare against, one module per baseline (registry names in brackets).

* `rephrase` [rephrase] - paraphrase the query with an LLM (Jain et al. 2023);
* `summarize` [summarize] - TGTB's "extract relevant context AS IS" of each chunk (Zeng et al. 2024);
* `rules` [rule-based] - extraction-instruction and PII-request patterns on the query;
* `erase_check` [erase-check] - erase-and-check, suffix mode (Kumar et al. 2023);
* `similarity_threshold` [similarity-threshold] - drop chunks below a cosine threshold (TGTB);
* `rerank` [rerank] - drop chunks whose best sentence is weakly similar to the query;
* `pii_redact` [pii-redact] - redact PII from the streamed answer (presidio pattern recognizers).

Each module has `build_defense(context, **params) -> Defense`; modules are imported lazily
through `ragshield.registry.DEFENSES`.
"""
