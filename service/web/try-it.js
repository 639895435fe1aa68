// deberta-serve's try-it page: calls the JSON API (POST /v1/model,
// /v1/classify, /v1/fill-mask, /v1/classify-tokens, /v1/rerank) and renders
// the answers as tables, with a bar per probability, and the text of a
// token classification with its entities highlighted. Only the forms of
// the heads the model has are shown. Text goes to the server's tokenizer;
// token ids are sent as they are. On a server of several models a model
// selector (from GET /v1/models) names the model of every call.
"use strict";

const $ = (id) => document.getElementById(id);

function authorization() {
  const key = $("api-key").value.trim();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

async function callApi(path, body) {
  const headers = { "Content-Type": "application/json", ...authorization() };
  // The chosen model, on a server of several (empty: its only one).
  const model = $("model-select").value;
  if (model) body = { ...body, model };
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${answer.code}: ${answer.message}`);
  return answer;
}

function showError(id, error) {
  const element = $(id);
  element.textContent = error ? String(error.message || error) : "";
  element.hidden = !error;
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function barCell(row, probability) {
  const td = cell(row, "", "bar-cell");
  const bar = document.createElement("div");
  bar.className = "bar";
  bar.style.width = `${Math.max(0, Math.min(1, probability)) * 100}%`;
  td.appendChild(bar);
}

// "1 7 8 2" -> [1, 7, 8, 2]; null when the field is empty.
function parseIds(text) {
  const fields = text.trim().split(/[\s,]+/).filter(Boolean);
  if (fields.length === 0) return null;
  const ids = fields.map(Number);
  if (ids.some((id) => !Number.isInteger(id))) throw new Error(`token ids must be integers: "${text}"`);
  return ids;
}

// The Sequence message from a text field and a token-id field.
function sequenceFrom(textId, idsId) {
  const text = $(textId).value.trim();
  if (text) return { text };
  const tokenIds = parseIds($(idsId).value);
  if (tokenIds) return { tokenIds };
  throw new Error("type a text or token ids");
}

// Lists the server's models; with more than one, shows the selector (its
// ready models) and chooses the first.
async function loadModels() {
  try {
    const response = await fetch("/v1/models", { headers: authorization() });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${answer.code}: ${answer.message}`);
    const ready = (answer.models || []).filter((m) => m.state === "MODEL_STATE_READY");
    const select = $("model-select");
    select.textContent = "";
    if (ready.length > 1) {
      for (const m of ready) {
        const option = document.createElement("option");
        option.value = m.name;
        option.textContent = `${m.name} (version ${m.version}, ${m.task})`;
        select.appendChild(option);
      }
    }
    $("model-choice").hidden = ready.length <= 1;
  } catch (error) {
    showError("model-error", error);
  }
  await loadModel();
}

async function loadModel() {
  try {
    const info = await callApi("/v1/model", {});
    const body = $("model-info").tBodies[0];
    body.textContent = "";
    const rows = [
      ["Model", info.modelName], ["Type", info.modelType], ["Device", info.device], ["Dtype", info.dtype],
      ["Enhanced Mask Decoder", info.emdEnabled ? "yes" : "no"], ["Vocabulary", info.vocabSize],
      ["Max sequence length", info.maxSequenceLength], ["Labels", (info.labels || []).join(", ")],
      ["Tokenizer", info.tokenizer || "none (token ids only)"], ["Server", info.serverVersion],
    ];
    for (const [name, value] of rows) {
      const row = body.insertRow();
      cell(row, name);
      cell(row, String(value));
    }
    $("mask-token").textContent = info.tokenizer ? "[MASK]" : `mask id ${info.maskTokenId}`;
    $("classify-section").hidden = !info.hasClassifier;
    $("fill-mask-section").hidden = !info.hasFillMask;
    $("entities-section").hidden = !info.hasTokenClassifier;
    $("rerank-section").hidden = !info.isReranker;
    showError("model-error", null);
  } catch (error) {
    showError("model-error", error);
  }
}

async function classify(event) {
  event.preventDefault();
  const table = $("classify-results");
  try {
    const answer = await callApi("/v1/classify", { sequences: [sequenceFrom("classify-text", "classify-ids")] });
    const body = table.tBodies[0];
    body.textContent = "";
    for (const label of answer.results[0].labels) {
      const row = body.insertRow();
      cell(row, label.label);
      cell(row, String(label.labelId), "number");
      cell(row, label.probability.toFixed(4), "number");
      barCell(row, label.probability);
    }
    table.hidden = false;
    showError("classify-error", null);
  } catch (error) {
    table.hidden = true;
    showError("classify-error", error);
  }
}

