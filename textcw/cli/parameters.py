"""What ``textcw list learners NAME`` shows: every parameter with its default, range and meaning.

The default comes from the learner itself (``get_params()`` of a fresh instance), the range from
its declared constraints (what ``fit`` validates), and the meaning from the numpydoc
``Parameters`` sections of the class and its bases, so the three can never disagree with the
code.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

# "name : type, default x" or "name, other : type" or a bare "a, b, c" line of names.
_ENTRY = re.compile(r"^(?P<names>[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::\s*(?P<kind>.*))?$")


@dataclass(frozen=True)
class Parameter:
    name: str
    default: str
    allowed: str
    meaning: str


def documented(cls) -> dict[str, tuple[str, str]]:
    """``name -> (type line, first sentence of the description)`` from every class in the MRO,
    the most derived class winning, unless it only refers to a base ("As for every ...")."""
    found: dict[str, tuple[str, str]] = {}
    for klass in cls.__mro__:
        if klass.__module__.startswith(("sklearn.", "builtins")):
            continue
        for name, value in _parse(inspect.cleandoc(klass.__doc__ or "")).items():
            if name not in found or not found[name][1] or found[name][1].startswith("As "):
                found[name] = value
    return found


def _parse(doc: str) -> dict[str, tuple[str, str]]:
    entries: dict[str, tuple[str, str]] = {}
    lines = doc.splitlines()
    in_section = False
    for i, line in enumerate(lines):
        if re.fullmatch(r"-{3,}", line.strip()):
            heading = lines[i - 1].strip().lower() if i else ""
            in_section = "parameter" in heading
            continue
        if not in_section or not line.strip() or line.startswith((" ", "\t")):
            continue
        match = _ENTRY.match(line.strip())
        if match is None:
            continue
        body = []
        for follow in lines[i + 1:]:
            if not follow.startswith((" ", "\t")) or not follow.strip():
                break
            body.append(follow.strip())
        text = " ".join(body).replace("``", "")
        sentence = re.split(r"(?<=\.)\s", text, maxsplit=1)[0] if text else ""
        for name in re.split(r"\s*,\s*", match["names"]):
            entries[name] = (match["kind"] or "", sentence)
    return entries


def parameters(factory) -> list[Parameter]:
    """The parameters of a registered learner (or any scikit-learn style class)."""
    cls = factory if inspect.isclass(factory) else type(factory())
    defaults = cls().get_params(deep=False)
    constraints = getattr(cls, "constraints", {})
    docs = documented(cls)
    rows = []
    for name, default in defaults.items():
        kind, meaning = docs.get(name, ("", ""))
        check = constraints.get(name)
        allowed = check.describe() if check is not None and hasattr(check, "describe") else kind
        rows.append(Parameter(name, repr(default), allowed, meaning))
    return rows
