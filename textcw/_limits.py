"""Numerical limits shared by the input check (:mod:`textcw._csr`) and the kernels.

Plain Python, importable without numba or scipy, and below both users, so that neither reaches
into the other for a number.
"""

from __future__ import annotations

__all__ = ["MAX_ABS_VALUE", "MAX_LABELS", "MAX_LABEL_CHARS"]

# The largest feature value, in absolute value, that the kernels accept: larger ones overflow the
# products of squared values in the update rules. Checked by textcw._csr.as_kernel_csr, whose
# docstring gives the reasoning, and by the kernels' own input check (textcw._csr_kernel).
MAX_ABS_VALUE = 1e30

# The longest label, in characters. Labels end up in fixed-width numpy unicode arrays (4 bytes a
# character for every document's label), so one long label multiplies memory by its length; and
# a model must export and import as it trains. One bound for every door: a table's label cells
# (textcw.corpus.labels), a learner's fit (textcw.learners.inputs.check_labels), the
# export (textcw.portable_export) and import (textcw.portable_format) of a model, and the
# service's /learn.
MAX_LABEL_CHARS = 1_000

# The most distinct labels one read may bring (a table's label column, the columns of
# textcw.corpus.base.Dataset.from_columns): more means the column is probably not the label. Read
# as ``_limits.MAX_LABELS`` where used, so that a test that lowers it changes it everywhere.
MAX_LABELS = 10_000