async function fillMask(event) {
  event.preventDefault();
  const table = $("fill-mask-results");
  try {
    const topK = Number($("fill-mask-top-k").value) || 5;
    const sequence = sequenceFrom("fill-mask-text", "fill-mask-ids");
    const answer = await callApi("/v1/fill-mask", { sequences: [{ sequence }], topK });
    const body = table.tBodies[0];
    body.textContent = "";
    for (const prediction of answer.results[0].predictions) {
      prediction.candidates.forEach((candidate, rank) => {
        const row = body.insertRow();
        cell(row, String(prediction.position), "number");
        cell(row, String(rank + 1), "number");
        cell(row, String(candidate.tokenId), "number");
        cell(row, candidate.token);
        cell(row, candidate.probability.toFixed(4), "number");
        barCell(row, candidate.probability);
      });
    }
    table.hidden = false;
    showError("fill-mask-error", null);
  } catch (error) {
    table.hidden = true;
    showError("fill-mask-error", error);
  }
}

// The text with each entity's span [start, end) (in code points, as the
// API counts) in a <mark> titled with its label and score. Spans that
// overlap an earlier one (GPT-2 tokens can share a character) start where
// it ends.
function highlight(element, text, entities) {
  const chars = Array.from(text);
  element.textContent = "";
  let cursor = 0;
  for (const entity of entities) {
    const start = Math.max(cursor, entity.start || 0), end = entity.end || 0;
    if (end <= start) continue;
    element.append(chars.slice(cursor, start).join(""));
    const mark = document.createElement("mark");
    mark.textContent = chars.slice(start, end).join("");
    mark.title = `${entity.label} ${entity.score.toFixed(4)}`;
    mark.dataset.label = entity.label;
    element.appendChild(mark);
    cursor = end;
  }
  element.append(chars.slice(cursor).join(""));
}

async function findEntities(event) {
  event.preventDefault();
  const table = $("entities-results"), shown = $("entities-highlighted");
  try {
    const text = $("entities-text").value;
    if (!text.trim()) throw new Error("type a text");
    const body = { sequences: [{ text }], aggregation: $("entities-aggregation").value };
    if ($("entities-windows").checked) body.longInput = { mode: "MODE_WINDOWS", stride: 16 };
    const answer = await callApi("/v1/classify-tokens", body);
    const entities = answer.results[0].entities || [];
    highlight(shown, text, entities);
    const rows = table.tBodies[0];
    rows.textContent = "";
    for (const entity of entities) {
      const row = rows.insertRow();
      cell(row, entity.label);
      cell(row, entity.score.toFixed(4), "number");
      cell(row, String(entity.start || 0), "number");
      cell(row, String(entity.end || 0), "number");
      cell(row, entity.word || "");
      barCell(row, entity.score);
    }
    shown.hidden = false;
    table.hidden = false;
    showError("entities-error", null);
  } catch (error) {
    shown.hidden = true;
    table.hidden = true;
    showError("entities-error", error);
  }
}

async function rerank(event) {
  event.preventDefault();
  const table = $("rerank-results");
  try {
    const documents = $("rerank-documents").value.split("\n").map((line) => line.trim()).filter(Boolean);
    const answer = await callApi("/v1/rerank", {
      query: $("rerank-query").value, documents, topN: Number($("rerank-top-n").value) || 0,
    });
    const rows = table.tBodies[0];
    rows.textContent = "";
    answer.results.forEach((result, rank) => {
      const index = result.index || 0;
      const row = rows.insertRow();
      cell(row, String(rank + 1), "number");
      cell(row, String(index), "number");
      cell(row, result.score.toFixed(4), "number");
      barCell(row, result.score);
      cell(row, documents[index]);
    });
    table.hidden = false;
    showError("rerank-error", null);
  } catch (error) {
    table.hidden = true;
    showError("rerank-error", error);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("classify-form").addEventListener("submit", classify);
  $("fill-mask-form").addEventListener("submit", fillMask);
  $("entities-form").addEventListener("submit", findEntities);
  $("rerank-form").addEventListener("submit", rerank);
  $("api-key").addEventListener("change", loadModels);
  $("model-select").addEventListener("change", loadModel);
  loadModels();
});
