"""Built-in featurizers."""

from textcw.hookspecs import hookimpl


@hookimpl
def register_featurizers(register):
    from textcw.features.hashing import hashing
    from textcw.features.precomputed import precomputed
    from textcw.features.text import bigram_counts, binary_bow
    register("binary-bow", binary_bow, summary="Binary bag of words (CountVectorizer, binary=True)")
    register("bigram-counts", bigram_counts, summary="Unigram and bigram counts")
    register("hashing", hashing,
             summary="Binary bag of words hashed into 2**20 columns, no vocabulary (for streams)")
    register("precomputed", precomputed,
             summary="Feature vectors shipped with a corpus (dicts or a matrix), passed through as CSR")
