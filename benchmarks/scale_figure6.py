"""JMLR 2012 Figure 6: shard models and their combinations against single models.

Runs the ``combination`` evaluator: for n in (10, 50, 100) shards, one pass per shard, the mean
test accuracy of the n shard models, of their uniform combination and of their KL combination,
with the single models of each learner (default ``cw-var`` and ``pa``, the paper's pair) as the
reference. Default task: ``synthetic-text:1000000`` (the paper used 10**6 sentiment reviews and
800,000 Reuters articles, neither of which is available here).

Run by hand (not a test): ``python benchmarks/scale_figure6.py [--task synthetic-text:1e6]
[--learners cw-var pa] [--shards 10 50 100] [--runs 1] [--workers 2] [--json out.json]``.
Results: docs/scale.md.
"""

from __future__ import annotations

import argparse

from scale_common import machine, table

from textcw.evaluation.combination import combination


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="synthetic-text:1000000")
    parser.add_argument("--learners", nargs="+", default=["cw-var", "pa"])
    parser.add_argument("--shards", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--featurizer", default=None)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()

    run = combination(shard_counts=args.shards, runs=args.runs, workers=args.workers,
                      featurizer=args.featurizer)
    report = run(args.task, args.learners)
    print(f"{report.task}: {report.n_train:,} training, {report.n_test:,} test documents, "
          f"{report.runs} run(s), {report.seconds:.0f} s; {machine()}\n")
    print(table(*report.table()))
    if args.json_out:
        report.to_json(args.json_out)


if __name__ == "__main__":
    main()
