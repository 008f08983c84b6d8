"""The JSON the service accepts and returns (pydantic models: validation and the OpenAPI description).

Every bound here is checked before any work is done for a request: the body's size by
:mod:`textcw_serve.guards` as it arrives, then the number of documents, each document's length
and the labels' types here. Strict types: a number is not a document, a list of lists is not a label
(a list of tags is, for a multi-label model).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints,
                      model_validator)
from textcw.corpus.labels import MAX_LABEL_CHARS  # one bound for every door: what /learn takes, export takes

MAX_BODY_BYTES = 4 << 20
MAX_BATCH = 512
MAX_DOCUMENT_CHARS = 100_000
# ``explain``: each document's terms are weighed against the model's weights (and variances) while
# the model is held for reading (learning waits meanwhile), and its words named by tokenizing it
# again after (about 2 ms per newsgroup post on a 2^20-column model in all, more for longer
# documents: docs/serve.md), so a request explains at most this many documents and characters,
# and lists at most MAX_EXPLAIN_WORDS words for each.
MAX_EXPLAIN_DOCUMENTS = 16
MAX_EXPLAIN_CHARS = 50_000
MAX_EXPLAIN_WORDS = 50

Document = Annotated[StrictStr, StringConstraints(max_length=MAX_DOCUMENT_CHARS)]
# every label type the library trains on: strings (and bytes, shown as text), integers, booleans,
# integral floats; bool first, so that ``true`` stays a boolean
Label = StrictBool | StrictInt | Annotated[StrictFloat, Field(allow_inf_nan=False)] | \
    Annotated[StrictStr, StringConstraints(max_length=MAX_LABEL_CHARS)]
ClassValue = StrictBool | StrictInt | StrictFloat | StrictStr
# a multi-label model's label: a document's tags (which shape a model takes is checked by the
# service, tagsets.check_shapes, since the schema is the same for every model)
MAX_TAGS = 1024
TagSet = Annotated[list[Label], Field(max_length=MAX_TAGS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Reply(BaseModel):
    # "model_version", "model_digest": pydantic before 2.10 reserved the prefix "model_"
    model_config = ConfigDict(protected_namespaces=())


class PredictRequest(_Strict):
    documents: Annotated[list[Document], Field(min_length=1, max_length=MAX_BATCH,
                                               description="The documents to label (plain text).")]
    top: Annotated[StrictInt | None, Field(ge=1, description=(
        "Also list each document's `top` best labels, best first (`top` in each prediction): from 1 to the "
        "model's number of classes."))] = None
    explain: Annotated[StrictInt | None, Field(ge=1, le=MAX_EXPLAIN_WORDS, description=(
        f"Also list each document's `explain` strongest words (`explanation` in each prediction), at most "
        f"{MAX_EXPLAIN_WORDS}; a request with `explain` has at most {MAX_EXPLAIN_DOCUMENTS} documents of "
        f"{MAX_EXPLAIN_CHARS:,} characters together."))] = None

    @model_validator(mode="after")
    def _explained_documents(self):
        if self.explain is None:
            return self
        if len(self.documents) > MAX_EXPLAIN_DOCUMENTS:
            raise ValueError(f"explain: at most {MAX_EXPLAIN_DOCUMENTS} documents per request are explained; got "
                             f"{len(self.documents)}: send them in requests of {MAX_EXPLAIN_DOCUMENTS}")
        chars = sum(map(len, self.documents))
        if chars > MAX_EXPLAIN_CHARS:
            raise ValueError(f"explain: at most {MAX_EXPLAIN_CHARS:,} characters of documents per request are "
                             f"explained; got {chars:,}: send fewer or shorter documents")
        return self


class SuggestRequest(_Strict):
    documents: Annotated[list[Document], Field(min_length=1, max_length=MAX_BATCH,
                                               description="Unlabelled documents to choose from (plain text).")]
    n: Annotated[StrictInt, Field(ge=1, le=MAX_BATCH, description="How many documents to suggest.")] = 10
    strategy: Literal["mistake", "margin", "random"] = Field(
        default="mistake", description="'mistake': the probability that the prediction is wrong under the Gaussian "
                                       "learners' weight distribution (cw-var, cw-stdev, arow, scw1, scw2); 'margin': "
                                       "the gap between the two best probabilities (or scores), smallest first; "
                                       "'random': a seeded draw, the baseline.")
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1, description="The seed of 'random'.")] = 0


class LearnRequest(_Strict):
    documents: Annotated[list[Document], Field(min_length=1, max_length=MAX_BATCH,
                                               description="The documents to learn from, in order.")]
    labels: Annotated[list[Label | TagSet], Field(
        min_length=1, max_length=MAX_BATCH,
        description="The correct label of each document: one of the model's classes, as /status shows it (or as "
                    "text: \"3\" names the class 3); for a multi-label model, the list of the document's tags "
                    "([] for none). A label of the other shape is refused (422).")]

    @model_validator(mode="after")
    def _same_length(self):
        if len(self.documents) != len(self.labels):
            raise ValueError(f"documents and labels must have the same length; got {len(self.documents)} "
                             f"documents and {len(self.labels)} labels")
        return self


class Prediction(_Reply):
    label: ClassValue | list[ClassValue] = Field(
        description="The predicted class; for a multi-label model, its set of tags (a list, in the order of classes).")
    probabilities: dict[str, float | None] | None = Field(
        description="P(class) for each class, when the learner defines probabilities.")
    decision: float | dict[str, float | None] | None = Field(
        description="decision_function: one number for a binary model (positive means classes[1]), "
                    "one per class otherwise.")
    margin: float | None = Field(description="|decision| (binary) or the top score minus the runner-up; null for "
                                             "a multi-label model (each label is decided alone).")


class PredictResponse(_Reply):
    model_version: int = Field(description="Updates applied to the model that made these predictions.")
    classes: list[ClassValue]
    predictions: list[Prediction]


class RankedLabel(_Reply):
    label: ClassValue
    probability: float | None = Field(description="P(label), or null for a model without probabilities.")
    score: float | None = Field(description="The decision score the labels are ranked by (binary: -s for "
                                            "classes[0], s for classes[1]); the probability for a model "
                                            "without scores.")


class Term(_Reply):
    words: list[str] = Field(description="The document's words that make this feature (several for a hashed "
                                         "column; none for a feature without words).")
    column: int
    value: float = Field(description="The feature's value x_j in this document.")
    contribution: float | None = Field(description="x_j (w_label,j - w_runner_up,j): what it adds to the margin.")
    sd: float | None = Field(description="The contribution's standard deviation under the Gaussian learners' "
                                         "weight distribution; null for other learners.")


class Explanation(_Reply):
    label: ClassValue
    runner_up: ClassValue
    binary: bool = Field(description="Two classes: the margin is the score against the threshold 0.")
    margin: float | None = Field(description="The label's score minus the runner-up's (binary: against 0).")
    margin_sd: float | None
    terms: list[Term] = Field(description="The strongest words, by |contribution|, largest first.")
    rest: float | None = Field(description="The other words' contributions, summed.")
    n_rest: int
    intercept: float | None
    intercept_sd: float | None
    unknown: bool = Field(default=False, description="The document has no word the model knows: the label is the "
                                                      "most frequent among held-out documents with none.")


class AnsweredPrediction(Prediction):
    top: list[RankedLabel] | None = Field(default=None, description="The `top` best labels, best first.")
    explanation: Explanation | None = Field(default=None, description="Why this label and not the runner-up.")


class AnsweredPredictResponse(PredictResponse):
    """A ``/predict`` reply with ``top`` or ``explain``: each prediction has the fields asked for."""

    predictions: list[AnsweredPrediction]


class Suggested(_Reply):
    index: int = Field(description="The document's position in the request (from 0).")
    score: float | None = Field(description="'mistake': P(mistake); 'margin': the gap; 'random': the draw.")
    label: ClassValue = Field(description="The model's prediction for it.")


class SuggestResponse(_Reply):
    model_version: int
    strategy: str
    suggestions: list[Suggested] = Field(description="The most informative documents first.")


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
