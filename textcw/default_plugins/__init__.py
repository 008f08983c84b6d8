"""The built-in catalogue, registered through the same hooks as any third-party plugin.

Learners and featurizers are registered by reference (``"package.module:name"``,
imported when first used) and corpora import their light loader modules inside the hooks:
every command loads the plugins, and ``textcw --help``, ``textcw list`` or shell completion
should not wait for scikit-learn, scipy and numba.
"""

# The hook-implementation modules, one per kind of registration (textcw.plugins loads each).
__all__ = ["baselines", "commands", "corpora", "evaluation", "featurizers", "learners", "scale"]
