// deberta-serve's try-it page: calls the JSON API (POST /v1/model,
// /v1/classify, /v1/fill-mask) and renders the answers as tables, with a
// bar per probability. Text goes to the server's tokenizer; token ids are
// sent as they are.
"use strict";

const $ = (id) => document.getElementById(id);

async function callApi(path, body) {
  const headers = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers.Authorization = `Bearer ${key}`;
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

document.addEventListener("DOMContentLoaded", () => {
  $("classify-form").addEventListener("submit", classify);
  $("fill-mask-form").addEventListener("submit", fillMask);
  $("api-key").addEventListener("change", loadModel);
  loadModel();
});
