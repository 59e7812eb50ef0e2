"""M-RoPE, the multimodal RoPE of Qwen2-VL, Qwen2.5-VL and Qwen3-VL.

Each token carries three position ids (temporal, height, width) instead of one. The head's
``head_dim / 2`` frequency pairs are shared out among the three axes by ``sections`` (pair
counts per axis) and pair r turns by ``ids[axis(r)] * omega_r``, with the usual
``omega_r = base ** (-2 r / head_dim)``. Text tokens get three equal ids, so on text alone
M-RoPE is ordinary RoPE; an image or video token gets its frame, row and column.

* ``mrope_axes``: which axis each pair follows, "chunked" (Qwen2-VL and Qwen2.5-VL: the first
  ``sections[0]`` pairs temporal, then height, then width) or "interleaved" (Qwen3-VL:
  temporal, height, width in turn from the fastest pair, the temporal axis taking the pairs
  left over at the slow end).
* ``mrope_phases`` and ``apply_mrope``: each pair's phase, and the rotation of ``x`` in the
  half-split pairing (channel r with channel ``r + head_dim / 2``) that these models use.
* ``mrope_position_ids``: the three ids of every token of a sequence of text, images and
  videos, as the ``get_rope_index`` of each model computes them, under either of the two rules
  in use for where the position goes after an image or a video (``RESUME_RULES``).

Every function checks its arguments through ``posenc._checks`` and names the offending one.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _checks, _precision
from .rotary import DEFAULT_BASE, rotate_pairs

#: The ways of sharing the pairs among the axes.
AXIS_LAYOUTS = ("chunked", "interleaved")
#: The models whose position ids ``mrope_position_ids`` reproduces.
VARIANTS = ("qwen2-vl", "qwen2.5-vl", "qwen3-vl")
#: The kinds of segment a sequence is described by.
SEGMENT_KINDS = ("text", "image", "video")
#: Where the position goes after an image or a video: one past the largest id so far (Qwen's own
#: fine-tuning code, transformers 4.57.1 and 5.2.0, sglang), or the segment's start plus its
#: larger merged side (transformers 5.3.0 and 5.24.0).
RESUME_RULES = ("after-largest-id", "after-larger-side")

_IDS_RULE = "below 2**53 in magnitude (exact in float64)"


# ---------------------------------------------------------------------------------------
# Which axis each pair follows


def _sections(value: Any, pairs: int, axis_layout: str) -> NDArray[np.int64]:
    """Three non-negative pair counts summing to ``pairs``, placeable in ``axis_layout``."""
    sections = _checks.integer_array("sections", value, what="integer pair counts")
    if sections.shape != (3,):
        raise ValueError(f"sections must be three pair counts (temporal, height, width), got shape {sections.shape}")
    if np.any(sections < 0):
        raise ValueError(f"sections must be >= 0 (pair counts), got {sections.tolist()}")
    total = sum(int(count) for count in sections.tolist())  # Python integers: no int64 wrap-around
    if total != pairs:
        raise ValueError(
            f"sections must sum to head_dim / 2 = {pairs} (one axis per pair), got {sections.tolist()} "
            f"summing to {total}"
        )
    if axis_layout == "interleaved" and (3 * int(sections[1]) > pairs + 1 or 3 * int(sections[2]) > pairs):
        raise ValueError(
            f"sections must fit the interleaved layout: height takes pairs 1, 4, 7, ... and width pairs 2, 5, "
            f"8, ..., so 3 * sections[1] <= {pairs + 1} and 3 * sections[2] <= {pairs} for {pairs} pairs, "
            f"got {sections.tolist()}"
        )
    return sections


def _axes(pairs: int, sections: NDArray[np.int64], axis_layout: str) -> NDArray[np.int64]:
    if axis_layout == "chunked":
        return np.repeat(np.arange(3, dtype=np.int64), sections)
    axes = np.zeros(pairs, dtype=np.int64)
    for axis in (1, 2):
        # Every third pair from pair `axis`, sections[axis] of them; the rest stay temporal.
        axes[axis : 3 * int(sections[axis]) : 3] = axis
    return axes


def mrope_axes(head_dim: int, sections: ArrayLike, *, axis_layout: str = "chunked") -> NDArray[np.int64]:
    """The axis each frequency pair follows: 0 temporal, 1 height, 2 width; shape ``(head_dim // 2,)``.

    ``sections`` gives the number of pairs of each axis (temporal, height, width) and must sum
    to ``head_dim / 2``; Qwen2-VL's ``mrope_section`` is ``[16, 24, 24]`` for a head of 128,
    Qwen3-VL's ``[24, 20, 20]``. "chunked" (Qwen2-VL, Qwen2.5-VL) gives the first
    ``sections[0]`` pairs (the fastest) to the temporal axis, the next ``sections[1]`` to height
    and the last ``sections[2]`` to width. "interleaved" (Qwen3-VL) gives height the pairs
    1, 4, 7, ... (``sections[1]`` of them) and width the pairs 2, 5, 8, ... (``sections[2]``),
    and every remaining pair to the temporal axis: pairs 0, 3, 6, ... and all pairs past the
    interleaved run. So each axis sees fast and slow frequencies alike. transformers reads only
    ``sections[1]`` and ``sections[2]`` here; posenc asks that the height and width runs fit
    inside the pairs, so that each axis gets exactly its section.

    >>> mrope_axes(12, [2, 2, 2]).tolist()
    [0, 0, 1, 1, 2, 2]
    >>> mrope_axes(16, [4, 2, 2], axis_layout="interleaved").tolist()
    [0, 1, 2, 0, 1, 2, 0, 0]
    """
    head_dim = _checks.width(head_dim, name="head_dim")
    axis_layout = _checks.choice("axis_layout", axis_layout, AXIS_LAYOUTS)
    pairs = head_dim // 2
    return _axes(pairs, _sections(sections, pairs, axis_layout), axis_layout)


# ---------------------------------------------------------------------------------------
# Phases and the rotation


def _three_axis_ids(value: Any) -> NDArray[np.int64]:
    """Position ids of shape (3, n): non-negative integers below 2**53, as int64."""
    array = _checks.as_array("position_ids", value, _IDS_RULE)
    if not _checks._is_real(array):  # before the shape: a string is the wrong kind of value, not of shape
        raise TypeError(f"position_ids must hold integers, got dtype {array.dtype}")
    if array.ndim != 2 or array.shape[0] != 3:
        raise ValueError(
            f"position_ids must have shape (3, n): temporal, height and width ids of each token, got shape "
            f"{array.shape}"
        )
    return _checks.position_ids(array.reshape(-1), "position_ids").reshape(3, -1)


def _turns(ids: np.ndarray, pairs: int, base: float, inv_freq: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's frequency in turns as (hi, lo): ``base ** (-2 r / head_dim)`` or ``inv_freq``."""
    if inv_freq is None:
        return _precision.power_turns(base, 2, 2 * pairs, pairs)
    frequencies = _checks.frequency_array(inv_freq, pairs)
    _checks.phases(ids, frequencies, "inv_freq")
    return _precision.value_turns(frequencies)


def _mrope_sincos(
    ids: np.ndarray, axes: np.ndarray, turns: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Sines and cosines of ``ids[axes[r], j] * omega_r``, shape (n, pairs), one axis's pairs at a time."""
    n, pairs = ids.shape[1], axes.size
    sin, cos = np.empty((n, pairs)), np.empty((n, pairs))
    for axis in range(3):
        columns = np.flatnonzero(axes == axis)
        if columns.size:
            sin[:, columns], cos[:, columns] = _precision.sincos(ids[axis], (turns[0][columns], turns[1][columns]))
    return sin, cos


def mrope_phases(
    position_ids: ArrayLike,
    head_dim: int,
    sections: ArrayLike,
    *,
    base: float = DEFAULT_BASE,
    axis_layout: str = "chunked",
) -> NDArray[np.float64]:
    """Each pair's phase at each token, ``position_ids[axis(r), j] * omega_r``: shape ``(n, head_dim // 2)``.

    ``position_ids`` has shape ``(3, n)`` (temporal, height and width id of each token);
    ``axis(r)`` is ``mrope_axes(head_dim, sections, axis_layout=axis_layout)`` and
    ``omega_r = base ** (-2 r / head_dim)`` (correctly rounded). Each phase is that float64
    product, rounded once, for plotting; ``apply_mrope`` does not use it but reduces the exact
    product instead.

    >>> mrope_phases([[2], [3], [5]], 4, [1, 0, 1], base=100.0).tolist()
    [[2.0, 0.5]]
    """
    ids = _three_axis_ids(position_ids)
    head_dim = _checks.width(head_dim, name="head_dim")
    axis_layout = _checks.choice("axis_layout", axis_layout, AXIS_LAYOUTS)
    base = _checks.base(base)
    pairs = head_dim // 2
    sections_checked = _sections(sections, pairs, axis_layout)
    _checks.elements("position_ids and head_dim", ids.shape[1], pairs)
    axes = _axes(pairs, sections_checked, axis_layout)
    omega = _precision.power_values(base, 2, head_dim, pairs)
    return ids[axes].T.astype(np.float64) * omega


def apply_mrope(
    x: ArrayLike,
    position_ids: ArrayLike,
    *,
    sections: ArrayLike,
    base: float = DEFAULT_BASE,
    axis_layout: str = "chunked",
    inv_freq: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """M-RoPE: rotate ``x`` (shape ``(..., n, head_dim)``) with three position ids per token.

    Channels are paired in the half-split way of transformers' ``rotate_half`` (channel r with
    channel ``r + head_dim / 2``), and pair r turns by ``position_ids[axis(r), j] * omega_r``,
    where ``position_ids`` has shape ``(3, n)`` (temporal, height, width), ``axis(r)`` comes from
    ``mrope_axes(head_dim, sections, axis_layout=axis_layout)`` and ``omega_r`` is
    ``base ** (-2 r / head_dim)`` or ``inv_freq[r]``. When a token's three ids are equal (text),
    this is ``apply_rope`` with ``layout="halves"`` at that id. Float64 result; every phase must
    be below 2**53 radians, as in ``apply_rope``.

    >>> from posenc import apply_rope
    >>> x = [[0.0, 1.0, 0.0, 0.0]]
    >>> apply_mrope(x, [[0], [5], [9]], sections=[1, 0, 1], base=100.0).round(4).tolist()
    [[0.0, 0.6216, 0.0, 0.7833]]
    >>> bool(np.allclose(apply_mrope(x, [[3], [3], [3]], sections=[1, 1, 0]), apply_rope(x, [3], layout="halves")))
    True
    """
    ids = _three_axis_ids(position_ids)
    values = _checks.vectors(x, ids[0])
    head_dim = _checks.rotary_dim(None, values.shape[-1], "x's last axis")
    axis_layout = _checks.choice("axis_layout", axis_layout, AXIS_LAYOUTS)
    base = _checks.base(base)
    pairs = head_dim // 2
    axes = _axes(pairs, _sections(sections, pairs, axis_layout), axis_layout)
    sin, cos = _mrope_sincos(ids, axes, _turns(ids, pairs, base, inv_freq))
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below, by name
        rotated = rotate_pairs(values, sin, cos, head_dim, "halves")
    return _checks.finite("x", rotated)


# ---------------------------------------------------------------------------------------
# Position ids of a sequence of text, images and videos


def _segment(index: int, segment: Any, variant: str, merge: int) -> tuple[str, tuple[int, ...], float | None]:
    """One segment as (kind, sizes, seconds per grid step or None), each part checked."""
    name = f"segments[{index}]"
    if isinstance(segment, (str, bytes)) or not isinstance(segment, (tuple, list)) or not segment:
        raise TypeError(
            f"{name} must be a tuple such as ('text', n), ('image', (t, h, w)) or ('video', (t, h, w)), "
            f"got {segment!r}"[:300]
        )
    kind = _checks.choice(f"{name}'s kind", segment[0], SEGMENT_KINDS)
    if kind == "text":
        if len(segment) != 2:
            raise ValueError(f"{name} must be ('text', n), got {len(segment)} items")
        return kind, (_checks.integer(f"{name}'s length", segment[1], minimum=0),), None
    allowed = 3 if (kind == "video" and variant == "qwen2.5-vl") else 2
    if not 2 <= len(segment) <= allowed:
        extra = " or ('video', (t, h, w), second_per_grid)" if allowed == 3 else ""
        raise ValueError(
            f"{name} must be ('{kind}', (t, h, w)){extra} for {variant}, got {len(segment)} items"
            + (" (only qwen2.5-vl places video frames by their time)" if kind == "video" else "")
        )
    grid = _checks.integer_array(f"{name}'s grid", segment[1])
    if grid.shape != (3,):
        raise ValueError(f"{name}'s grid must be three integers (t, h, w), got shape {grid.shape}")
    t, h, w = (_checks.integer(f"{name}'s grid", int(size), minimum=1) for size in grid.tolist())
    if h % merge or w % merge:
        raise ValueError(
            f"{name}'s grid height and width must be multiples of spatial_merge_size ({merge}): the vision "
            f"encoder merges {merge} x {merge} patches into one token, got (t, h, w) = ({t}, {h}, {w})"
        )
    seconds = None
    if len(segment) == 3:
        seconds = _checks.real(f"{name}'s second_per_grid", segment[2], minimum=0.0, strict=True)
        if seconds > float(np.finfo(np.float32).max):
            raise ValueError(f"{name}'s second_per_grid must be finite in float32, got {seconds:g}")
    return kind, (t, h, w), seconds


def _interval(seconds: float | None, tokens_per_second: int) -> int | np.float32:
    """Qwen2.5-VL's temporal ids per grid step of a video: an integer, or a float32 product.

    transformers multiplies the step index by ``tokens_per_second * second_per_grid`` and
    truncates toward zero. Without a time it multiplies integers; with one (a float32 tensor, as
    its processor makes) both products are rounded to float32, so posenc rounds them alike.
    """
    if seconds is None:
        return tokens_per_second
    return np.float32(tokens_per_second) * np.float32(seconds)


def _check_last_step(t: int, seconds: float | None, tokens_per_second: int) -> None:
    """Refuse a video whose last temporal id (the largest: the products grow with the step) reaches 2**53."""
    interval = _interval(seconds, tokens_per_second)
    if isinstance(interval, int):
        last = float((t - 1) * interval)  # Python integers: no wrap-around
    else:
        with np.errstate(over="ignore"):  # an infinite product is refused just below
            last = float(np.float32(t - 1) * interval)
    if not last < _checks.EXACT_INTEGER_LIMIT:
        raise ValueError(
            "segments' video grid steps times tokens_per_second (times second_per_grid, when given) must stay "
            f"below 2**53 (a position id), got {last:g} for the last step"
        )


def _temporal_steps(t: int, seconds: float | None, tokens_per_second: int) -> NDArray[np.int64]:
    """Qwen2.5-VL's temporal id of each grid step of a video, before the start position is added."""
    interval = _interval(seconds, tokens_per_second)
    steps = np.arange(t, dtype=np.int64)
    if isinstance(interval, int):
        return steps * interval
    times: NDArray[np.float32] = steps.astype(np.float32) * interval
    return np.trunc(times).astype(np.int64)


def mrope_position_ids(
    segments: Sequence[Any],
    *,
    variant: str = "qwen2-vl",
    spatial_merge_size: int = 2,
    tokens_per_second: int = 2,
    resume: str = "after-largest-id",
) -> NDArray[np.int64]:
    """The temporal, height and width id of every token of a sequence: shape ``(3, n)``, int64.

    The sequence is a list of segments, in order:

    * ``("text", n)``: n text tokens; all three ids count up from the current position.
    * ``("image", (t, h, w))``: an image of ``t x h x w`` patches (``t`` is 1 for a still image,
      as the processors give it), ``h`` and ``w`` multiples of ``spatial_merge_size``: its
      ``t * (h / s) * (w / s)`` tokens in (t, row, column) order, s the merge size.
    * ``("video", (t, h, w))``: a video of ``t`` temporal grid steps; for "qwen2.5-vl" also
      ``("video", (t, h, w), second_per_grid)``, the seconds one temporal step spans.

    As the ``get_rope_index`` of Qwen2-VL, Qwen2.5-VL and Qwen3-VL does, a vision segment
    starting at position p gives its tokens height ``p + row`` and width ``p + column``;
    temporal ``p + step`` for "qwen2-vl" images and videos and for "qwen2.5-vl" images; for
    "qwen2.5-vl" videos ``p + trunc(step * tokens_per_second * second_per_grid)``, in float32 when
    ``second_per_grid`` is given, as transformers 5.24.0 computes
    ``step * (tokens_per_second * second_per_grid)`` from its processor's float32 tensor, and in
    integers when not, as its default of 1 does (Qwen's own training code and sglang multiply
    ``(step * second_per_grid) * tokens_per_second``, which can round differently only when
    ``tokens_per_second`` is not a power of two, and the released 2 is one; transformers 4.57.1
    rounds ``second_per_grid`` down to an integer first, which posenc does not follow); for "qwen3-vl"
    each temporal step of a video is placed on its own, like an image of one frame, at the
    position its predecessor leaves.

    ``resume`` names where the position goes after a vision segment (one of ``RESUME_RULES``):

    * "after-largest-id" (the default): one past the largest id so far, as Qwen's own fine-tuning
      code (``get_rope_index_25`` and ``get_rope_index_3`` in
      ``qwen-vl-finetune/qwenvl/data/rope2d.py`` of Qwen3-VL's repository), transformers 4.57.1
      and 5.2.0 and sglang's ``MRotaryEmbedding.get_rope_index`` compute it: the rule of the
      training code Qwen publishes.
    * "after-larger-side": the segment's start plus ``max(h, w) / s``, whatever its temporal
      ids, as transformers 5.3.0 and 5.24.0 compute it. Text after a video whose temporal ids
      outrun its height and width then resumes at or below temporal ids the video used.

    The two agree on text, on images of one frame and on Qwen3-VL's frames, and differ after a
    video of more steps than its larger merged side (or, for "qwen2.5-vl", whose stretched
    temporal ids outrun it).

    Qwen3-VL puts timestamp text between the frames of a video (``<t1> <vision_start> frame
    <vision_end> <t2> ...``); describe that as text segments between one-step videos
    ``("video", (1, h, w))``. transformers needs text between any two vision segments (it
    groups consecutive tokens of one kind, and its processors always put start and end tokens
    around each image); posenc places adjacent ones each by the rule above.

    >>> mrope_position_ids([("text", 2), ("image", (1, 4, 4)), ("text", 1)]).tolist()
    [[0, 1, 2, 2, 2, 2, 4], [0, 1, 2, 2, 3, 3, 4], [0, 1, 2, 3, 2, 3, 4]]
    >>> video = [("text", 1), ("video", (4, 2, 2)), ("text", 1)]
    >>> mrope_position_ids(video)[0].tolist(), mrope_position_ids(video, resume="after-larger-side")[0].tolist()
    ([0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 2])
    """
    variant = _checks.choice("variant", variant, VARIANTS)
    resume = _checks.choice("resume", resume, RESUME_RULES)
    merge = _checks.integer("spatial_merge_size", spatial_merge_size, minimum=1)
    tokens_per_second = _checks.integer("tokens_per_second", tokens_per_second, minimum=1)
    if isinstance(segments, (str, bytes)) or not isinstance(segments, Sequence):
        raise TypeError(f"segments must be a list of segments such as ('text', n), got {type(segments).__name__}")
    parsed = [_segment(index, segment, variant, merge) for index, segment in enumerate(segments)]

    # The size from the grids alone, before anything is allocated. No position can outgrow the
    # token count (each vision segment moves on by at most its token count), except Qwen2.5-VL's
    # stretched temporal ids, checked where they are made and in the result.
    tokens = 0
    for kind, sizes, seconds in parsed:
        tokens += sizes[0] if kind == "text" else sizes[0] * (sizes[1] // merge) * (sizes[2] // merge)
        if tokens > _checks.MAX_ELEMENTS:
            break
        if kind == "video" and variant == "qwen2.5-vl":
            _check_last_step(sizes[0], seconds, tokens_per_second)
    _checks.elements("segments (three ids per token)", 3, tokens)

    out = np.empty((3, tokens), dtype=np.int64)
    filled, position = 0, 0
    for kind, sizes, seconds in parsed:
        if kind == "text":
            out[:, filled : filled + sizes[0]] = np.arange(position, position + sizes[0])
            filled += sizes[0]
            position += sizes[0]
            continue
        t, h, w = sizes
        rows, columns = h // merge, w // merge
        stride = max(rows, columns)
        steps = np.arange(t, dtype=np.int64)
        if kind == "video" and variant == "qwen3-vl":
            # Each frame on its own: frame k starts where frame k - 1 left the position.
            starts = position + steps * stride
            temporal, spatial = starts, starts
            position += t * stride
        else:
            if kind == "video" and variant == "qwen2.5-vl":
                temporal = position + _temporal_steps(t, seconds, tokens_per_second)
            else:
                temporal = position + steps
            spatial = np.full(t, position, dtype=np.int64)
            if resume == "after-larger-side":
                position += stride
            else:
                # Both id sequences rise with the step, so the largest id is the last step's
                # temporal id or the start plus the larger side less one. Python integers: a run of
                # stretched videos cannot wrap around before the check below.
                position = max(int(temporal[-1]), position + stride - 1) + 1
                if position > _checks.EXACT_INTEGER_LIMIT:
                    raise ValueError(
                        "segments and tokens_per_second must keep every position id below 2**53 (exact in float64)"
                    )
        count = t * rows * columns
        block = out[:, filled : filled + count].reshape(3, t, rows, columns)
        block[0] = temporal[:, None, None]
        block[1] = spatial[:, None, None] + np.arange(rows)[None, :, None]
        block[2] = spatial[:, None, None] + np.arange(columns)[None, None, :]
        filled += count
    if out.size and int(out.max()) >= _checks.EXACT_INTEGER_LIMIT:
        raise ValueError("segments and tokens_per_second must keep every position id below 2**53 (exact in float64)")
    return out


__all__ = ["apply_mrope", "mrope_axes", "mrope_phases", "mrope_position_ids"]
