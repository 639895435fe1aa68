// Validates Kubernetes manifests offline against the Kubernetes and
// Prometheus-operator schemas (kubernetes-models: JSON schemas generated
// from the upstream OpenAPI definitions, checked with ajv).
//
//   kubectl kustomize deploy/kubernetes/overlays/cpu | node deploy/tools/validate_manifests.mjs
//
// Every document must be of a known kind and pass its schema: types,
// enums, formats and required fields. (The upstream schemas allow unknown
// field names, so a misspelled optional field is not caught here.) Exits 1
// if any document fails.
import { readFileSync } from "node:fs";
import yaml from "js-yaml";

// apiVersion -> module folder of its models.
function modelPath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "monitoring.coreos.com") {
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  }
  return group === "" ? `kubernetes-models/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`;
}

const documents = yaml.loadAll(readFileSync(0, "utf8")).filter((d) => d);
if (documents.length === 0) {
  console.error("validate_manifests: no documents on stdin");
  process.exit(1);
}
let failed = false;
for (const doc of documents) {
  const name = `${doc.kind}/${doc.metadata?.name}`;
  let Model;
  try {
    Model = (await import(modelPath(doc.apiVersion, doc.kind)))[doc.kind];
  } catch {
    console.error(`FAIL ${name}: unknown apiVersion/kind ${doc.apiVersion} ${doc.kind}`);
    failed = true;
    continue;
  }
  try {
    const model = new Model(doc);
    model.validate();
    console.log(`ok   ${doc.apiVersion} ${name}`);
  } catch (error) {
    console.error(`FAIL ${doc.apiVersion} ${name}: ${error.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
