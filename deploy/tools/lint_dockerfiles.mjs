// Lints Dockerfiles offline: dockerfile-utils' validator (syntax, unknown
// instructions, bad flags, duplicate stage names, ...) plus a few
// hadolint-style rules this project cares about.
//
//   node deploy/tools/lint_dockerfiles.mjs docker/Dockerfile docker/Dockerfile.cuda
import { readFileSync } from "node:fs";
import { validate } from "dockerfile-utils";

// Our own rules, line by line over the joined logical lines.
function projectRules(text) {
  const problems = [];
  const lines = text.replace(/\\\n/g, " ").split("\n");
  const froms = lines.filter((l) => /^\s*FROM\s/i.test(l));
  const stages = new Set();  // Earlier stages' names: FROM <stage> names no image.
  for (const from of froms) {
    const words = from.trim().split(/\s+/).filter((w) => !w.startsWith("--"));
    const image = words[1];
    if (words.length >= 4 && /^as$/i.test(words[2])) stages.add(words[3]);
    if (stages.has(image) && words[3] !== image) continue;
    if (/:latest$/.test(image) || (!image.includes(":") && !image.startsWith("$"))) {
      problems.push(`FROM ${image}: pin a tag, not latest`);
    }
  }
  for (const line of lines) {
    if (/apt-get\s+install/.test(line)) {
      if (!/--no-install-recommends/.test(line)) problems.push("apt-get install without --no-install-recommends");
      if (!/\s-y\b|\s-y\s|--yes/.test(line)) problems.push("apt-get install without -y");
      if (!/rm -rf \/var\/lib\/apt\/lists/.test(line)) problems.push("apt-get install without removing /var/lib/apt/lists");
    }
    if (/^\s*ADD\s+https?:/i.test(line)) problems.push("ADD of a URL: use curl in RUN and check it");
  }
  // The final stage must not run as root.
  const lastFrom = lines.map((l, i) => (/^\s*FROM\s/i.test(l) ? i : -1)).filter((i) => i >= 0).pop() ?? 0;
  const users = lines.slice(lastFrom).filter((l) => /^\s*USER\s/i.test(l));
  const lastUser = users.length ? users[users.length - 1].trim().split(/\s+/)[1] : "root";
  if (/^(root|0)(:|$)/.test(lastUser)) problems.push("final stage runs as root: add a USER");
  if (!lines.slice(lastFrom).some((l) => /^\s*(ENTRYPOINT|CMD)\s/i.test(l))) {
    problems.push("final stage has no ENTRYPOINT or CMD");
  }
  return problems;
}

let failed = false;
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: lint_dockerfiles.mjs DOCKERFILE...");
  process.exit(2);
}
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const diagnostics = validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  const problems = [...diagnostics, ...projectRules(text)];
  for (const p of problems) console.error(`FAIL ${file}: ${p}`);
  if (problems.length === 0) console.log(`ok   ${file}`);
  failed ||= problems.length > 0;
}
process.exit(failed ? 1 : 0);
