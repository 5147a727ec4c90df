"""How opforge names appear in PyTorch: identifiers and torch.ops namespaces.

Pure string functions with no torch import, so that the op registry (_ops) and the torch adapter
(opforge.torch) both use them without importing each other.
"""

import keyword
import re


def ident(name):
    """A Python identifier for an op, input or attribute name (non-word characters become _)."""
    s = re.sub(r"\W", "_", name)
    if not s or s[0].isdigit():
        s = "_" + s
    if keyword.iskeyword(s) or s in ("self",):
        s += "_"
    return s


def torch_namespace(ns):
    """The torch.ops namespace of an opforge namespace ("" -> "opforge_global")."""
    return ident(ns) if ns else "opforge_global"
