r"""Griffe extension: render the reStructuredText bits of twinrank's numpy-style docstrings.

mkdocstrings renders docstring text as Markdown. twinrank's docstrings also use a
few reStructuredText constructs; this extension rewrites them before rendering.
First, a class or function whose docstring is assigned at run time (a fast class's
``__doc__ = "Numba-parallel twin of ..." + reference.__doc__``) gets that docstring,
read from the imported module, since griffe reads source without running it. Then:

- ``:math:`x``` becomes ``$x$`` and a ``.. math::`` directive becomes a ``$$`` block
  (both rendered by ``pymdownx.arithmatex`` and MathJax);
- ``:func:`name```, ``:class:``, ``:mod:``, ``:meth:``, ``:attr:``, ``:data:``,
  ``:obj:`` and ``:exc:`` become links to the named object when it exists in the
  twinrank package (relative names are looked up from the object's module, then
  from its twin), and inline code otherwise; ``~`` shows only the last component;
- a code span holding the full path of a documented object (e.g. the opening
  "Numba-parallel twin of `twinrank.reference.trees.tree.grow_tree`" of a fast docstring)
  becomes a link;
- a reStructuredText simple table (rows between ``=====  ====`` rules) becomes a
  Markdown table;
- a paragraph ending in ``::`` (reStructuredText's literal-block marker) ends in
  ``:``; the indented block after it is a code block in Markdown too;
- numpy-style parameter entries: one naming several parameters (``a, b : text``)
  becomes one entry per name, so that each shows its own default (griffe would give
  all of them the first one's); and an entry whose text after the colon is a
  description rather than a type (``sigma : the RankNet sigmoid's steepness``) gets
  that text as its description, so it is rendered as prose, not as a type.
"""
from __future__ import annotations

import importlib
import inspect
import re

import griffe

ROLE = re.compile(r":(func|class|mod|meth|attr|data|obj|exc):`([^`]+)`")
MATH_ROLE = re.compile(r":math:`([^`]+)`")
TWINRANK_CODE = re.compile(r"(?<![`\[])`(twinrank(?:\.\w+)+)`(?![`\]])")
MATH_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. math::[ \t]*(?P<first>.*)$")
LITERAL_MARKER = re.compile(r"(?<=\S)::$")
TABLE_RULE = re.compile(r"^[ \t]*=+(?:[ \t]+=+)+[ \t]*$")
PARAMETER_ENTRY = re.compile(r"^(?P<indent>[ \t]*)(?P<names>\*{0,2}\w+(?:[ \t]*,[ \t]*\w+)*)[ \t]*:(?P<rest>.*)$")
# "int", "float or None", "ndarray of float64", "TreeParams", "{'exp2', 'linear'}", "list of Tree"
_TYPE_TOKEN = r"(\{[^}]*\}|[A-Za-z_][\w.]*(\[[^\]]*\])?)"
TYPE_EXPRESSION = re.compile(rf"^{_TYPE_TOKEN}([ \t]*(,|\bor\b|\bof\b|\|)[ \t]*{_TYPE_TOKEN})*$")
# the start of a longer type line followed by a description: "array of float, shape (n,)"
TYPE_START = re.compile(r"^(\{|[A-Z]\w*([,(]|\s+(or|of)\b|$)|(array|ndarray|int|float|str|bool|list|dict|"
                        r"tuple|callable|sequence|iterable|object)\b)")
SECTION_RULE = re.compile(r"^[ \t]*-{3,}[ \t]*$")


