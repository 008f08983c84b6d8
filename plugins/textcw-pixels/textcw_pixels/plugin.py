"""The registrations textcw finds through the ``textcw`` entry point.

The featurizers are registered by reference (``"package.module:attribute"``, imported when
first used) and the corpus module is imported inside its hook, so that loading the plugin adds
nothing to the start-up of ``textcw --help`` or ``textcw list``.
"""

import textcw


@textcw.hookimpl
def register_corpora(register):
    from textcw_pixels import usps

    register("usps", usps.load, summary="USPS handwritten digits, ESL train/test split (Hull 1994)",
             tasks=usps.TASKS, task_check=usps.check_task, task_patterns=usps.TASK_PATTERNS,
             featurizer="pixels", takes_download=True)


@textcw.hookimpl
def register_featurizers(register):
    register("pixels", "textcw_pixels.features:Pixels", summary="Grey values of the pixels, rescaled to [0, 1]")
    register("pixel-pairs", "textcw_pixels.features:PixelPairs",
             summary="Pixels plus the product of every pair of pixels (JMLR 2012 USPS features)")
