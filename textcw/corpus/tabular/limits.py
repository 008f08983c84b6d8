"""Every size a table is read by: the bounds of what is read (past one, the read stops with an
error saying what to do), the block sizes of reading and the stride of the first pass's index.

The other modules of :mod:`textcw.corpus.tabular` read them as ``limits.NAME`` when they use
them, so that one value holds in every module (a test that lowers a bound changes it here).
"""

from __future__ import annotations

__all__ = ["BLOCK_BYTES", "CHUNK", "MAX_BATCH_BYTES", "MAX_FIELD", "MAX_LINE", "MAX_MATERIALISED",
           "MAX_PAGE", "MAX_STDIN_BYTES", "SCAN_MIN_BYTES", "STRIDE"]

# Where every STRIDE-th row of a split starts is recorded: a range is read from at most
# STRIDE - 1 rows before it.
STRIDE = 1_000
CHUNK = 10_000
MAX_FIELD = 16 * 2**20
MAX_LINE = 4 * MAX_FIELD
# Parquet (textcw.corpus.tabular.parquet): a page is decompressed whole, so none may be larger once
# uncompressed than its values may be (MAX_FIELD bytes each) nor than MAX_PAGE (pyarrow writes
# 1,024 values a page: 1,024 texts of 1 MB fit); pyarrow decodes at most MAX_BATCH_BYTES of
# values at once (but always one row).
MAX_PAGE = 2**30
MAX_BATCH_BYTES = 2**26
MAX_STDIN_BYTES = 2**30
MAX_MATERIALISED = 2_000_000
BLOCK_BYTES = 2**20
# The first pass over a CSV or TSV file of this size or more is made by the compiled scanner
# (textcw.corpus._table_scan); below, the csv module is as quick as starting numba (~0.4 s).
SCAN_MIN_BYTES = 16 * 2**20