class RstDocstrings(griffe.Extension):
    """Rewrite every docstring of a loaded package (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs) -> None:
        for obj in _walk(pkg):
            if obj.docstring is None and (obj.is_class or obj.is_function):
                _set_runtime_docstring(obj, loader)
            if obj.docstring is not None:
                obj.docstring.value = rewrite(obj.docstring.value, lambda t, o=obj: _resolve(o, t))


def rewrite(text: str, resolve) -> str:
    """The Markdown form of a docstring; ``resolve(target)`` returns a full path or None."""
    text = _return_entries(_parameter_entries(_simple_tables(_math_directives(text))))
    text = MATH_ROLE.sub(lambda m: f"${m[1].strip()}$", text)
    text = ROLE.sub(lambda m: _role(m[2], resolve), text)
    text = TWINRANK_CODE.sub(lambda m: _code_link(m[1], resolve), text)
    return "\n".join(LITERAL_MARKER.sub(":", line) for line in text.split("\n"))


def _role(target: str, resolve) -> str:
    short = target.startswith("~")
    target = target.lstrip("~.").removesuffix("()")
    shown = target.rsplit(".", 1)[-1] if short else target
    path = resolve(target)
    return f"[`{shown}`][{path}]" if path else f"`{shown}`"


def _code_link(path: str, resolve) -> str:
    """A code span naming a documented twinrank object, as a link to it."""
    found = resolve(path)
    return f"[`{path}`][{found}]" if found else f"`{path}`"


def _math_directives(text: str) -> str:
    """``.. math:: x`` (with any indented continuation lines) -> a ``$$ x $$`` block."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        m = MATH_DIRECTIVE.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, body = m["indent"], [m["first"]] if m["first"].strip() else []
        i += 1
        while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > len(indent)):
            body.append(lines[i].strip())
            i += 1
        while body and not body[-1]:
            body.pop()
        out += [f"{indent}$$", *(f"{indent}{b}" for b in body if b), f"{indent}$$", ""]
    return "\n".join(out)


