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
        "max_position_embeddings": "the longest input the released configuration takes",
        "relative_attention_num_buckets": "the number of relative-position buckets of a T5-style bias",
        "relative_attention_max_distance": "the offset from which a T5-style bias stops changing",
    }
)


@dataclass(frozen=True)
class Source:
    """Where a setting was read.

    ``reference`` is the key of the work's entry on the References page; ``where`` says where in
    it (a file and key, a section, a class); ``confirmed`` is False when the site could not read
    the value in the released files and ``where`` says what it rests on instead."""

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
    ``record.source("rope_theta")`` where it was read."""

    key: str
    name: str
    kind: str
    settings: Mapping[str, Setting]

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


def _record(key: str, name: str, kind: str, **settings: tuple[Any, Source]) -> ModelRecord:
    unknown = sorted(set(settings) - set(FIELDS))
    if unknown:
        raise ValueError(f"model {key!r}: fields must be named in FIELDS, got {unknown}")
    held = {field: Setting(_frozen(value), source) for field, (value, source) in settings.items()}
    return ModelRecord(key, name, kind, MappingProxyType(held))


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
        "modernbert-base",
        "ModernBERT-base",
        "encoder",
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
