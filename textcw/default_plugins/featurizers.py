"""Built-in featurizers."""

from textcw.hookspecs import hookimpl


@hookimpl
def register_featurizers(register):
    register("tfidf", "textcw.features.weighting:tfidf",
             summary="Sublinear TF-IDF of words, unit length (the default for text corpora)")
    register("binary-bow", "textcw.features.text:binary_bow", summary="Binary bag of words (CountVectorizer, binary=True)")
    register("bigram-counts", "textcw.features.text:bigram_counts", summary="Unigram and bigram counts")
    register("hashing", "textcw.features.hashing:hashing",
             summary="Binary bag of words hashed into 2**20 columns, no vocabulary (for streams)")
    register("hashed-tfidf", "textcw.features.hashed_tfidf:hashed_tfidf",
             summary="Sublinear TF-IDF of words hashed into 2**20 columns; new words get columns "
                     "(for served models that learn)")
    register("precomputed", "textcw.features.precomputed:precomputed",
             summary="Feature vectors shipped with a corpus (dicts or a matrix), passed through as CSR")
