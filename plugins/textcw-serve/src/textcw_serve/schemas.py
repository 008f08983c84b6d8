"""The JSON the service accepts and returns (pydantic models: validation and the OpenAPI description).

Every bound here is checked before any work is done for a request: the body's size by
:mod:`textcw_serve.guards` as it arrives, then the number of documents, each document's length
and the labels' types here. Strict types: a number is not a document, a list is not a label.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints,
                      model_validator)
from textcw.corpus.labels import MAX_LABEL_CHARS  # one bound for every door: what /learn takes, export takes

MAX_BODY_BYTES = 4 << 20
MAX_BATCH = 512
MAX_DOCUMENT_CHARS = 100_000

Document = Annotated[StrictStr, StringConstraints(max_length=MAX_DOCUMENT_CHARS)]
# every label type the library trains on: strings (and bytes, shown as text), integers, booleans,
# integral floats; bool first, so that ``true`` stays a boolean
Label = StrictBool | StrictInt | Annotated[StrictFloat, Field(allow_inf_nan=False)] | \
    Annotated[StrictStr, StringConstraints(max_length=MAX_LABEL_CHARS)]
ClassValue = StrictBool | StrictInt | StrictFloat | StrictStr


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Reply(BaseModel):
    # "model_version", "model_digest": pydantic before 2.10 reserved the prefix "model_"
    model_config = ConfigDict(protected_namespaces=())


class PredictRequest(_Strict):
    documents: Annotated[list[Document], Field(min_length=1, max_length=MAX_BATCH,
                                               description="The documents to label (plain text).")]


class LearnRequest(_Strict):
    documents: Annotated[list[Document], Field(min_length=1, max_length=MAX_BATCH,
                                               description="The documents to learn from, in order.")]
    labels: Annotated[list[Label], Field(min_length=1, max_length=MAX_BATCH,
                                         description="The correct label of each document: one of the model's classes, as "
                                                     "/status shows it (or as text: \"3\" names the class 3).")]

    @model_validator(mode="after")
    def _same_length(self):
        if len(self.documents) != len(self.labels):
            raise ValueError(f"documents and labels must have the same length; got {len(self.documents)} "
                             f"documents and {len(self.labels)} labels")
        return self


class Prediction(_Reply):
    label: ClassValue = Field(description="The predicted class.")
    probabilities: dict[str, float | None] | None = Field(
        description="P(class) for each class, when the learner defines probabilities.")
    decision: float | dict[str, float | None] | None = Field(
        description="decision_function: one number for a binary model (positive means classes[1]), "
                    "one per class otherwise.")
    margin: float | None = Field(description="|decision| (binary) or the top score minus the runner-up.")


class PredictResponse(_Reply):
    model_version: int = Field(description="Updates applied to the model that made these predictions.")
    classes: list[ClassValue]
    predictions: list[Prediction]


class LearnResponse(_Reply):
    seq: int = Field(description="This update's number in the update log (1, 2, ...).")
    documents: int
    mistakes: int = Field(description="Documents the model got wrong, each checked just before its update.")
    updates: int = Field(description="Documents that changed the model.")
    changed: bool
    update_count: int
    documents_seen: int
    online_error: float | None = Field(description="Online mistakes / documents learned since the model was first served.")
    unseen_tokens: int | None = Field(
        default=None, description="Terms (words or n-grams) of these documents that the model's fixed vocabulary "
                                  "dropped; null when the featurizer learns every word (hashing).")
    warning: str | None = Field(default=None, description="Why part of the update could not be learned, if so.")


class CheckpointInfo(_Reply):
    seq: int
    file: str
    created_at: str | None


class StatusResponse(_Reply):
    model_config = ConfigDict(extra="allow", protected_namespaces=())

    model: str = Field(description="The model file's name.")
    learner: str | None = None
    learner_class: str | None = None
    params: dict | None = None
    featurizer: str | None = None
    n_features: int | None = None
    versions: dict[str, str | None]
    learning: bool
    degraded: str | None = Field(description="Why learning stopped, if it did (restart to recover).")
    token_required: bool
    classes: list[ClassValue]
    update_count: int
    documents_seen: int
    online_mistakes: int
    online_error: float | None
    model_changes: int
    last_checkpoint: CheckpointInfo | None
    model_digest: str = Field(description="sha256 of the learner's classes and state arrays.")
    vocabulary: dict | None = Field(default=None, description="Whether the featurizer's vocabulary is fixed "
                                                              "(words never seen are dropped by /learn), and its size.")
    calibration: dict | None = Field(default=None, description="The probability calibration (temperature), kept "
                                                               "as fitted in training while /learn updates the learner.")
    uptime_seconds: float
    limits: dict[str, int | float]


class Health(_Reply):
    status: str = Field(description="'ok', or 'degraded' when learning has stopped (predictions still work).")
    learning: bool


class ErrorResponse(_Reply):
    error: str = Field(description="What was wrong and what to do.")
