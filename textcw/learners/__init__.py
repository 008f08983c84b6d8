"""Learners: one algorithm per module, all on :class:`textcw.learners.base.OnlineLinearClassifier`."""
