"""``textcw export`` / ``textcw import`` / ``textcw inspect``: share models without pickles.

``export`` turns a saved model (a pickle: only your own or a trusted person's) into arrays + JSON
(:mod:`textcw.portable`); ``import`` checks such a file and saves it as an ordinary model file;
``inspect`` prints what a model file or an export says about itself, without running any of it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Annotated

import typer

from textcw.atomic import check_output_path
from textcw.cli.output import JsonFlag, log, print_json
from textcw.errors import ModelFileError
from textcw.untrusted import safe_text


def export_command(
    model: Annotated[Path, typer.Argument(help="A model file saved by `textcw train --out`: a pickle, so only your own or a trusted person's")],
    out: Annotated[Path, typer.Argument(help="The file to write: arrays + JSON, safe to send to anyone")],
) -> None:
    """Write a model as numpy arrays + JSON, which can be imported without unpickling."""
    # deferred (start-up): loads scikit-learn
    from textcw.persist import load
    from textcw.portable import export_model

    check_output_path(out, "export destination", not_same_as=model, example="model.textcw")
    export_model(load(model), out)
    log.info("exported %s to %s", model, out)


def import_command(
    shared: Annotated[Path, typer.Argument(help="A file written by `textcw export` (may come from anyone)")],
    out: Annotated[Path, typer.Argument(help="The model file to save (for `textcw predict`)")],
    max_mb: Annotated[int, typer.Option("--max-mb", min=1, help="Refuse files that unpack to more than this")] = 4096,
) -> None:
    """Check an exported model (no pickle, no code from the file) and save it as a model file."""
    # deferred (start-up): loads scikit-learn
    from textcw.persist import save
    from textcw.portable import import_model

    check_output_path(out, "import destination", not_same_as=shared, example="model.textcw-model")
    model = import_model(shared, max_bytes=max_mb << 20)
    save(model, out, info={"imported_from": shared.name})
    learner = model.textcw_components_.get("learner", {})
    name = learner.get("name", "?") if isinstance(learner, dict) else "?"
    log.info("imported %s (%s, %d features, %d classes) to %s", shared, safe_text(name),
             model[-1].n_features_in_, len(model[-1].classes_), out)


def inspect_command(
    path: Annotated[Path, typer.Argument(help="A model file or an exported model")],
    as_json: JsonFlag = False,
    manifest: Annotated[bool, typer.Option("--manifest", help="Print the file's own record (a model file's manifest, an export's JSON without its arrays) instead of the model card")] = False,
    max_mb: Annotated[int, typer.Option("--max-mb", min=1, help="Refuse exports that unpack to more than this")] = 4096,
    top_words: Annotated[int | None, typer.Option(
        "--top-words", min=1, max=1000, metavar="N",
        help="Instead of the card, the N words with the largest weights towards each label, with each "
             "weight's standard deviation (Gaussian learners); loads the model as predict does")] = None,
) -> None:
    """Print a model card: learner, parameters, classes, features, corpus and training
    figures, versions, creation time, digest and signature. Nothing in the file is run or
    unpickled, and every value is printed escaped. With ``--top-words N``, the words the model
    weighs most for each label instead (the model is loaded, with the checks ``predict`` makes)."""
    # deferred (start-up): loads scikit-learn
    from textcw.model_card import model_card, render_card
    from textcw.persist import read_manifest
    from textcw.portable import is_export, read_document

    if path.exists() and not path.is_file():  # a FIFO or a device: refused before it is opened
        raise ModelFileError(f"{safe_text(path)} is not a regular file; give a model file or an exported model")
    exported = is_export(path)
    if top_words is not None:
        return _print_top_words(path, top_words, exported=exported, as_json=as_json, max_bytes=max_mb << 20)
    try:
        if manifest:
            record = read_document(path, max_bytes=max_mb << 20) if exported else read_manifest(path)
        else:
            record = model_card(path, max_bytes=max_mb << 20)
    except ModelFileError:
        if exported or _is_model_file(path):
            raise
        raise ModelFileError(f"{safe_text(path)} is neither a textcw model file nor an exported model") from None
    if manifest and exported:
        for step in record.get("steps", []):
            if isinstance(step, dict):  # the fitted state is data (vocabularies, arrays): summarise it
                for key in ("state_dict", "attributes"):
                    if key in step:
                        step[key] = "(fitted state)"
    if as_json or manifest:
        print_json(record)
    else:
        typer.echo(render_card(record), nl=False)


def _print_top_words(path: Path, n: int, *, exported: bool, as_json: bool, max_bytes: int) -> None:
    """``inspect --top-words``: :func:`textcw.model_words.top_words` of the model at ``path``."""
    # deferred (start-up): loads SciPy
    from textcw.model_words import top_words

    if exported:
        # deferred (start-up): loads scikit-learn
        from textcw.portable import import_model

        model = import_model(path, max_bytes=max_bytes)
    else:
        # deferred (start-up): loads scikit-learn
        from textcw.persist import load

        model = load(path)
    labels = top_words(model, n)
    if as_json:
        print_json({"labels": [{"label": getattr(lw.label, "item", lambda: lw.label)(), "words": [
            {"word": w.word, "weight": w.weight, "sd": w.sd} for w in lw.words]} for lw in labels]})
        return
    gaussian = any(w.sd is not None for lw in labels for w in lw.words)
    for lw in labels:
        typer.echo(f"{safe_text(lw.label)}: the {len(lw.words)} words weighing most towards it"
                   + (" (weight, its standard deviation, and the weight in deviations)" if gaussian else ""))
        for w in lw.words:
            sure = f"  sd {w.sd:.4f}  z {w.z:5.1f}" if w.sd else ""
            typer.echo(f"  {w.weight:+9.4f}{sure}  {safe_text(w.word, limit=60)}")


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command("export")(export_command)
    app.command("import")(import_command)
    app.command("inspect")(inspect_command)


def _is_model_file(path: Path) -> bool:
    """True when ``path`` is a ZIP archive whose first member is a model file's manifest."""
    # deferred (start-up): loads scikit-learn
    from textcw.persist import MANIFEST_MEMBER

    try:
        with zipfile.ZipFile(path) as archive:
            return archive.namelist()[:1] == [MANIFEST_MEMBER]
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
