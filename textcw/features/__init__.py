"""Featurizers: scikit-learn transformers from documents to sparse feature matrices."""
