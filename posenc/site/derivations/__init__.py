"""Every identity the site displays, proved with SymPy and cross-checked against posenc.

Each entry is a proof function decorated with :func:`posenc.site.registry.derivation` (its
stable ID, displayed statement and reader-facing steps) followed by its numeric check
decorated with :func:`posenc.site.registry.numeric_check`. IDs never change: pages and readers'
citations link to ``/derivations/<id>/``.

The proofs live in one module per topic; an entry's topic is its module's name, and the
Derivations index lists the topics in the order of :data:`TOPICS`, each entry in its module's
order. ``common`` holds what every topic shares (the induction over pairs among it).
"""

from collections.abc import Mapping
from importlib import import_module

from ..registry import REGISTRY, Derivation

#: Each topic's module and its heading on the Derivations index, in the index's order.
TOPICS = {
    "sinusoidal": "Sinusoidal encoding",
    "rope": "RoPE",
    "alibi": "ALiBi",
    "relative": "Relative position",
    "long_context": "Long context",
    # Last: a grid's identities build on the 1-D ones of every topic above (the kernel, RoPE's
    # relative score, position interpolation), and appending keeps each earlier entry's neighbours.
    "grids": "Grids and video",
    # Last too: today's models combine the pieces above (partial RoPE, NoPE layers, RoPE's relative
    # score), and appending keeps every earlier entry's Previous and Next links.
    "architectures": "Today's models",
    # Last: rotations from Lie groups generalise RoPE's relative score (rope-relative) and its
    # axial 2-D form, and appending keeps every earlier entry's Previous and Next links.
    "lie_groups": "Rotations from Lie groups",
    # Then position computed from the data, measured against what the topics above define
    # (ALiBi's bias, NoPE's plain dot product); appending keeps every earlier link.
    "data_dependent": "Position from the data",
}

# Importing a topic's module registers its entries.
for _topic in TOPICS:
    import_module(f"{__name__}.{_topic}")


def ordered(entries: Mapping[str, Derivation] = REGISTRY) -> list[Derivation]:
    """Every entry (of the registry, or of ``entries``) by topic in the order of TOPICS, then in its
    module's order: the order of the index, of the pages' Previous and Next links and of the PDF,
    whatever the import order. An entry of no known topic comes last."""
    rank = {topic: at for at, topic in enumerate(TOPICS)}
    return sorted(entries.values(), key=lambda entry: rank.get(entry.topic, len(rank)))  # stable: module order kept
