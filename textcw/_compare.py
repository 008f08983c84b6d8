"""Whether two values are the same setting: equal and of the same type (``True`` is not ``1``)."""

from __future__ import annotations


def same_value(a, b) -> bool:
    """``a`` and ``b`` are equal and of one type. Values without a plain truth value for ``==``
    (arrays, whose comparison is elementwise, or objects whose ``==`` fails) are the same only
    when they are the same object."""
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # any __eq__ or __bool__ may refuse: then they are not known to be equal
        return False
