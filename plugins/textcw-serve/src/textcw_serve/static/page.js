// The page at /: predict a pasted document, show the probabilities as bars, send the correct
// label to /learn, show /status. Text from the service is only ever set as textContent.
"use strict";

const $ = (id) => document.getElementById(id);
let lastDocument = null;
let service = null;

async function call(method, path, body) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const token = $("token").value;
  if (token && (path === "/learn" || path === "/checkpoint")) headers["Authorization"] = "Bearer " + token;
  const reply = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await reply.json().catch(() => ({error: reply.statusText}));
  if (!reply.ok) throw new Error(data.error || reply.statusText);
  return data;
}

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
}

function row(name, value) {
  const dt = document.createElement("dt");
  dt.textContent = name;
  const dd = document.createElement("dd");
  dd.textContent = value === null || value === undefined ? "-" : String(value);
  dd.dataset.field = name;
  return [dt, dd];
}

async function refreshStatus() {
  try {
    service = await call("GET", "/status");
  } catch (error) {
    showError(error);
    return;
  }
  $("model-name").textContent = service.model;
  const error = service.online_error === null ? null : (100 * service.online_error).toFixed(2) + " %";
  const checkpoint = service.last_checkpoint ? `record ${service.last_checkpoint.seq} (${service.last_checkpoint.created_at || "?"})` : null;
  $("status").replaceChildren(...[
    ["learner", service.learner], ["featurizer", service.featurizer], ["classes", service.classes.join(", ")],
    ["features", service.n_features], ["learning", service.learning ? "on" : "off"],
    ["update_count", service.update_count], ["documents_seen", service.documents_seen],
    ["online_error", error], ["last_checkpoint", checkpoint], ["model_digest", service.model_digest.slice(0, 16)],
    ["uptime", Math.round(service.uptime_seconds) + " s"],
  ].flatMap(([name, value]) => row(name, value)));
  $("token-field").hidden = !service.token_required;
  const select = $("correct");
  if (select.options.length !== service.classes.length) {
    select.replaceChildren(...service.classes.map((label) => {
      const option = document.createElement("option");
      option.value = option.textContent = String(label);
      return option;
    }));
  }
}

function showPrediction(prediction, classes) {
  // a multi-label model's label is its set of tags (a list, possibly empty)
  const tags = Array.isArray(prediction.label);
  const chosen = (tags ? prediction.label : [prediction.label]).map(String);
  $("label").textContent = tags ? (chosen.join(", ") || "(no tag)") : String(prediction.label);
  $("margin").textContent = prediction.margin === null ? "-" : prediction.margin.toFixed(4);
  const probabilities = prediction.probabilities || {};
  $("bars").replaceChildren(...classes.map((label) => {
    const p = probabilities[String(label)];
    const bar = document.createElement("div");
    bar.className = "bar" + (chosen.includes(String(label)) ? " top" : "");
    bar.dataset.label = String(label);
    const name = document.createElement("span");
    name.textContent = String(label);
    const track = document.createElement("div");
    track.className = "track";
    const fill = document.createElement("div");
    fill.className = "fill";
    fill.style.width = (p === undefined || p === null ? 0 : 100 * p) + "%";
    track.append(fill);
    const value = document.createElement("span");
    value.className = "value";
    value.textContent = p === undefined || p === null ? "-" : p.toFixed(3);
    bar.append(name, track, value);
    return bar;
  }));
  $("result").hidden = false;
  $("correction").hidden = !(service && service.learning);
  if (!tags) $("correct").value = String(prediction.label);
}

async function predict() {
  showError(null);
  $("learn-result").textContent = "";
  const text = $("document").value;
  try {
    const reply = await call("POST", "/predict", {documents: [text]});
    lastDocument = text;
    showPrediction(reply.predictions[0], reply.classes);
  } catch (error) {
    showError(error);
  }
}

async function learn() {
  showError(null);
  if (lastDocument === null) return;
  try {
    const reply = await call("POST", "/learn", {documents: [lastDocument], labels: [$("correct").value]});
    $("learn-result").textContent = `Learned as update ${reply.seq}: ` +
      (reply.mistakes ? "the model had it wrong; " : "the model had it right; ") +
      (reply.changed ? "the model changed." : "the model did not change.");
    await refreshStatus();
    const again = await call("POST", "/predict", {documents: [lastDocument]});
    showPrediction(again.predictions[0], again.classes);
  } catch (error) {
    showError(error);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("predict").addEventListener("click", predict);
  $("learn").addEventListener("click", learn);
  $("refresh").addEventListener("click", refreshStatus);
  refreshStatus();
});
