"""The position settings of released models, each value with the place it was read.

A page, a figure or a caller that needs a released model's base, sections or scaling reads it
here, never from a function's default: a configuration class's default need not be what a
checkpoint was released with (SmolLM3's class defaults to base 2,000,000, its released models
use 5,000,000). Each record holds settings by field name (:data:`FIELDS` says what each field
means); every setting carries a :class:`Source`: an entry of the site's References page (its
key) and where in that work the value stands (a released configuration file and key, a
report's section, a configuration class). A value the site could not confirm in a released
file is marked ``confirmed=False`` and says what it rests on.

>>> import posenc
>>> record = posenc.models.model("qwen2-vl-7b")
>>> record["rope_theta"], record["mrope_section"]
(1000000.0, (16, 24, 24))
>>> record.source("rope_theta").reference
'qwen2vl'
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Iterator, Mapping

from . import _checks

#: Every field a record may hold, with what it means. Names follow the keys of the released
#: configuration files where those have one.
FIELDS: Mapping[str, str] = MappingProxyType(
    {
        "rope_theta": "the RoPE base b of the frequencies b**(-2r/d); the global layers' where they differ",
        "local_rope_theta": "the RoPE base of the local (sliding-window) layers, where it differs from rope_theta",
        "head_dim": "the channels of one attention head",
        "num_attention_heads": "the number of query heads of each attention layer",
        "qk_rope_head_dim": "multi-head latent attention: the rotated channels of each query and of the shared key",
        "kv_lora_rank": "multi-head latent attention: the width of the latent vector cached per token and layer",
        "num_hidden_layers": "the number of decoder (or encoder) layers",
        "mrope_section": "M-RoPE's pair counts per axis (temporal, height, width)",
        "mrope_axis_layout": "how M-RoPE shares the pairs among the axes: 'chunked' or 'interleaved'",
        "spatial_merge_size": "the side of the square of patches the vision encoder merges into one token",
        "tokens_per_second": "Qwen2.5-VL's temporal position ids per second of video",
        "rope_scaling": "the rescaling of the RoPE frequencies, every parameter of the released configuration",
        "global_period": "the layers of one repeating block, of which one is global",
        "global_position": "where the global layer sits in each block: 'first' or 'last'",
        "no_rope_layer_interval": "every this-many-th layer has no position encoding (NoPE)",
        "sliding_window": "the window, in tokens, of the sliding-window layers",
        "training_lengths": "the sequence lengths of training, one per stage, in order",
        "training_step_shares": "the share of the training steps spent at each of training_lengths",
        "max_position_embeddings": "the longest input the released configuration takes",
        "relative_attention_num_buckets": "the number of relative-position buckets of a T5-style bias",
        "relative_attention_max_distance": "a T5-style bias puts every offset from this one on in its last bucket",
        "relative_attention_bias_stacks": "the stacks that each hold one T5-style bias table, shared by their layers",
    }
)


@dataclass(frozen=True)
class Source:
    """Where a setting was read.

    ``reference`` is the key of the work's entry on the References page; ``where`` says where in
    it (a file and key, a section, a class); ``confirmed`` is False when the site could not read
    the value in a primary source (the released files, the model's own report or code, the
    configuration class that names the checkpoint) and ``where`` says what it rests on instead."""

    reference: str
    where: str
    confirmed: bool = True


@dataclass(frozen=True)
class Setting:
    """One field's value in one record, with its source."""

    value: Any
    source: Source


