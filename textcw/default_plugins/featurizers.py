"""Built-in featurizers."""

from textcw.features.text import bigram_counts, binary_bow
from textcw.hookspecs import hookimpl


@hookimpl
def register_featurizers(register):
    register("binary-bow", binary_bow, summary="Binary bag of words (CountVectorizer, binary=True)")
    register("bigram-counts", bigram_counts, summary="Unigram and bigram counts")
