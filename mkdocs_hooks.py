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
- Combined ``Parameters`` entries (``shuffle, random_state, fit_intercept`` over one
  description): griffe gives all their names the first one's default, so
  :class:`CombinedParameters` writes them as one entry per name, each taking its own default
  from the signature (tests/test_api_reference_defaults.py compares the rendered defaults of
  every learner and featurizer with ``get_params()``).
- Sphinx roles. The docstrings cross-reference with Sphinx roles (``:func:`name```,
  ``:class:`~pkg.Name```, ``:mod:`.sibling```, ``:meth:`text <target>```), which Markdown would
  show as raw text. :class:`SphinxRoles` rewrites each into an autorefs cross-reference to the
  object's canonical path, resolved as Sphinx does (the docstring's own scope first, then the
  absolute path, a leading dot searching from the current module, then a unique suffix); a target
  that is not documented on the site renders as code (autorefs' optional references), never as a
  broken link. A built reference page that still shows a raw role fails the build
  (:func:`raw_roles`).
- The command-line reference. ``docs/reference/cli.md`` holds a marker line
  (:data:`CLI_MARKER`) that :func:`cli_reference` replaces with every built-in command's usage,
  help and options, read from the commands themselves so that the page cannot drift from
  ``textcw COMMAND --help``.
- Known docstring defects (:data:`KNOWN_DOCSTRING_DEFECTS`): docstrings whose text after a
  ``Parameters`` or ``Attributes`` section is read as more entries. Their warnings are shown as information
  instead of failing the build, each matched by its module and the words griffe quotes; the list
  may only shrink (a listed defect that no longer occurs fails the build, so that its entry goes).
"""

from __future__ import annotations

import ast
import html
import logging
import re
from pathlib import Path

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
    if page.file.src_uri == CLI_PAGE:
        if CLI_MARKER not in markdown:
            logging.getLogger("mkdocs.plugins.textcw").warning(
                "%s lost the line %s where the command reference goes", CLI_PAGE, CLI_MARKER)
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return markdown


# The command-line reference is generated from the commands themselves (their help, usage,
# arguments and options), so that it cannot drift from what `textcw COMMAND --help` shows.
CLI_PAGE = "reference/cli.md"
CLI_MARKER = "<!-- textcw commands -->"


def _cell(text: str, code: bool = False) -> str:
    """``text`` as one Markdown table cell: one line; pipes escaped, except in a code span (where
    the tables extension does not split, and a backslash would show)."""
    text = " ".join(text.split())
    return f"`{text}`" if code else text.replace("|", "\\|")


def cli_reference() -> str:
    """Markdown for every built-in command of ``textcw`` (plugins' commands left out: the site
    documents textcw itself, whatever the building environment has installed), in the order
    ``textcw --help`` lists them: a heading, the usage, the help text and a table of the
    arguments and options with their help, defaults and ranges as the command prints them."""
    import inspect

    import typer

    from textcw.cli import HELP_OPTIONS, build_app, build_command
    from textcw.plugins import get_plugin_manager

    root = build_command(build_app(get_plugin_manager(entry_points=False)))
    out: list[str] = []

    def describe(command, path: list[str]) -> None:
        ctx = typer.Context(command, info_name=path[-1], help_option_names=HELP_OPTIONS)
        params = command.get_params(ctx)
        arguments = [p for p in params if p.param_type_name == "argument"]
        usage = [*path, "[OPTIONS]"]
        for argument in arguments:
            name = argument.name.upper() + ("..." if argument.nargs == -1 else "")
            usage.append(name if argument.required else f"[{name}]")
        if getattr(command, "commands", None):
            usage.append("COMMAND [ARGS]...")
        level = "#" * min(len(path) + 1, 4)
        # the root's own anchor would be "textcw", the identifier of the package itself
        anchor = " { #textcw-command }" if len(path) == 1 else ""
        out.extend([f"{level} {' '.join(path)}{anchor}", "", "```text", " ".join(usage), "```", ""])
        out.extend([inspect.cleandoc(command.help or "").replace("\b\n", ""), ""])
        rows = []
        for param in params:
            record = param.get_help_record(ctx)
            if record is None:
                continue
            name = param.name.upper() if param.param_type_name == "argument" else record[0]
            rows.append(f"| {_cell(name, code=True)} | {_cell(record[1])} |")
        if rows:
            out.extend(["| argument or option | meaning |", "| --- | --- |", *rows, ""])
        for name, sub in getattr(command, "commands", {}).items():
            if not getattr(sub, "hidden", False):
                describe(sub, [*path, name])

    describe(root, ["textcw"])
    return "\n".join(out)


def on_post_build(config) -> None:
    log = logging.getLogger("mkdocs.plugins.textcw")
    gone = [d for d in KNOWN_DOCSTRING_DEFECTS if d not in _FILTER.seen]
    if gone:
        log.warning("known docstring defects that no longer occur (remove them from mkdocs_hooks.py "
                    "KNOWN_DOCSTRING_DEFECTS): %s", gone)
    for page, count in raw_roles(Path(config["site_dir"])).items():
        log.warning("%s shows %d Sphinx role(s) as raw text (a role SphinxRoles does not read: "
                    "fix its spelling in the docstring, or teach mkdocs_hooks.ROLES the role)", page, count)


_RAW_ROLE = re.compile(r":(?:py:)?[a-z]+:(?:<code>|`)")


def raw_roles(site: Path) -> dict[str, int]:
    """``{page: number of raw roles}`` over the built API reference pages that show any."""
    found = {}
    for page in sorted((site / "reference").glob("*.html")):
        count = len(_RAW_ROLE.findall(page.read_text(encoding="utf-8")))
        if count:
            found[page.relative_to(site).as_posix()] = count
    return found


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


_COMBINED_PARAMETERS = re.compile(r"^(\*{0,2}\w+(?:, \*{0,2}\w+)+)(\s*:.*)?$")
_UNDERLINE = re.compile(r"-{3,}")
PARAMETER_SECTIONS = ("Parameters", "Other Parameters")


def split_parameters(docstring: str) -> str:
    """The docstring with each combined entry of its ``Parameters`` sections (``a, b : float``,
    or ``shuffle, random_state`` over ``As for ...``) written as one entry per name, the type
    and the description repeated.

    griffe gives every name of a combined entry one default: the first name's, from the
    signature (SCW1's ``a`` showed ``eta``'s 0.9). One entry per name takes each parameter's
    own default from the signature, as any entry that states no default does.
    """
    lines = docstring.split("\n")
    out: list[str] = []
    in_section, i = False, 0
    while i < len(lines):
        line = lines[i]
        if line.strip() and i + 1 < len(lines) and _UNDERLINE.fullmatch(lines[i + 1].strip()):
            in_section = line.strip() in PARAMETER_SECTIONS
            out += [line, lines[i + 1]]
            i += 2
            continue
        header = _COMBINED_PARAMETERS.match(line) if in_section else None
        if header is None:
            out.append(line)
            i += 1
            continue
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][0].isspace()):
            end += 1
        body = lines[i + 1:end]
        trailing = 0
        while body and not body[-1].strip():
            body.pop()
            trailing += 1
        for name in header.group(1).split(", "):
            out += [f"{name}{header.group(2) or ''}", *body]
        out += [""] * trailing
        i = end
    return "\n".join(out)


class CombinedParameters(griffe.Extension):
    """Reads combined ``Parameters`` entries as numpydoc does (see :func:`split_parameters`), so
    that each parameter shows its own default."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None and (obj.is_class or obj.is_function):
            obj.docstring.value = split_parameters(obj.docstring.value)


class CombinedAttributes(griffe.Extension):
    """Reads ``Attributes`` sections as numpydoc does (see :func:`repair_attributes`)."""

    def on_class_instance(self, *, cls: griffe.Class, **kwargs) -> None:
        if cls.docstring is None:
            return
        cls.docstring.value, prose = repair_attributes(cls.docstring.value)
        if prose is not None:
            _GRIFFE_LOG.warning("griffe: %s:%s: text after the Attributes section of %s is read as "
                                "attributes: %r", cls.relative_filepath, cls.docstring.lineno, cls.path, prose)


# Roles of the Python domain (``:py:func:`` as well); ``~`` shows the last component only, ``!``
# suppresses the link, ``text <target>`` gives an explicit title. A double-backtick code span is
# matched first so that a role written inside one stays literal.
ROLES = ("mod", "func", "class", "meth", "attr", "data", "exc", "obj", "const", "type")
_ROLE = re.compile(r"(?P<literal>``.+?``)|:(?:py:)?(?P<role>" + "|".join(ROLES) + r"):`(?P<body>[^`\n]+)`")
_EXPLICIT = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.DOTALL)
_FENCE = re.compile(r"^([ \t]*)(```|~~~).*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)


def _lookup(collection, path: str) -> str | None:
    """The canonical path of the object at ``path`` in the loaded modules, if there is one.

    A name a package imports on first use (PEP 562: its ``_PUBLIC`` table maps the name to the
    defining module, as ``textcw/__init__.py`` does) is the object of that module.
    """
    try:
        return collection[path].canonical_path
    except Exception:  # KeyError, an alias to an unloaded package, a malformed path: no object
        pass
    package, _, name = path.rpartition(".")
    try:
        table = ast.literal_eval(str(collection[f"{package}._PUBLIC"].value))
        return collection[f"{table[name]}.{name}"].canonical_path
    except Exception:  # no such table, not a literal, not in it: no object
        return None


def resolve_role_target(obj: griffe.Object, target: str, suffixes: dict[str, str] | None = None) -> str:
    """The identifier a role's ``target`` names from the docstring of ``obj``.

    As Sphinx's Python domain: a plain name is looked up in the scope of the object (its
    members, its module's imports, its parents), then as an absolute path; ``.name`` is looked
    up from the current module and each enclosing package. Either is then taken as the suffix
    of a loaded path, when exactly one path ends with it. A target found nowhere is returned as
    written (its reference then renders as code). ``suffixes`` is :func:`suffix_index` of the
    loaded modules, when the caller resolves many targets.
    """
    collection = obj.modules_collection
    if suffixes is None:
        suffixes = suffix_index(collection)
    target = target.removesuffix("()")
    if target.startswith("."):
        rest = target.lstrip(".")
        scope = obj if obj.is_module else obj.module
        while scope is not None:
            if found := _lookup(collection, f"{scope.path}.{rest}"):
                return found
            scope = scope.parent
        return suffixes.get(rest, rest)
    first, _, tail = target.partition(".")
    try:
        scoped = obj.resolve(first)
    except Exception:  # griffe.NameResolutionError, or an alias that cannot be followed
        scoped = None
    for candidate in ([f"{scoped}.{tail}" if tail else scoped] if scoped else []) + [target]:
        if found := _lookup(collection, candidate):
            return found
    if scoped:
        return scoped + (f".{tail}" if tail else "")
    # A name the docstring's scope does not import (a docstring may name a function of a sibling
    # module it never imports): the one loaded object whose path ends with it, if only one does.
    return suffixes.get(target, target)


def suffix_index(collection) -> dict[str, str]:
    """Every dotted suffix of every loaded object's path -> that path, when it names one object."""
    seen: dict[str, set[str]] = {}

    def walk(node: griffe.Object) -> None:
        parts = node.path.split(".")
        for start in range(1, len(parts)):
            seen.setdefault(".".join(parts[start:]), set()).add(node.path)
        for member in node.members.values():
            if not member.is_alias:
                walk(member)

    for module in collection.members.values():
        walk(module)
    return {suffix: paths.pop() for suffix, paths in seen.items() if len(paths) == 1}


def convert_roles(text: str, resolve) -> str:
    """``text`` with every Sphinx role made an optional autorefs cross-reference.

    ``resolve(target)`` gives the identifier of a target as written. Roles inside code spans or
    fenced blocks stay as written.
    """
    def role(match: re.Match) -> str:
        if match["literal"]:
            return match["literal"]
        body = match["body"].strip()
        explicit = _EXPLICIT.match(body)
        title, target = (explicit["title"], explicit["target"].strip()) if explicit else (None, body)
        link = not target.startswith("!")
        target = target.lstrip("!")
        short = target.startswith("~")
        target = target.lstrip("~")
        if title is None:
            title = target.lstrip(".").rsplit(".", 1)[-1] if short else target.lstrip(".")
        code = f"<code>{html.escape(title, quote=False)}</code>"
        if not link:
            return code
        identifier = html.escape(resolve(target), quote=True)
        return f'<autoref identifier="{identifier}" optional>{code}</autoref>'

    pieces, last = [], 0
    for fence in _FENCE.finditer(text):
        pieces += [_ROLE.sub(role, text[last:fence.start()]), fence.group(0)]
        last = fence.end()
    pieces.append(_ROLE.sub(role, text[last:]))
    return "".join(pieces)


class SphinxRoles(griffe.Extension):
    """Makes the Sphinx roles of every docstring in a loaded package autorefs cross-references
    (see :func:`convert_roles`), once the whole package is loaded so that any module resolves."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        suffixes = suffix_index(pkg.modules_collection)

        def walk(node: griffe.Object) -> None:
            if node.docstring is not None:
                node.docstring.value = convert_roles(
                    node.docstring.value, lambda target: resolve_role_target(node, target, suffixes))
            for member in node.members.values():
                if not member.is_alias:
                    walk(member)

        walk(pkg)
