"""Built-in corpora.

Each corpus registers its tasks (``tasks``: name -> summary, listed with their sizes by
``textcw list corpora``) and the featurizer its documents need by default (``featurizer``).
Corpora whose task names are patterns add ``task_check`` (a callable that accepts or rejects a
task name) and ``task_patterns`` (pattern -> summary, for the listing); those whose task is a
file path say so (``takes_path``), and those whose loader takes ``download=False`` say so
(``takes_download``), so their sizes are listed from the local files. The fields are those of
:class:`textcw.registry.CorpusEntry`.
"""

from textcw.hookspecs import hookimpl


@hookimpl
def register_corpora(register):
    from textcw.corpus import amazon, enron, folder, newsgroups, rcv1, reuters, spam, svmlight
    from textcw.corpus import synthetic, tabular, vw
    register("newsgroups", newsgroups.load, summary="20 Newsgroups, bydate split (Lang 1995)",
             tasks=newsgroups.TASKS, takes_download=True)
    register("amazon", amazon.load,
             summary="Amazon reviews in 4 domains, sentiment and domain (Blitzer et al. 2007)",
             tasks=amazon.TASKS, featurizer="precomputed", takes_download=True)
    register("spam", spam.load, summary="ECML/PKDD 2006 spam, task A, 3 users (Bickel 2006)",
             tasks=spam.TASKS, featurizer="precomputed", takes_download=True)
    register("reuters", reuters.load,
             summary="Reuters-21578, ModApte split (Lewis 1997); stands in for RCV1",
             tasks=reuters.TASKS, takes_download=True)
    register("rcv1", rcv1.load, summary="RCV1-v2, LYRL2004 token files (Lewis et al. 2004)",
             tasks=rcv1.TASKS, takes_download=True)
    register("enron", enron.load,
             summary="Enron email foldering, farmer-d and kaminski-v (Bekkerman et al. 2004)",
             tasks=enron.TASKS, takes_download=True)
    register("folder", folder.load, summary="Your text files: one sub-folder per class",
             tasks=folder.TASKS, task_check=folder.check_task, task_patterns=folder.TASK_PATTERNS,
             takes_path=True, takes_download=True)
    register("svmlight", svmlight.load, summary="Your svmlight/libsvm files (train[,test])",
             tasks=svmlight.TASKS, task_check=svmlight.check_task,
             task_patterns=svmlight.TASK_PATTERNS, featurizer="precomputed", takes_path=True,
             takes_download=True)
    register("vw", vw.load, summary="Your 'label | text' lines, as Vowpal Wabbit reads them (train[,test])",
             tasks=vw.TASKS, task_check=vw.check_task, task_patterns=vw.TASK_PATTERNS, featurizer="hashing",
             takes_path=True, takes_download=True, stream=vw.stream, size=vw.size)
    register("synthetic", synthetic.load,
             summary="20-d rotated Gaussian of the CW-stdev and AROW experiments (NIPS 2008, MLJ 2013)",
             tasks=synthetic.TASKS, featurizer="precomputed")
    for table, what in ((tabular.CSV, "CSV"), (tabular.TSV, "TSV (tab-separated)"),
                        (tabular.JSONL, "JSON-lines"), (tabular.PARQUET, "Parquet (the parquet extra)")):
        register(table.fmt, table.load, summary=f"Your {what} file of text and label columns (train[,test])",
                 tasks={}, task_check=table.check_task, task_patterns=tabular.TASK_PATTERNS,
                 takes_path=True, takes_download=True, stream=table.stream, size=table.size)
