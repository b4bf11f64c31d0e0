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
defenses:                       # registry names, or labelled instances of one defense
  - none
  - rag-ct
  - {name: rag-ct, label: rag-ct-tau-0.3, params: {tau: 0.3}}
  - canary-rag
  - {name: rag-ct+canary-rag, label: stacked, params: {canary-rag: {oracle: off}}}
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

from pydantic import Field, ModelWrapValidatorHandler, PrivateAttr, field_validator, model_validator

from ragshield.config import SystemConfig, _Strict, read_yaml, validate
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


class DefenseSpec(_Strict):
    """One defense of the grid as its own instance: a registry `name` (or `a+b`), the cell
    `label` (default: the name) and `params`, so one defense can run twice with different
    parameters (e.g. RAG-CT at two thresholds), like `AttackSpec.label`.

    `params` are the keyword parameters of `name`; for a stacked `a+b` they map each part's
    name to its parameters. They are applied over the config's `defense_params`.
    """

    name: str
    label: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def cell(self) -> str:
        return self.label or self.name

    def params_by_part(self) -> dict[str, dict[str, Any]]:
        """Parameters per registry name of the parts of `name`."""
        parts = [part.strip() for part in self.name.split("+") if part.strip()]
        if len(parts) == 1:
            return {parts[0]: dict(self.params)} if self.params else {}
        unknown = sorted(set(self.params) - set(parts))
        if unknown:
            raise ValueError(f"defense {self.name!r}: params of a stacked defense map its parts {parts}; got {unknown}")
        return {part: dict(self.params[part]) for part in parts if part in self.params}


class EvalConfig(SystemConfig):
    """One evaluation: a knowledge base and a target generator, attacks x defenses, benign traffic.

    It is a `SystemConfig` (the system under test; every cell's system is this one with one
    defense) plus what an evaluation needs. Defaults that differ from the user-facing system's
    are those of paper replication: the `tgtb` layout, the local model with no repetition
    penalty, 128-token answers and the undefended system.

    `corpus` is the knowledge base the index is built from (`embedder` embeds it); `defenses`
    entries are registry names or `{name, label, params}` instances (`DefenseSpec`).
    `attacker` is the attacker LLM of RAG-Thief / Pirates (default: the target model's instance;
    queries are sequential so sharing it is safe); `oracle` is CanaryRAG's oracle model (default:
    a second instance of the local model). `attack_data` is the shared data folder with the TGTB
    information pieces and PIDE anchors (None: the package's built-in lists). `index` is the index
    folder (default: OUT/index, built or reused). `max_chunk_chars` cuts each retrieved chunk in
    the prompt (TGTB: 2048); the leakage metrics compare responses with the same cut chunks, i.e.
    with what the generator saw. `replay_cache` lets attack cells replay byte-identical
    deterministic generation requests of earlier cells (`ragshield.evaluation.gencache`); benign
    cells generate, except under defenses that act only before generation (their allowed queries'
    answers equal the undefended ones; latency is then derived, see
    `ragshield.evaluation.report`). `order` (attack labels and `benign`) runs the grid phase by
    phase across all defenses instead of defense by defense. `compose_layered` composes a stacked
    cell `A+B` whose head only screens queries from the finished `B` cell instead of generating
    again (`ragshield.evaluation.compose`; off when a per-user `policy` is set).
    """

    corpus: str
    corpus_limit: int | None = Field(None, gt=0)
    holdout: int = Field(0, ge=0)
    embedder: str = DEFAULT_EMBEDDER
    # paper-replication defaults (the user-facing system's differ, see SystemConfig)
    generator: dict[str, Any] = Field(default_factory=lambda: {"name": "llama-cpp"})
    prompt_layout: str = "tgtb"
    max_tokens: int = Field(128, gt=0)
    defenses: list[str] = Field(default_factory=lambda: ["none"], min_length=1)
    attacker: dict[str, Any] | None = None
    max_chunk_chars: int = Field(2048, gt=0)
    attacks: list[AttackSpec] = Field(min_length=1)
    benign: BenignSpec | None = None
    attack_data: str | None = None
    replay_cache: bool = True
    compose_layered: bool = True
    order: list[str] | None = None
    topk_sweep: TopKSweep | None = None
    # running apps attacked like defenses are (a cell per attack and target, named by its label);
    # with targets and no explicit `defenses`, the local pipeline is not attacked
    targets: list[TargetSpec] | None = None
    _instances: dict[str, DefenseSpec] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _defense_entries(cls, data: Any, handler: ModelWrapValidatorHandler[EvalConfig]) -> EvalConfig:
        """`defenses` entries that are `{name, label, params}` mappings become their labels; the
        instances are kept (see `defense_instance`)."""
        specs: list[DefenseSpec] = []
        if isinstance(data, dict) and isinstance(data.get("defenses"), list):
            entries = [DefenseSpec.model_validate(e) if isinstance(e, dict) else e for e in data["defenses"]]
            specs = [entry for entry in entries if isinstance(entry, DefenseSpec)]
            data = {**data, "defenses": [e.cell if isinstance(e, DefenseSpec) else e for e in entries]}
        config = handler(data)
        config._instances = {spec.cell: spec for spec in specs}
        for spec in specs:
            spec.params_by_part()  # a stacked spec's params must name its parts
        return config

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

    def defense_instance(self, cell: str) -> DefenseSpec:
        """The defense instance behind a cell label (a plain name is its own instance)."""
        return self._instances.get(cell) or DefenseSpec(name=cell)

    def defense_params_of(self, cell: str) -> dict[str, dict[str, Any]]:
        """Per registry name, the parameters of one cell's defense: `defense_params` with the
        instance's own `params` over them."""
        spec = self.defense_instance(cell)
        merged = {name: dict(params) for name, params in self.defense_params.items()}
        for name, params in spec.params_by_part().items():
            merged[name] = {**merged.get(name, {}), **params}
        return merged

    def system_config(self, defense: str, *, k: int | None = None, index: str | None = None) -> SystemConfig:
        """The `SystemConfig` of one cell (a defense label, or a spec such as `rag-ct+canary-rag`)."""
        shared = self.model_dump(include=set(SystemConfig.model_fields))
        return SystemConfig(
            **{
                **shared,
                "index": index or self.index,
                "k": k or self.k,
                "defenses": [self.defense_instance(defense).name],
                "defense_params": self.defense_params_of(defense),
            }
        )


def load_eval_config(path: str | Path) -> EvalConfig:
    """Read and validate an evaluation YAML file.

    Raises:
        ConfigError: missing file, invalid YAML, unknown keys or invalid values (one message).
    """
    config: EvalConfig = validate(EvalConfig, read_yaml(path), source=f"evaluation config {path}")
    return config
