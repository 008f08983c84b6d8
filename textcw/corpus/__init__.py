"""Corpora: the data home, sha256-pinned reading and downloading, and one loader per corpus."""
