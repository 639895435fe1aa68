// Keeps deploy/kubernetes/base/prometheusrule.yaml (a PrometheusRule for
// the Prometheus operator) equal to deploy/prometheus/rules.yaml, the one
// file the rules are edited in and tested from.
//
//   node deploy/tools/prometheus_rule.mjs --write   regenerate it
//   node deploy/tools/prometheus_rule.mjs --check   fail if it is stale (scripts/check_deploy.sh)
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const rulesPath = join(repo, "deploy/prometheus/rules.yaml");
const rulePath = join(repo, "deploy/kubernetes/base/prometheusrule.yaml");

const rules = yaml.load(readFileSync(rulesPath, "utf8"));
const resource = {
  apiVersion: "monitoring.coreos.com/v1",
  kind: "PrometheusRule",
  metadata: { name: "deberta-serve" },
  spec: { groups: rules.groups },
};
const text =
  "# Generated from deploy/prometheus/rules.yaml by deploy/tools/prometheus_rule.mjs --write;\n" +
  "# edit the rules there. The Prometheus operator loads it as recording rules and alerts.\n" +
  yaml.dump(resource, { lineWidth: 120, noRefs: true });

const mode = process.argv[2];
if (mode === "--write") {
  writeFileSync(rulePath, text);
  console.log(`wrote ${rulePath}`);
} else if (mode === "--check") {
  let current = "";
  try {
    current = readFileSync(rulePath, "utf8");
  } catch {}
  if (current !== text) {
    console.error(`FAIL ${rulePath} is stale: run node deploy/tools/prometheus_rule.mjs --write`);
    process.exit(1);
  }
  console.log(`ok   ${rulePath} matches deploy/prometheus/rules.yaml`);
} else {
  console.error("usage: prometheus_rule.mjs --write|--check");
  process.exit(2);
}
