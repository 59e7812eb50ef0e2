"""``{{ peers }}``: what ``make test-peers`` compares, read from ``tests/peers/test_*.py``.

One item per file (its path and its module docstring's summary) holding one item per test (its
docstring's summary, followed by the values of its ``pytest.mark.parametrize`` decorators). A
test without a docstring stops the build. The files are parsed, never imported: they import
torch, which only ``.venv-peers`` has, and the site is built without it.
"""

from __future__ import annotations

import ast
import re

from mkdocs.exceptions import PluginError

from . import paths

PEERS_MARKER = re.compile(r"(?<!\\)\{\{\s*peers\s*\}\}")
# The peer tests as a repository path, as a page's sources name them (page_meta).
PEER_TESTS_SOURCE = paths.PEER_TESTS.relative_to(paths.ROOT).as_posix()
# A parameter list longer than this is counted rather than shown (a list of whole configurations).
PARAMETERS_SHOWN = 100


def uses_peer_tests(markdown: str) -> bool:
    """Whether a page's Markdown lists the peer tests, so that they are among its sources."""
    return PEERS_MARKER.search(markdown) is not None


def summary(docstring: str) -> str:
    """A docstring's first paragraph on one line, its ``code`` in Markdown's single backticks."""
    return " ".join(docstring.split("\n\n", 1)[0].split()).replace("``", "`")


def parameters(test: ast.FunctionDef, constants: dict[str, ast.expr]) -> str:
    """ " Parametrised over ..." from the test's ``parametrize`` decorators, read from the source."""
    parts = []
    for decorator in test.decorator_list:
        if not (isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize"):
            continue
        given = dict(zip(("argnames", "argvalues"), decorator.args)) | {k.arg: k.value for k in decorator.keywords}
        names, values_node = ast.literal_eval(given["argnames"]), given["argvalues"]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        label = names[0] if len(names) == 1 else f"({', '.join(names)})"
        # A list named by a module-level constant (CONFIGS) is read where it is assigned.
        values_node = constants.get(getattr(values_node, "id", None), values_node)
        try:
            shown = repr(list(ast.literal_eval(values_node)))
        except (ValueError, TypeError):  # pytest.param(...) and the like: counted, not shown
            shown = ""
        if shown and len(shown) <= PARAMETERS_SHOWN:
            parts.append(f"`{label}` in `{shown}`")
        elif isinstance(values_node, (ast.List, ast.Tuple)):
            parts.append(f"{len(values_node.elts)} values of `{label}`")
        else:
            parts.append(f"values of `{label}`")
    return f" Parametrised over {' × '.join(parts)}." if parts else ""


def peer_test_list() -> str:
    """The ``{{ peers }}`` list, as Markdown."""
    groups = []
    for path in sorted(paths.PEER_TESTS.glob("test_*.py")):
        name = path.relative_to(paths.ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=name)
        constants = {
            target.id: node.value
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        # What pytest collects: test functions, and the test methods of Test classes.
        tests = [
            node
            for parent in [tree, *(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.startswith("Test"))]
            for node in parent.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
        ]
        items = []
        for test in tests:
            docstring = ast.get_docstring(test)
            if not docstring:
                raise PluginError(
                    f"{name}: {test.name} has no docstring; its first line says on the Conventions "
                    "page what the test compares with what"
                )
            items.append(f"    - {summary(docstring)}{parameters(test, constants)}")
        lead = summary(ast.get_docstring(tree) or "")
        if not lead:
            raise PluginError(f"{name} has no module docstring; its first line leads the file's tests on the page")
        groups.append(f"- `{name}`: {lead}\n" + "\n".join(items))
    if not groups:
        raise PluginError(f"no peer tests in {paths.PEER_TESTS.relative_to(paths.ROOT).as_posix()}/")
    return "\n".join(groups) + "\n"
