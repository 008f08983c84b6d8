"""Hooks of the documentation site (mkdocs.yml ``hooks:`` and the mkdocstrings ``extensions:``).

Each adjustment here is narrow and listed: the build stays strict everywhere else.

- Source-file links. The pages are also read on the repository host, where a link to a source
  file works; on the site it would be a broken link, which strict mode refuses. Such a link is
  mapped to the API reference of the same module, page by page (:data:`SOURCE_LINKS`).
- ``Attributes`` sections. numpydoc lets entries that share a type and a description be
  written together (``grid, quick_grid : dict, optional``); griffe reads that only in a
  ``Parameters`` section, so :class:`CombinedAttributes` splits them first. Prose after the
  entries would be read as more attributes and stop the build with a griffe error: it is moved
  above the section and reported as a warning.
- Known docstring defects (:data:`KNOWN_DOCSTRING_DEFECTS`): docstrings whose text after a
  ``Parameters`` or ``Attributes`` section is read as more entries. Their warnings are shown as information
  instead of failing the build, each matched by its module and the words griffe quotes; the list
  may only shrink (a listed defect that no longer occurs fails the build, so that its entry goes).
"""

from __future__ import annotations

import logging
import re

import griffe

# page (relative to docs/) -> {link as written: link on the site}
SOURCE_LINKS = {
    "plugins.md": {"../textcw/hookspecs.py": "reference/plugins.md#textcw.hookspecs"},
}

# (module file, text in griffe's warning): prose placed after a Parameters section, which numpy
# style reads as parameters; the fix is to move the prose above the section or under ``Notes``.
KNOWN_DOCSTRING_DEFECTS: list[tuple[str, str]] = []


class _KnownDefects(logging.Filter):
    """Lowers the warnings of :data:`KNOWN_DOCSTRING_DEFECTS` to information; counts matches."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.WARNING:
            message = record.getMessage()
            for defect in KNOWN_DOCSTRING_DEFECTS:
                module, text = defect
                if module in message and text in message:
                    self.seen.add(defect)
                    record.levelno, record.levelname = logging.INFO, "INFO"
                    record.msg, record.args = f"known docstring defect: {message}", ()
                    break
        return True


_FILTER = _KnownDefects()
_GRIFFE_LOG = logging.getLogger("mkdocs.plugins.griffe")


def on_startup(command: str, dirty: bool) -> None:
    if _FILTER not in _GRIFFE_LOG.filters:
        _GRIFFE_LOG.addFilter(_FILTER)


def on_page_markdown(markdown: str, page, config, files) -> str:
    for written, on_site in SOURCE_LINKS.get(page.file.src_uri, {}).items():
        markdown = markdown.replace(f"]({written})", f"]({on_site})")
    return markdown


def on_post_build(config) -> None:
    gone = [d for d in KNOWN_DOCSTRING_DEFECTS if d not in _FILTER.seen]
    if gone:
        logging.getLogger("mkdocs.plugins.textcw").warning(
            "known docstring defects that no longer occur (remove them from mkdocs_hooks.py "
            "KNOWN_DOCSTRING_DEFECTS): %s", gone)


_SECTION = re.compile(r"^Attributes\n-+\n", re.MULTILINE)
_NEXT_SECTION = re.compile(r"^\S.*\n-+$", re.MULTILINE)
_HEADER = re.compile(r"^(\w+(?:\s*,\s*\w+)*)(\s*:.*)?$")


def repair_attributes(docstring: str) -> tuple[str, str | None]:
    """The docstring with its ``Attributes`` section in a form griffe reads, and the first line
    of any prose found after the section's entries (``None`` when there is none).

    Entries ``a, b : T`` become one entry per name (numpydoc allows combining them). Prose
    after the entries, which griffe would read as more attributes (and fail to render), moves
    above the section; the caller reports it, since the docstring itself should be fixed.
    """
    match = _SECTION.search(docstring)
    if match is None:
        return docstring, None
    rest = docstring[match.end():]
    following = _NEXT_SECTION.search(rest)
    section, after = (rest[:following.start()], rest[following.start():]) if following else (rest, "")
    entries, prose = [], []
    for line in section.split("\n"):
        if prose or (line and not line[0].isspace() and not _HEADER.match(line)):
            prose.append(line)
            continue
        header = _HEADER.match(line) if line and not line[0].isspace() else None
        if header and "," in header.group(1):
            entries.append((re.split(r"\s*,\s*", header.group(1)), header.group(2) or "", []))
        elif header:
            entries.append(([header.group(1)], header.group(2) or "", []))
        elif entries:
            entries[-1][2].append(line)
        else:
            entries.append(([], "", [line]))
    body = []
    for names, kind, description in entries:
        while description and not description[-1].strip() and names:
            description.pop()
        for name in names:
            body.extend([f"{name}{kind}", *description])
        if not names:
            body.extend(description)
    text = "\n".join(prose).strip()
    intro = docstring[:match.start()] + (text + "\n\n" if text else "")
    return intro + docstring[match.start():match.end()] + "\n".join(body).rstrip() + "\n\n" + after, \
        (text.splitlines()[0] if text else None)


class CombinedAttributes(griffe.Extension):
    """Reads ``Attributes`` sections as numpydoc does (see :func:`repair_attributes`)."""

    def on_class_instance(self, *, cls: griffe.Class, **kwargs) -> None:
        if cls.docstring is None:
            return
        cls.docstring.value, prose = repair_attributes(cls.docstring.value)
        if prose is not None:
            _GRIFFE_LOG.warning("griffe: %s:%s: text after the Attributes section of %s is read as "
                                "attributes: %r", cls.relative_filepath, cls.docstring.lineno, cls.path, prose)
