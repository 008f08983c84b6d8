"""The built-in catalogue, registered through the same hooks as any third-party plugin.

Each hook imports its implementations when it is called: every command loads the plugins, and
``textcw --help`` or shell completion should not wait for scikit-learn, scipy and numba.
"""