def _simple_tables(text: str) -> str:
    """reStructuredText simple tables -> Markdown tables (columns cut at the rule's ``=`` runs)."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        if not TABLE_RULE.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        rule = lines[i]
        starts = [m.start() for m in re.finditer(r"=+", rule)]
        groups, i = [[]], i + 1
        while i < len(lines) and (lines[i].strip() or len(groups) == 1):
            if TABLE_RULE.match(lines[i]):
                groups.append([])
            else:
                groups[-1].append(lines[i])
            i += 1
        groups = [g for g in groups if g]
        header, body = (groups[0], sum(groups[1:], [])) if len(groups) > 1 else (groups[0][:1], groups[0][1:])
        indent = rule[:len(rule) - len(rule.lstrip())]

        def row_text(row: str) -> str:
            cells = [row[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
            return f"{indent}| {' | '.join(_escape_cell(c) for c in cells)} |"

        out += [row_text(header[0]), f"{indent}|{'---|' * len(starts)}"]
        out += [row_text(row) for row in body] + [""]
    return "\n".join(out)


def _parameter_entries(text: str) -> str:
    """Numpy ``Parameters`` entries as griffe reads them best (see the module docstring).

    ``a, b : text`` becomes one entry per name; ``name : text`` whose text is not a
    type (a type expression, or the start of one when indented description lines
    follow) becomes ``name`` with ``text`` and its indented lines as the description,
    the type then coming from the signature's annotation.
    """
    lines, out, i, section = text.split("\n"), [], 0, None
    while i < len(lines):
        if i + 1 < len(lines) and SECTION_RULE.match(lines[i + 1]) and lines[i].strip():
            section = lines[i].strip()
        m = PARAMETER_ENTRY.match(lines[i])
        if section not in ("Parameters", "Other Parameters") or m is None:
            out.append(lines[i])
            i += 1
            continue
        indent, rest = m["indent"], m["rest"].strip()
        body, i = [], i + 1
        while i < len(lines) and (_indent(lines[i]) > len(indent) or not lines[i].strip()):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
            i -= 1
        if rest and not (TYPE_EXPRESSION.match(rest) or body and TYPE_START.match(rest)):
            body = [f"{indent}    {rest}", *body]
            rest = ""
        for name in re.split(r"[ \t]*,[ \t]*", m["names"]):
            out += [f"{indent}{name} : {rest}" if rest else f"{indent}{name}", *body]
    return "\n".join(out)


def _return_entries(text: str) -> str:
    """Numpy ``Returns`` entries: prose gets an empty ``:`` entry line, so it is a description.

    ``name : type`` and ``type`` entries are kept; ``name : prose`` becomes ``name :`` with
    the prose as description; any other line starts a described entry without name or
    type (griffe then takes the type from the return annotation) that runs to the next
    blank line.
    """
    lines, out, i, section = text.split("\n"), [], 0, None
    while i < len(lines):
        if i + 1 < len(lines) and SECTION_RULE.match(lines[i + 1]) and lines[i].strip():
            section = lines[i].strip()
            out += lines[i:i + 2]
            i += 2
            continue
        line = lines[i]
        if section not in ("Returns", "Yields") or not line.strip():
            out.append(line)
            i += 1
            continue
        indent = line[:_indent(line)]
        m = PARAMETER_ENTRY.match(line)
        if TYPE_EXPRESSION.match(line.strip()) or m and TYPE_EXPRESSION.match(m["rest"].strip()):
            out.append(line)
            i += 1
            while i < len(lines) and lines[i].strip() and _indent(lines[i]) > len(indent):
                out.append(lines[i])
                i += 1
            continue
        single = m is not None and "," not in m["names"]
        out += [f"{indent}{m['names']} :" if single else f"{indent}:",
                f"{indent}    {m['rest'].strip() if single else line.strip()}"]
        i += 1
        while i < len(lines) and lines[i].strip() and (
                _indent(lines[i]) > len(indent) or not single and not _is_entry(lines[i])):
            out.append(f"{indent}    {lines[i].strip()}")
            i += 1
    return "\n".join(out)


def _is_entry(line: str) -> bool:
    """Whether a Returns line starts a new ``name : ...`` entry."""
    m = PARAMETER_ENTRY.match(line)
    return m is not None and "," not in m["names"]


def _escape_cell(cell: str) -> str:
    """A table cell's text with ``|`` and attribute-list braces (``{1,2}``) escaped."""
    for char in "|{}":
        cell = cell.replace(char, "\\" + char)
    return cell


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path of ``target`` as seen from ``obj``, if it names a twinrank object."""
    module = obj if obj.is_module else obj.module
    twin = module.path.split(".")[:2]  # ["twinrank", "reference"] or ["twinrank", "fast"]
    candidates = [f"{module.path}.{target}", f"{'.'.join(twin)}.{target}", target]
    if obj.is_class or obj.parent is not None and obj.parent.is_class:
        cls = obj if obj.is_class else obj.parent
        candidates.insert(0, f"{cls.path}.{target}")
    root = obj.package
    for path in candidates:
        if path.startswith(root.path + "."):
            found = _find(root, path[len(root.path) + 1:])
            if found is not None:
                return found
    return None


def _find(root: griffe.Module, relative: str) -> str | None:
    """The canonical (documented) path of ``root[relative]``, or None if it is not documented."""
    try:
        obj = root[relative]
        # an object written in a private module is documented where a public module re-exports it
        paths = (obj.target_path, obj.path) if obj.is_alias else (obj.path,)
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return None
    found = next((path for path in paths if _documented(path)), None)
    return found if found is not None else _public_alias(root, paths[0])


def _public_alias(root: griffe.Module, path: str) -> str | None:
    """Where a public module of the same twin re-exports the object written at ``path``."""
    parts = path.split(".")  # twinrank.<twin>.<module>.<name>[.<member>...]
    twin = root.members.get(parts[1]) if len(parts) >= 4 and parts[0] == root.path else None
    for module in (twin.modules.values() if twin is not None else ()):
        member = module.members.get(parts[3])
        if member is not None and member.is_alias and member.target_path == ".".join(parts[:4]):
            public = ".".join([member.path, *parts[4:]])
            if _documented(public):
                return public
    return None


def _documented(path: str) -> bool:
    """Whether API pages render ``path``: twinrank.<twin>.<module> and its public members."""
    parts = path.split(".")
    return parts[0] == "twinrank" and len(parts) >= 3 and not any(p.startswith("_") for p in parts)


def _set_runtime_docstring(obj: griffe.Object, loader: griffe.GriffeLoader) -> None:
    """The docstring the object has once its module is imported, if it sets one itself."""
    try:
        value = importlib.import_module(obj.module.path)
        for name in obj.path[len(obj.module.path) + 1:].split("."):
            value = getattr(value, name)
    except (ImportError, AttributeError):
        return
    own = vars(value).get("__doc__") if inspect.isclass(value) else getattr(value, "__doc__", None)
    if isinstance(own, str) and own.strip():
        # dedent after the first line, which may itself be a docstring's first line
        # (``"Numba-parallel twin of ...\n" + reference.__doc__``)
        first, _, rest = own.strip().partition("\n")
        obj.docstring = griffe.Docstring(f"{first}\n\n{inspect.cleandoc(rest)}".strip(), parent=obj,
                                         parser=loader.docstring_parser,
                                         parser_options=loader.docstring_options)


def _walk(obj: griffe.Object):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(member)
