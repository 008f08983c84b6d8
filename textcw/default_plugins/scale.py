"""Built-in scale-out components: the synthetic text stream (the shard-combination experiment is
the library function :func:`textcw.evaluation.evaluators.combination`)."""

from textcw.hookspecs import hookimpl


@hookimpl
def register_corpora(register):
    from textcw.corpus import synthetic_text
    register("synthetic-text", synthetic_text.load,
             summary="Seeded synthetic text of any size: Zipf vocabulary, hidden linear labels (no download)",
             tasks=synthetic_text.TASKS, task_check=synthetic_text.check_task,
             task_patterns=synthetic_text.TASK_PATTERNS, featurizer="hashing",
             stream=synthetic_text.stream, size=synthetic_text.size)

