"""The interactive explainer's demo data, written once, in ``explainer_demo.json`` beside this file.

Three readers share that file: the figures beside the explainer's steps (through this module),
the page's script (the site hook serves the same values as ``javascripts/explainer-demo.js``)
and Node, which ``require()``s the JSON when the tests check the page's arithmetic.

- ``EMBEDDINGS``: the toy two-dimensional embedding of each word of the first step;
- ``CONTENT``: the content of every query and key pair in the RoPE steps;
- ``WIDTHS``: the model width each step computes at.
"""

import json
import pathlib

DATA_FILE = pathlib.Path(__file__).with_name("explainer_demo.json")
_DATA = json.loads(DATA_FILE.read_text())

EMBEDDINGS: dict[str, tuple[float, float]] = {word: tuple(vector) for word, vector in _DATA["embeddings"].items()}
CONTENT: tuple[float, float] = tuple(_DATA["content"])
WIDTHS: dict[str, int] = dict(_DATA["widths"])