@dataclass(frozen=True)
class ModelRecord:
    """What one released model fixes about position: ``record["rope_theta"]`` is a value,
    ``record.source("rope_theta")`` where it was read. ``family`` is the name the pages use for
    the model's family ("SmolLM3" for ``name`` "SmolLM3 3B")."""

    key: str
    name: str
    kind: str
    settings: Mapping[str, Setting]
    family: str = ""

    def __getitem__(self, field: str) -> Any:
        return self._setting(field).value

    def __contains__(self, field: object) -> bool:
        return field in self.settings

    def source(self, field: str) -> Source:
        """Where the value of ``field`` was read."""
        return self._setting(field).source

    def get(self, field: str, default: Any = None) -> Any:
        """The value of ``field``, or ``default`` when this record does not hold it."""
        return self.settings[field].value if field in self.settings else default

    def yarn_arguments(self) -> dict[str, Any]:
        """The keyword arguments of ``posenc.yarn_ramp`` and ``posenc.yarn_correction_range`` for
        this model's YaRN: the rotated width (``qk_rope_head_dim``, else ``head_dim``), the base
        and every ramp parameter its ``rope_scaling`` sets; a parameter it leaves out keeps those
        functions' default, which is transformers' default too.

        >>> model("gpt-oss-20b").yarn_arguments()["truncate"]
        False
        """
        scaling = self._setting("rope_scaling").value
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind != "yarn":
            raise ValueError(
                f"rope_scaling of {self.key!r} must be of type 'yarn' to give YaRN's arguments, got {kind!r}"
            )
        width = "qk_rope_head_dim" if "qk_rope_head_dim" in self else "head_dim"
        ramp = ("original_max_position_embeddings", "beta_fast", "beta_slow", "truncate")
        return {
            "dim": self[width],
            "base": self["rope_theta"],
            **{name: scaling[name] for name in ramp if name in scaling},
        }

    def _setting(self, field: str) -> Setting:
        if field not in self.settings:
            known = ", ".join(sorted(self.settings))
            raise KeyError(f"field must be one of the settings of {self.key!r} ({known}), got {field!r}")
        return self.settings[field]


