// Validates Kubernetes manifests offline against the Kubernetes and
// Prometheus-operator schemas (kubernetes-models: JSON schemas generated
// from the upstream OpenAPI definitions, checked with ajv), and checks
// every field name of the built-in kinds against the API's own type map
// (@kubernetes/client-node), since the schemas let unknown names through.
//
//   kubectl kustomize deploy/kubernetes/overlays/cpu | node deploy/tools/validate_manifests.mjs
//
// Every document must be of a known kind, pass its schema (types, enums,
// formats, required fields) and, for built-in kinds, use only field names
// the API defines. KServe's kinds (deploy/kserve/) are checked against
// KServe's own CRDs (kserve_crds.mjs), and each InferenceService must find
// its runtime among the ServingRuntimes given with it (kserve_runtimes.mjs).
// Exits 1 if any document fails.
import { readFileSync } from "node:fs";
import yaml from "js-yaml";
import * as k8s from "@kubernetes/client-node";
import { crdProblems } from "./kserve_crds.mjs";
import { runtimeProblems } from "./kserve_runtimes.mjs";

// Field names in `value` that its API type `type` does not define.
function unknownFields(value, type, path) {
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, array[1], `${path}[${i}]`)) : [];
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    return value && typeof value === "object"
      ? Object.entries(value).flatMap(([key, v]) => unknownFields(v, map[1], `${path}.${key}`))
      : [];
  }
  const model = k8s[type];
  if (typeof model?.getAttributeTypeMap !== "function" || value === null || typeof value !== "object") {
    return [];  // A scalar, IntOrString, Quantity or free-form object.
  }
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  return Object.entries(value).flatMap(([key, v]) =>
    fields.has(key) ? unknownFields(v, fields.get(key), `${path}.${key}`) : [`${path}.${key} (not in ${type})`]);
}

// client-node's class for a built-in kind: apps/v1 Deployment -> V1Deployment.
function builtinType(apiVersion, kind) {
  const version = apiVersion.split("/").pop();
  const name = version.charAt(0).toUpperCase() + version.slice(1) + kind;
  return typeof k8s[name]?.getAttributeTypeMap === "function" ? name : null;
}

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
  if (doc.apiVersion?.startsWith("serving.kserve.io/")) {
    // The CRD leaves metadata to the API server, which reads it as ObjectMeta.
    const problems = [...crdProblems(doc), ...unknownFields(doc.metadata, "V1ObjectMeta", "metadata")];
    if (problems.length > 0) {
      console.error(`FAIL ${doc.apiVersion} ${name}: ${problems.join("; ")}`);
      failed = true;
    } else {
      console.log(`ok   ${doc.apiVersion} ${name} (KServe's CRD)`);
    }
    continue;
  }
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
    const type = builtinType(doc.apiVersion, doc.kind);
    const unknown = type ? unknownFields(doc, type, "") : [];
    if (unknown.length > 0) throw new Error(`unknown fields: ${unknown.join(", ")}`);
    console.log(`ok   ${doc.apiVersion} ${name}${type ? "" : " (schema only: not a built-in kind)"}`);
  } catch (error) {
    console.error(`FAIL ${doc.apiVersion} ${name}: ${error.message}`);
    failed = true;
  }
}
for (const problem of runtimeProblems(documents)) {
  console.error(`FAIL ${problem}`);
  failed = true;
}
process.exit(failed ? 1 : 0);
