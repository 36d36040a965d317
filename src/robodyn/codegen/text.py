"""Text from models in generated code: the one C comment escaper and the checked identifiers.

Generated code is a second language with its own comment terminators, preprocessor and keywords. Text a model
chose — its name, a URDF link's name, a file's name — reaches generated code in only two forms
(docs/dev/security.md, "Text from models in generated code"):

- inside a C comment, through :func:`c_comment`, which writes it as printable ASCII in which no comment can end or
  begin, no line can be spliced and no trigraph can form (every other character written as a visible escape);
- as a name, only when it is an identifier checked at the point of emission (:func:`python_identifier`,
  :func:`c_identifier`); a model's own names become C names by robodyn.export.c_names, never as given.
"""

from __future__ import annotations

import keyword
import re
from typing import Final

__all__ = ["c_comment", "c_comment_text", "c_identifier", "python_identifier", "uncomment"]

#: Pairs of characters written with the second escaped: comment delimiters (``/*``, ``*/``, ``//``) and the ``??``
#: that starts a trigraph (``??/`` is a backslash in ISO C, and one at the end of a line splices the next).
_PAIRS: Final = frozenset({("/", "*"), ("*", "/"), ("/", "/"), ("?", "?")})
_NAMED: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_C_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPE: Final = re.compile(r"\\(u\{[0-9a-f]+\}|x[0-9a-f]{2}|.)", re.S)


def c_comment_text(text: str) -> str:
    """``text`` as it may stand inside a C comment: printable ASCII in which ``*/``, ``/*``, ``//`` and ``??`` do not
    occur (the second character of each such pair is written ``\\*``, ``\\/``, ``\\?``), a backslash is written
    ``\\\\``, a newline, carriage return and tab ``\\n``, ``\\r``, ``\\t``, any other control character ``\\xHH`` and a
    character beyond ASCII ``\\u{hex}``. :func:`uncomment` reads it back."""
    pieces = []
    previous = ""
    for char in str(text):
        code = ord(char)
        if char in _NAMED:
            pieces.append(_NAMED[char])
        elif (previous, char) in _PAIRS:
            pieces.append("\\" + char)
        elif code < 0x20 or code == 0x7F:
            pieces.append(f"\\x{code:02x}")
        elif code > 0x7E:
            pieces.append(f"\\u{{{code:x}}}")
        else:
            pieces.append(char)
        previous = char
    return "".join(pieces)


def c_comment(text: str) -> str:
    """``/* text */`` on one line, ``text`` escaped by :func:`c_comment_text`."""
    return f"/* {c_comment_text(text)} */"


def uncomment(escaped: str) -> str:
    """The text :func:`c_comment_text` escaped (its inverse: what a reader of the generated file sees)."""
    inverse = {value[1]: key for key, value in _NAMED.items()}

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u{"):
            return chr(int(code[2:-1], 16))
        if code.startswith("x") and len(code) == 3:
            return chr(int(code[1:], 16))
        return inverse.get(code, code)

    return _ESCAPE.sub(one, escaped)


def python_identifier(name: str) -> str:
    """``name`` when it is an ASCII Python identifier and not a keyword (a name generated code may define), else
    ValueError: what robodyn emits as a name is checked where it is emitted, never trusted from its caller."""
    if not (isinstance(name, str) and name.isascii() and name.isidentifier() and not keyword.iskeyword(name)):
        raise ValueError(f"generated code: {name!r} is not a Python identifier")
    return name


def c_identifier(name: str) -> str:
    """``name`` when it is an ASCII C identifier (letters, digits, ``_``, not first a digit), else ValueError; which
    identifiers are also safe among C's and C++'s keywords and macros is robodyn.export.c_names's concern."""
    if not (isinstance(name, str) and _C_IDENTIFIER.match(name)):
        raise ValueError(f"generated C: {name!r} is not a C identifier")
    return name