def _frozen(value: Any) -> Any:
    # Records are shared by every caller: lists become tuples and dicts read-only mappings.
    if isinstance(value, dict):
        return MappingProxyType({key: _frozen(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    return value


def _record(key: str, name: str, kind: str, *, family: str = "", **settings: tuple[Any, Source]) -> ModelRecord:
    unknown = sorted(set(settings) - set(FIELDS))
    if unknown:
        raise ValueError(f"model {key!r}: fields must be named in FIELDS, got {unknown}")
    held = {field: Setting(_frozen(value), source) for field, (value, source) in settings.items()}
    return ModelRecord(key, name, kind, MappingProxyType(held), family or name)


def _config(reference: str, checkpoint: str, key: str) -> Source:
    """A value read from the configuration file released with ``checkpoint``."""
    return Source(reference, f"config.json of {checkpoint}, {key}")


_QWEN2_VL = "Qwen/Qwen2-VL-7B-Instruct"
_QWEN25_VL = "Qwen/Qwen2.5-VL-7B-Instruct"
_QWEN3_VL = "Qwen/Qwen3-VL-8B-Instruct"
_MODERNBERT_BASE = "answerdotai/ModernBERT-base"


def _copied_config(reference: str, checkpoint: str, key: str) -> Source:
    """A value of ``checkpoint``'s released configuration that the site could not read in the file
    itself, only in the copies of it that checkpoints fine-tuned from it publish."""
    return Source(
        reference,
        f"config.json of {checkpoint}, {key}: not read in the released file; the value in the copies of "
        f"it that checkpoints fine-tuned from {checkpoint} publish",
        confirmed=False,
    )


def _merge_default(reference: str, checkpoint: str, config_class: str) -> Source:
    """A spatial merge size that the released configuration leaves to its class's default."""
    return Source(
        reference,
        f"{config_class}'s default spatial_merge_size (transformers 5.24.0), which the copies of {checkpoint}'s "
        "config.json that fine-tuned checkpoints publish do not set; the released file itself not read",
        confirmed=False,
    )


_RECORDS = (
    _record(
        "qwen2-vl-7b",
        "Qwen2-VL 7B",
        "vision-language decoder",
        rope_theta=(1_000_000.0, _copied_config("qwen2vl", _QWEN2_VL, "rope_theta")),
        head_dim=(128, _copied_config("qwen2vl", _QWEN2_VL, "hidden_size / num_attention_heads (3,584 / 28)")),
        mrope_section=((16, 24, 24), _copied_config("qwen2vl", _QWEN2_VL, "rope_scaling.mrope_section")),
        mrope_axis_layout=("chunked", Source("transformers", "Qwen2-VL's apply_multimodal_rotary_pos_emb")),
        spatial_merge_size=(2, _merge_default("transformers", _QWEN2_VL, "Qwen2VLVisionConfig")),
    ),
    _record(
        "qwen2.5-vl-7b",
        "Qwen2.5-VL 7B",
        "vision-language decoder",
        rope_theta=(1_000_000.0, _copied_config("qwen25vl", _QWEN25_VL, "rope_theta")),
        head_dim=(128, _copied_config("qwen25vl", _QWEN25_VL, "hidden_size / num_attention_heads (3,584 / 28)")),
        mrope_section=((16, 24, 24), _copied_config("qwen25vl", _QWEN25_VL, "rope_scaling.mrope_section")),
        mrope_axis_layout=("chunked", Source("transformers", "Qwen2.5-VL's apply_multimodal_rotary_pos_emb")),
        spatial_merge_size=(2, _merge_default("transformers", _QWEN25_VL, "Qwen2_5_VLVisionConfig")),
        # The configuration class defaults to 4 (transformers 5.24.0); the checkpoint sets 2.
        tokens_per_second=(2, _copied_config("qwen25vl", _QWEN25_VL, "vision_config.tokens_per_second")),
    ),
    _record(
        "qwen3-vl-8b",
        "Qwen3-VL 8B",
        "vision-language decoder",
        rope_theta=(5_000_000.0, _copied_config("qwen3vl", _QWEN3_VL, "text_config.rope_theta")),
        head_dim=(128, _copied_config("qwen3vl", _QWEN3_VL, "text_config.head_dim")),
        mrope_section=((24, 20, 20), _copied_config("qwen3vl", _QWEN3_VL, "text_config.rope_scaling.mrope_section")),
        mrope_axis_layout=(
            "interleaved",
            _copied_config("qwen3vl", _QWEN3_VL, "text_config.rope_scaling.mrope_interleaved"),
        ),
        spatial_merge_size=(2, _copied_config("qwen3vl", _QWEN3_VL, "vision_config.spatial_merge_size")),
    ),
    _record(
        "bert-base",
        "BERT-Base",
        "encoder",
        family="BERT",
        training_lengths=((128, 512), Source("devlin2019", "Appendix A.2: sequences of 128 tokens, then of 512")),
        training_step_shares=(
            (0.9, 0.1),
            Source("devlin2019", "Appendix A.2: 128 tokens for 90% of the steps, 512 for the other 10%"),
        ),
        max_position_embeddings=(
            512,
            Source("devlin2019", "Appendix A.2: the two spans of a training input hold at most 512 tokens together"),
        ),
    ),
    _record(
        "t5",
        "T5",
        "encoder-decoder",
        relative_attention_num_buckets=(
            32,
            Source("raffel2020", "section 2.1: 32 embeddings, their ranges growing logarithmically"),
        ),
        relative_attention_max_distance=(
            128,
            Source("raffel2020", "section 2.1: offsets beyond 128 share one embedding"),
        ),
        relative_attention_bias_stacks=(
            ("encoder", "decoder"),
            Source(
                "transformers",
                "T5Stack builds its blocks with has_relative_attention_bias=bool(i == 0): the first layer of the "
                "encoder and of the decoder each hold a table that the stack's later layers reuse; cross-attention "
                "has none",
            ),
        ),
    ),
    _record(
        "kimi-k2",
        "Kimi K2",
        "decoder (multi-head latent attention)",
        rope_theta=(
            50_000.0,
            Source(
                "kimik2",
                "config.json of moonshotai/Kimi-K2-Instruct, rope_theta: not read here; the value that other "
                "projects' copies of that file give",
                confirmed=False,
            ),
        ),
        rope_scaling=(
            {
                "type": "yarn",
                "factor": 32.0,
                "original_max_position_embeddings": 4096,
                "beta_fast": 1.0,
                "beta_slow": 1.0,
                "mscale": 1.0,
                "mscale_all_dim": 1.0,
            },
            Source(
                "kimik2",
                "config.json of moonshotai/Kimi-K2-Instruct, rope_scaling: not read here; the values that other "
                "projects' copies of that file give",
                confirmed=False,
            ),
        ),
        qk_rope_head_dim=(
            64,
            Source(
                "kimik2",
                "config.json of moonshotai/Kimi-K2-Instruct, qk_rope_head_dim: not read here; DeepSeek-V3's width, "
                "which the report keeps",
                confirmed=False,
            ),
        ),
        kv_lora_rank=(
            512,
            Source(
                "kimik2",
                "config.json of moonshotai/Kimi-K2-Instruct, kv_lora_rank: not read here; DeepSeek-V3's width, "
                "which the report keeps",
                confirmed=False,
            ),
        ),
        num_attention_heads=(
            64,
            Source(
                "kimik2",
                "the report's description of its architecture: 64 attention heads, half of DeepSeek-V3's 128 (not "
                "re-read here; config.json not read either)",
                confirmed=False,
            ),
        ),
        training_lengths=(
            (4096, 32768),
            Source(
                "kimik2",
                "section 2.5: pre-training at 4,096 tokens, then 60B tokens at 32k, before YaRN takes it to 128k",
            ),
        ),
    ),
    _record(
        "gpt-oss-20b",
        "gpt-oss-20b",
        "decoder",
        family="gpt-oss",
        rope_theta=(
            150_000.0,
            Source(
                "transformers",
                "GptOssConfig.default_theta, in a class that names openai/gpt-oss-20b as its checkpoint; the "
                "released config.json was not read here",
                confirmed=False,
            ),
        ),
        rope_scaling=(
            {
                "rope_type": "yarn",
                "factor": 32.0,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "truncate": False,
                "original_max_position_embeddings": 4096,
            },
            Source(
                "transformers",
                "GptOssConfig's default rope_parameters, in a class that names openai/gpt-oss-20b as its "
                "checkpoint; the released config.json was not read here",
                confirmed=False,
            ),
        ),
        head_dim=(
            64,
            Source(
                "transformers",
                "GptOssConfig.head_dim, in a class that names openai/gpt-oss-20b as its checkpoint; the released "
                "config.json was not read here",
                confirmed=False,
            ),
        ),
        num_hidden_layers=(
            24,
            Source("gptoss", "the architecture section: 24 layers for gpt-oss-20b, 36 for gpt-oss-120b"),
        ),
        sliding_window=(128, Source("gptoss", "the architecture section: the banded attention's window of 128 tokens")),
        global_period=(2, Source("gptoss", "the architecture section: banded and dense layers alternate")),
    ),
    _record(
        "smollm3-3b",
        "SmolLM3 3B",
        "decoder",
        family="SmolLM3",
        rope_theta=(
            5_000_000.0,
            Source(
                "smollm3",
                "Long Context extension: the last stage, from 32k to 64k tokens, raises the RoPE theta to 5M "
                "(SmolLM3Config's default, 2,000,000, is not this value)",
            ),
        ),
        no_rope_layer_interval=(4, Source("smollm3", "Architecture and training details: no RoPE in every 4th layer")),
        num_hidden_layers=(
            36,
            Source(
                "transformers",
                "SmolLM3Config.num_hidden_layers, in a class that names HuggingFaceTB/SmolLM3-3B as its checkpoint; "
                "the released config.json was not read here",
                confirmed=False,
            ),
        ),
    ),
    _record(
        "modernbert-base",
        "ModernBERT-base",
        "encoder",
        family="ModernBERT",
        rope_theta=(160_000.0, _config("modernbert", _MODERNBERT_BASE, "global_rope_theta")),
        local_rope_theta=(10_000.0, _config("modernbert", _MODERNBERT_BASE, "local_rope_theta")),
        num_hidden_layers=(22, _config("modernbert", _MODERNBERT_BASE, "num_hidden_layers")),
        sliding_window=(128, _config("modernbert", _MODERNBERT_BASE, "local_attention")),
        global_period=(3, _config("modernbert", _MODERNBERT_BASE, "global_attn_every_n_layers")),
        global_position=(
            "first",
            Source(
                "transformers",
                "ModernBertConfig.__post_init__: layer i is full attention when i % global_attn_every_n_layers == 0",
            ),
        ),
    ),
)

#: Every record, by key.
MODELS: Mapping[str, ModelRecord] = MappingProxyType({record.key: record for record in _RECORDS})


def model(key: str) -> ModelRecord:
    """The record of the released model ``key`` (one of :data:`MODELS`' keys).

    >>> model("qwen3-vl-8b")["mrope_axis_layout"]
    'interleaved'
    """
    return MODELS[_checks.choice("key", key, tuple(MODELS))]


def records() -> Iterator[ModelRecord]:
    """Every record, in the order they are listed."""
    return iter(_RECORDS)
