"""Export/import of a calibrated model (``textcw train``'s and ``make_pipeline``'s default): the
temperature travels as plain data in the components, and a damaged one is refused."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

import textcw
from textcw.errors import ModelFileError
from textcw.learners.calibrated_pipeline import CalibratedPipeline
from textcw.portable import JSON_MEMBER, export_model, import_model
from textcw.testing import make_documents

DOCS, LABELS = make_documents(40, random_state=0)
PROBE, _ = make_documents(6, random_state=1)


@pytest.fixture
def exported(tmp_path):
    model = textcw.make_pipeline("binary-bow", "cw-stdev").fit(DOCS, LABELS)
    assert isinstance(model, CalibratedPipeline)
    return model, export_model(model, tmp_path / "m.textcw")


def rewrite(path, change):
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        members = {n: archive.read(n) for n in names}
    document = json.loads(members[JSON_MEMBER])
    change(document["components"]["__dict__"]["probability"])
    members[JSON_MEMBER] = json.dumps(document).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, members[name])


def test_calibrated_model_round_trips_with_its_temperature(exported, tmp_path):
    model, path = exported
    back = import_model(path)
    assert isinstance(back, CalibratedPipeline)
    np.testing.assert_array_equal(back.predict(PROBE), model.predict(PROBE))
    np.testing.assert_array_equal(back.predict_proba(PROBE), model.predict_proba(PROBE))
    # the calibrated probabilities are not the learner's own
    assert not np.array_equal(back.predict_proba(PROBE), back[-1].predict_proba(back[0].transform(PROBE)))
    assert export_model(back, tmp_path / "again.textcw").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("change,message", [
    (lambda p: p.update(inverse_temperature=-1.0), "inverse_temperature must be a finite number >= 0"),
    (lambda p: p.update(method="isotonic"), "method 'temperature'"),
    (lambda p: p.update(margin="cubed"), "margin must be one of"),
])
def test_damaged_calibration_is_a_model_file_error(exported, change, message):
    _, path = exported
    rewrite(path, lambda p: change(p["__dict__"] if "__dict__" in p else p))
    with pytest.raises(ModelFileError, match=f"probability calibration is damaged: .*{message}"):
        import_model(path)
