// Drives the try-it page's task forms in Debian's headless Chromium
// (puppeteer-core) on a server whose model has a token-classification head
// or is a reranker: loads the page, reports which sections the model's
// heads show, submits the entities form (text, aggregation) or the rerank
// form (query, documents) as the input file says, and prints what the page
// rendered as JSON (the highlighted text's marks, the tables' rows) for the
// e2e WebTest to compare with the API's answers. Console errors, page
// errors and Content-Security-Policy violations are reported too.
//
//   node try_it_tasks.mjs <base URL> <input.json> <screenshot.png>
//   input.json: {"entities": {"text": ..., "aggregation": "AGGREGATION_FIRST"}}
//            or {"rerank": {"query": ..., "documents": [...], "topN": 3}}
//            with "model": NAME on a server of several: chosen in the page's
//            selector first (the page's options are reported as "models")
import { readFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const [base, inputPath, screenshot] = process.argv.slice(2);
if (!screenshot) {
  console.error("usage: node try_it_tasks.mjs <base URL> <input.json> <screenshot.png>");
  process.exit(2);
}
const input = JSON.parse(readFileSync(inputPath, "utf8"));

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
const problems = [];
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1000, height: 900 });
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
  await page.goto(`${base}/`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#model-info tbody tr");
  const result = { problems, shown: {} };
  if (input.model) {
    result.models = await page.$$eval("#model-select option", (options) => options.map((o) => o.value));
    await page.select("#model-select", input.model);
    await page.waitForFunction(
      (name) => [...document.querySelectorAll("#model-info tbody tr")].some(
        (tr) => tr.cells[0].textContent === "Model" && tr.cells[1].textContent === name),
      {}, input.model);
  }

  const rows = (selector) =>
    page.$$eval(`${selector} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  for (const section of ["classify", "fill-mask", "entities", "rerank"]) {
    result.shown[section] = await page.$eval(`#${section}-section`, (element) => !element.hidden);
  }
  if (input.entities) {
    await page.$eval("#entities-text", (element, text) => { element.value = text; }, input.entities.text);
    await page.select("#entities-aggregation", input.entities.aggregation);
    await page.click("#entities-form button");
    await page.waitForSelector("#entities-results:not([hidden])");
    result.marks = await page.$$eval("#entities-highlighted mark",
                                     (marks) => marks.map((mark) => [mark.textContent, mark.dataset.label]));
    result.highlightedText = await page.$eval("#entities-highlighted", (element) => element.textContent);
    result.entities = await rows("#entities-results");
  }
  if (input.rerank) {
    await page.type("#rerank-query", input.rerank.query);
    await page.$eval("#rerank-documents", (element, text) => { element.value = text; },
                     input.rerank.documents.join("\n"));
    await page.$eval("#rerank-top-n", (element, n) => { element.value = String(n); }, input.rerank.topN || 0);
    await page.click("#rerank-form button");
    await page.waitForSelector("#rerank-results:not([hidden])");
    result.rerank = await rows("#rerank-results");
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
