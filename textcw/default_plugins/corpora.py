"""Built-in corpora."""

from textcw.corpus import newsgroups
from textcw.hookspecs import hookimpl


@hookimpl
def register_corpora(register):
    register("newsgroups", newsgroups.load, summary="20 Newsgroups, bydate split (Lang 1995)",
             tasks=newsgroups.TASKS)
