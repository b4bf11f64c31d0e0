"""`EvalConfig`: the YAML shape of `ragshield eval --config FILE.yaml`.

```yaml
corpus: enron:../shared/data/enron.jsonl   # synthetic[:N] | healthcaremagic:PATH | enron:PATH | jsonl:PATH
holdout: 400                    # records kept OUT of the index; `holdout` benign/calibration queries come from them
generator: {name: llama-cpp}    # or {name: openai-compatible, base_url: ..., model: ...}
k: 3
max_tokens: 128
attacks:
  - {name: tgtb, budget: 50}
  - {name: pide, budget: 50}
  - {name: rag-thief, budget: 50, params: {attacker_max_tokens: 128}}
  - {name: pirates, budget: 50}
defenses: [none, rag-ct, canary-rag, rag-ct+canary-rag, rephrase, summarize, rule-based, erase-check]
benign: {path: holdout, limit: 200}          # or a JSONL file with `query` (and optional `reference_answer`)
calibration: {path: holdout, target_fpr: 0.01, limit: 200}
topk_sweep: {attack: pirates, defenses: [rag-ct], values: [2, 3, 5], budget: 20}
targets:                        # optional: also attack running apps (ragshield.targets); `corpus` is their KB export
  - {kind: openai-chat, label: app-prod, options: {base_url: http://127.0.0.1:8000/v1, model: ragshield}}
seed: 0
```

Relative paths are read from the current directory (run from the repository root:
`../shared/data/...`). Unknown keys are errors, as in every ragshield config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator, model_validator

from ragshield.config import CalibrationConfig, PolicyConfig, SystemConfig, _Strict, read_yaml, validate
from ragshield.rag.embedding import DEFAULT_EMBEDDER
from ragshield.targets import TargetSpec

HOLDOUT = "holdout"  # the `path` of a benign / calibration set drawn from the held-out records


class AttackSpec(_Strict):
    """One attack of the grid: a registry name, a query budget and the attack's own parameters.

    `label` names the cell (default: the name), so one attack can run twice with different
    parameters (e.g. TGTB targeted and untargeted).
    """

    name: str
    budget: int = Field(50, gt=0)
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None

    @property
    def cell(self) -> str:
        return self.label or self.name


class BenignSpec(_Strict):
    """Benign queries: a JSONL file (`query`, optional `reference_answer`) or `holdout`.

    `offset` skips that many usable queries first (to keep them apart from calibration).
    """

    path: str
    limit: int | None = Field(200, gt=0)
    offset: int = Field(0, ge=0)


class TopKSweep(_Strict):
    """A small dedicated sweep for ASR against top-k (RAG-CT Fig. 5(b)): `attack` (a cell label
    of `attacks`) against each of `defenses` at each k of `values`, `budget` queries each."""

    attack: str
    defenses: list[str] = Field(default_factory=lambda: ["rag-ct"])
    values: list[int] = Field(default_factory=lambda: [2, 3, 5])
    budget: int = Field(20, gt=0)

    @field_validator("values")
    @classmethod
    def _at_least_two(cls, values: list[int]) -> list[int]:
        if not values or any(value < 2 for value in values):
            raise ValueError("top-k values must be >= 2 (RAG-CT needs two scores)")
        return sorted(set(values))


class EvalConfig(_Strict):
    """One evaluation: a knowledge base and a target generator, attacks x defenses, benign traffic.

                `attacker` is the attacker LLM of RAG-Thief / Pirates (default: the target model's
                instance; queries are sequential so sharing it is safe); `oracle` is CanaryRAG's oracle
                model (default: a second instance of the local model). `attack_data` is the shared data
                folder with the TGTB information pieces and PIDE anchors (None: the package's built-in
                lists). `index` is the index folder (default: OUT/index, built or reused). `max_chunk_chars`
            cuts each retrieved chunk in the prompt (TGTB: 2048); the leakage metrics compare responses
            with the same cut chunks, i.e. with what the generator saw. `replay_cache` lets attack cells
        replay byte-identical deterministic generation requests of earlier cells
        (`ragshield.evaluation.gencache`); benign cells generate, except under defenses that act only
    before generation (their allowed queries' answers equal the undefended ones; latency is then
    derived, see `ragshield.evaluation.report`). `order` (attack labels and `benign`) runs the grid
    phase by phase across all defenses instead of defense by defense: e.g. the cheap fixed-query
    attacks everywhere first. `compose_layered` composes a stacked cell `A+B` whose head only
    screens queries from the finished `B` cell instead of generating again
    (`ragshield.evaluation.compose`; off when a per-user `policy` is set).
    """

    corpus: str
    corpus_limit: int | None = Field(None, gt=0)
    holdout: int = Field(0, ge=0)
    index: str | None = None
    embedder: str = DEFAULT_EMBEDDER
    generator: dict[str, Any] = Field(default_factory=lambda: {"name": "llama-cpp"})
    attacker: dict[str, Any] | None = None
    oracle: dict[str, Any] | None = None
    k: int = Field(3, gt=0, le=100)
    prompt_layout: str = "tgtb"
    max_tokens: int = Field(128, gt=0)
    max_chunk_chars: int = Field(2048, gt=0)
    attacks: list[AttackSpec] = Field(min_length=1)
    defenses: list[str] = Field(default_factory=lambda: ["none"], min_length=1)
    defense_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    benign: BenignSpec | None = None
    calibration: CalibrationConfig | None = None
    policy: PolicyConfig | None = None
    attack_data: str | None = None
    fail_closed: bool = True
    seed: int = 0
    replay_cache: bool = True
    compose_layered: bool = True
    order: list[str] | None = None
    topk_sweep: TopKSweep | None = None
    # running apps attacked like defenses are (a cell per attack and target, named by its label);
    # with targets and no explicit `defenses`, the local pipeline is not attacked
    targets: list[TargetSpec] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> EvalConfig:
        labels = [attack.cell for attack in self.attacks]
        if len(set(labels)) != len(labels):
            raise ValueError("attack labels must be unique; give repeated attacks a 'label'")
        if len(set(self.defenses)) != len(self.defenses):
            raise ValueError("defenses must be unique")
        if any(name.startswith("benign") or "__" in name for name in labels):
            raise ValueError("attack labels must not start with 'benign' or contain '__'")
        uses_holdout = any(s is not None and s.path == HOLDOUT for s in (self.benign, self.calibration))
        if uses_holdout and self.holdout == 0:
            raise ValueError("benign/calibration 'path: holdout' needs 'holdout: N' records kept out of the index")
        unknown = sorted(set(self.order or ()) - {*labels, "benign"})
        if unknown:
            raise ValueError(f"order names {unknown}: not attack labels or 'benign' (attacks: {labels})")
        if self.topk_sweep is not None and self.topk_sweep.attack not in labels:
            raise ValueError(f"topk_sweep.attack {self.topk_sweep.attack!r} is not one of the attacks: {labels}")
        target_cells = [target.cell for target in self.targets or ()]
        if len(set(target_cells)) != len(target_cells) or set(target_cells) & set(self.defenses):
            raise ValueError("target labels must be unique and differ from the defense names; give targets a 'label'")
        self.system_config("none")  # surfaces generator / layout errors now, not after hours of running
        return self

    def phases(self) -> list[str]:
        """The phase order: `order`, then any attack (and `benign`) it leaves out, in config order."""
        given = list(self.order or [])
        rest = [spec.cell for spec in self.attacks if spec.cell not in given]
        return given + rest + ([] if "benign" in given else ["benign"])

    def system_config(self, defense: str, *, k: int | None = None, index: str | None = None) -> SystemConfig:
        """The `SystemConfig` of one cell (defense spec such as `rag-ct+canary-rag`)."""
        return SystemConfig(
            index=index or self.index,
            corpus=self.corpus,
            embedder=self.embedder,
            generator=self.generator,
            oracle=self.oracle,
            k=k or self.k,
            prompt_layout=self.prompt_layout,
            max_tokens=self.max_tokens,
            defenses=[defense],
            defense_params=self.defense_params,
            calibration=self.calibration,
            policy=self.policy,
            fail_closed=self.fail_closed,
            seed=self.seed,
        )


def load_eval_config(path: str | Path) -> EvalConfig:
    """Read and validate an evaluation YAML file.

    Raises:
        ConfigError: missing file, invalid YAML, unknown keys or invalid values (one message).
    """
    config: EvalConfig = validate(EvalConfig, read_yaml(path), source=f"evaluation config {path}")
    return config
