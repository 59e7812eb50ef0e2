"""posenc: positional encodings for transformers, with proofs and figures.

The NumPy encodings live in :mod:`posenc.encodings` and the conventions of other libraries
(fairseq's schedule and position ids, RoPE pairings and scaling, T5 buckets) in
:mod:`posenc.conventions`, the relative schemes (Shaw, Transformer-XL, T5, DeBERTa,
symmetric ALiBi, Kerple, FIRE, CoPE) in :mod:`posenc.relative`, and the pieces of
long-context methods (critical dimension, YaRN's ramp and attention factor, LongRoPE, xPos,
re-rotating cached keys, attention entropy) in :mod:`posenc.long_context`, positions on 2-D
patch grids (sin-cos tables, axial and mixed 2-D RoPE, resampled tables) in :mod:`posenc.grids`,
and the multimodal RoPE of Qwen2-VL, Qwen2.5-VL and Qwen3-VL (axis of each pair, rotation,
three-axis position ids) in :mod:`posenc.mrope`; all are re-exported here. The SymPy
derivation registry is :mod:`posenc.site.derivations` (run it with ``python -m posenc.site.verify``)
and the figure helper is :mod:`posenc.site.plotting`; neither is imported by ``import posenc``,
so using the encodings costs no SymPy or Matplotlib import.
"""

from .encodings import (
    DEFAULT_BASE,
    alibi_bias,
    alibi_slopes,
    frequencies,
    kernel,
    rope,
    shift_operator,
    sinusoidal,
    squared_distance,
    wavelengths,
)
from .conventions import (
    apply_rope,
    dynamic_ntk_frequencies,
    fairseq_embedding,
    fairseq_position_ids,
    linear_scaled_frequencies,
    llama3_frequencies,
    rope_frequencies,
    rope_permutation,
    rope_scaling_frequencies,
    schedule_frequencies,
    sinusoidal_embedding,
    t5_relative_position_bucket,
    yarn_frequencies,
)
from .relative import (
    TransformerXLTerms,
    absolute_table_rows,
    alibi_symmetric_bias,
    cope_logits,
    cope_positions,
    deberta_log_bucket,
    deberta_relative_positions,
    fire_bias,
    kerple_bias,
    shaw_logits,
    shaw_relative_index,
    shaw_values,
    t5_bias,
    transformer_xl_terms,
)
from .long_context import (
    apply_xpos,
    attention_entropy,
    critical_dimension,
    longrope_frequencies,
    pair_index_at_turns,
    rerotate_keys,
    streaming_cache,
    xpos_scales,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_ramp,
)
from .grids import (
    axial_rope_2d,
    mixed_rope_2d,
    resample_patch_table,
    resample_weights,
    sincos_2d_table,
)

from .mrope import apply_mrope, mrope_axes, mrope_phases, mrope_position_ids

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE",
    "TransformerXLTerms",
    "absolute_table_rows",
    "alibi_bias",
    "alibi_slopes",
    "alibi_symmetric_bias",
    "apply_mrope",
    "apply_rope",
    "cope_logits",
    "cope_positions",
    "deberta_log_bucket",
    "deberta_relative_positions",
    "apply_xpos",
    "attention_entropy",
    "axial_rope_2d",
    "critical_dimension",
    "dynamic_ntk_frequencies",
    "fairseq_embedding",
    "fairseq_position_ids",
    "fire_bias",
    "frequencies",
    "kernel",
    "kerple_bias",
    "linear_scaled_frequencies",
    "mrope_axes",
    "mrope_phases",
    "mrope_position_ids",
    "llama3_frequencies",
    "longrope_frequencies",
    "mixed_rope_2d",
    "pair_index_at_turns",
    "rerotate_keys",
    "resample_patch_table",
    "resample_weights",
    "rope",
    "rope_frequencies",
    "rope_permutation",
    "rope_scaling_frequencies",
    "schedule_frequencies",
    "shaw_logits",
    "shaw_relative_index",
    "shaw_values",
    "shift_operator",
    "sincos_2d_table",
    "sinusoidal",
    "sinusoidal_embedding",
    "squared_distance",
    "t5_bias",
    "streaming_cache",
    "t5_relative_position_bucket",
    "transformer_xl_terms",
    "wavelengths",
    "xpos_scales",
    "yarn_attention_factor",
    "yarn_correction_range",
    "yarn_frequencies",
    "yarn_ramp",
]
