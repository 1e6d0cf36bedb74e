"""Text from the data (player, judge, benchmark, item, model names, configuration values) in the
outputs that interpret text: Markdown and the terminal. One place, used by every writer.

Every name is untrusted. The HTML page escapes it with :func:`html.escape`; here:

* :func:`visible` shows the characters a terminal or an editor would act on instead of showing
  them: C0/C1 control characters (ESC starts a terminal escape sequence, CR overwrites the line,
  a newline breaks a table row or an error line), DEL, the line and paragraph separators, and
  the bidirectional overrides that reorder the text around them (U+202A–202E, U+2066–2069). Each
  becomes its Python escape (``\\n``, ``\\x1b``, ``\\u202e``), so the name still reads as what it is.
* :func:`markdown_escape` makes a text read back exactly as itself in CommonMark and GitHub
  Markdown (tables included): no HTML, no link, no emphasis, no code span, no table cell boundary.
  A backslash goes before the characters that would make markup, and only those, so the twin also
  reads as plain text (``p < 1e-16``, ``[0.063, 0.130]``, ``A>B`` and ``gpt_4o`` carry no
  escapes): always ``\\ ` * | ~ $``; ``<`` before what opens an HTML tag or an autolink (a letter,
  ``/ ! ?``); ``]`` before what makes a link (``( [ :``); ``_`` where it can open or close emphasis
  (not inside a word); ``&`` where it would start an entity (``&amp;``); ``#`` and ``>`` at the
  start, and ``-`` or ``+`` at the start before a space (a list item).
* :func:`html_escape` is :func:`html.escape` (quotes too) of the visible text: the page shows a
  control character as its escape, as the other outputs do.
* :func:`terminal_text` is a :class:`rich.text.Text` of a name (never read as rich markup such as
  ``[red]``) and :func:`rich_escape` the same for a string that goes into a markup string.
"""

from __future__ import annotations

import re

# what a terminal or an editor acts on: C0 controls, DEL, C1 controls, line/paragraph separators,
# bidirectional embeddings, overrides and isolates
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _show(m: re.Match) -> str:
    ch = m.group(0)
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text) -> str:
    """``text`` with every control character shown as its escape (module docstring): one line,
    nothing a terminal executes."""
    return _INVISIBLE.sub(_show, str(text))


_MD_ALWAYS = re.compile(r"([\\`*|~$])")
_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")
_MD_LINK = re.compile(r"\](?=[(\[:])")
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_MD_START = re.compile(r"^(\s*)(#|>|[-+](?=\s|$))")


def markdown_escape(text) -> str:
    """``text`` as Markdown that renders as exactly this text, in a paragraph or in a table cell
    (module docstring); control characters are shown (:func:`visible`), so the result is one line."""
    s = visible(text)
    s = _MD_ALWAYS.sub(r"\\\1", s)  # the backslash first: the escapes below add backslashes
    s = _MD_TAG.sub(r"\\<", s)
    s = _MD_LINK.sub(r"\\]", s)
    s = _MD_UNDERSCORE.sub(r"\\_", s)
    s = _MD_ENTITY.sub(r"\\&", s)
    return _MD_START.sub(r"\1\\\2", s)


def html_escape(text) -> str:
    """``text`` as HTML text or attribute value: ``& < > " '`` escaped, control characters shown."""
    import html

    return html.escape(visible(text), quote=True)


def rich_escape(text) -> str:
    """``text`` for a rich markup string (``console.print(f"... {rich_escape(name)}")``): shown
    controls, and every ``[`` that could open a tag escaped."""
    from rich.markup import escape

    return escape(visible(text))


def terminal_text(text, style: str = "", keep_newlines: bool = False):
    """A :class:`rich.text.Text` of ``text`` (no markup is read from it; controls shown).
    ``keep_newlines``: ``text`` is lines the caller joined (each shown, the breaks kept)."""
    from rich.text import Text

    shown = "\n".join(visible(x) for x in str(text).split("\n")) if keep_newlines else visible(text)
    return Text(shown, style=style)
