"""Evaluators: experiments that turn learners and data into reports."""
