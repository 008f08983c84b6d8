"""Prometheus metrics of one service, in a registry of its own (not the process-wide default, so
that several services in one process, as in tests, do not collide)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# Request latencies from 0.25 ms (a single prediction) to 10 s (a slow client's body).
_LATENCY_BUCKETS = (0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
_GROUP_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class ServiceMetrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._children: dict = {}
        self.requests = Counter("textcw_serve_requests", "HTTP requests by endpoint and status code",
                                ["endpoint", "status"], registry=self.registry)
        self.latency = Histogram("textcw_serve_request_seconds", "Time to answer a request, by endpoint",
                                 ["endpoint"], buckets=_LATENCY_BUCKETS, registry=self.registry)
        self.predicted = Counter("textcw_serve_documents_predicted", "Documents labelled",
                                 registry=self.registry)
        self.learned = Counter("textcw_serve_documents_learned", "Documents learned (acknowledged updates)",
                               registry=self.registry)
        self.changes = Counter("textcw_serve_model_updates", "Learned documents that changed the model",
                               registry=self.registry)
        self.online_error = Gauge("textcw_serve_online_error", "Online mistakes / documents learned so far",
                                  registry=self.registry)
        self.group_size = Histogram("textcw_serve_commit_group_records", "Update records per fsync (group commit)",
                                    buckets=_GROUP_BUCKETS, registry=self.registry)
        self.fsync_seconds = Histogram("textcw_serve_log_write_seconds", "Time to write and fsync one group",
                                       buckets=_LATENCY_BUCKETS, registry=self.registry)

    def observe_request(self, endpoint: str, status: int, seconds: float) -> None:
        # the labelled children, looked up once: labels() checks its arguments and takes a lock on
        # every call, a tenth of the event loop's time for a request; the endpoints and statuses
        # are a small fixed set (RequestMetrics names unknown paths "other")
        key = (endpoint, status)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (self.requests.labels(endpoint, str(status)),
                                              self.latency.labels(endpoint))
        children[0].inc()
        children[1].observe(seconds)

    def committed(self, records: int, write_seconds: float, replies: list[dict]) -> None:
        self.group_size.observe(records)
        self.fsync_seconds.observe(write_seconds)
        for reply in replies:
            self.learned.inc(reply["documents"])
            self.changes.inc(reply["updates"])
        if replies and replies[-1]["online_error"] is not None:
            self.online_error.set(replies[-1]["online_error"])

    def render(self) -> bytes:
        return generate_latest(self.registry)
