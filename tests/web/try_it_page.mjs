// Drives the try-it page in Debian's headless Chromium (puppeteer-core):
// loads it from a running server, waits for the model table, submits the
// classify and fill-mask forms with the given texts, and prints what the
// page rendered as JSON for the e2e WebTest to compare with the API's own
// answers. Console errors, page errors and Content-Security-Policy
// violations are reported too. Saves a screenshot of the whole page.
//
//   node try_it_page.mjs <base URL> <classify text> <fill-mask text> <screenshot.png>
import puppeteer from "puppeteer-core";

const [base, classifyText, fillMaskText, screenshot] = process.argv.slice(2);
if (!screenshot) {
  console.error("usage: node try_it_page.mjs <base URL> <classify text> <fill-mask text> <screenshot.png>");
  process.exit(2);
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // Root in a container has no user namespace for Chromium's sandbox.
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

  const rows = (selector) =>
    page.$$eval(`${selector} tbody tr`, (trs) =>
      trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  const barWidths = (selector) =>
    page.$$eval(`${selector} .bar`, (bars) => bars.map((bar) => bar.style.width));

  await page.type("#classify-text", classifyText);
  await page.click("#classify-form button");
  await page.waitForSelector("#classify-results:not([hidden])");
  await page.type("#fill-mask-text", fillMaskText);
  await page.$eval("#fill-mask-top-k", (input) => { input.value = "3"; });
  await page.click("#fill-mask-form button");
  await page.waitForSelector("#fill-mask-results:not([hidden])");

  const result = {
    model: await rows("#model-info"),
    classify: await rows("#classify-results"),
    classifyBars: await barWidths("#classify-results"),
    fillMask: await rows("#fill-mask-results"),
    problems,
  };
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
