"""textcw-pixels: the USPS digits corpus and pixel featurizers, as a textcw plugin."""

__version__ = "0.1.0"
