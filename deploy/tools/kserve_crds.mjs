// KServe's custom resources (ServingRuntime, InferenceService) checked
// against KServe's own CRDs (kserve-crds/, vendored unchanged: see
// docs/vendored.md) as the Kubernetes API server checks a custom resource
// under strict field validation, kubectl's default since 1.27:
//   * the served version's openAPIV3Schema: types, formats, enums, required;
//   * a field the schema does not name is an error, unless its object says
//     x-kubernetes-preserve-unknown-fields (the server would prune it or,
//     strictly, refuse it: either way the manifest does not say what it means);
//   * x-kubernetes-list-type "set" items and "map" keys are unique.
// The containers inside are checked by the same schema: KServe's CRDs carry
// Kubernetes' Container schema (controller-gen writes it from the API types).
// Not here: the admission webhook's rules (validate_manifests.mjs applies
// the one that matters to these files, the runtime choice: kserve_runtimes.mjs).
import { readFileSync } from "node:fs";
import yaml from "js-yaml";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const crdFolder = new URL("./kserve-crds/", import.meta.url);
const crdFiles = ["serving.kserve.io_servingruntimes.yaml", "serving.kserve.io_inferenceservices.yaml"];

// The structural schema made strict: objects with named fields refuse others.
function strictFields(schema) {
  if (Array.isArray(schema)) return schema.map(strictFields);
  if (schema === null || typeof schema !== "object") return schema;
  const out = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === "properties"
      ? Object.fromEntries(Object.entries(value).map(([name, field]) => [name, strictFields(field)]))
      : strictFields(value);
  }
  if (schema.properties && !schema["x-kubernetes-preserve-unknown-fields"] && !("additionalProperties" in schema)) {
    out.additionalProperties = false;
  }
  return out;
}

// The API server's list rules: a "set" holds each item once; a "map" holds
// each combination of its x-kubernetes-list-map-keys once.
function uniqueListItems(listType, items, parentSchema) {
  if (listType !== "set" && listType !== "map") return true;
  const keys = parentSchema["x-kubernetes-list-map-keys"] ?? [];
  const seen = new Set();
  for (const item of items) {
    const identity = JSON.stringify(listType === "set" ? item : keys.map((key) => item?.[key]));
    if (seen.has(identity)) {
      uniqueListItems.errors = [{
        keyword: "x-kubernetes-list-type",
        message: listType === "set" ? `duplicate item ${identity}` : `duplicate ${keys.join("/")} ${identity}`,
      }];
      return false;
    }
    seen.add(identity);
  }
  return true;
}

// useDefaults: the API server applies a schema's defaults before it checks
// (a port's protocol is TCP when unsaid). optimize: false compiles the
// InferenceService schema (2 MB) in 2 s rather than 5 s.
const ajv = new Ajv({ allErrors: true, strict: false, useDefaults: true, code: { optimize: false } });
addFormats(ajv);
ajv.addKeyword({ keyword: "x-kubernetes-list-type", type: "array", errors: true, validate: uniqueListItems });
for (const keyword of ["x-kubernetes-list-map-keys", "x-kubernetes-map-type", "x-kubernetes-int-or-string",
                       "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource"]) {
  ajv.addKeyword({ keyword });  // Annotations the checks above read, or that change nothing here.
}

// "apiVersion kind" -> the schema of the version the CRD serves; compiled
// when a document of that kind first comes.
const schemas = new Map();
const validators = new Map();
for (const file of crdFiles) {
  const crd = yaml.load(readFileSync(new URL(file, crdFolder), "utf8"));
  for (const version of crd.spec.versions.filter((v) => v.served)) {
    schemas.set(`${crd.spec.group}/${version.name} ${crd.spec.names.kind}`, version.schema.openAPIV3Schema);
  }
}

function validatorOf(kind) {
  if (!validators.has(kind) && schemas.has(kind)) validators.set(kind, ajv.compile(strictFields(schemas.get(kind))));
  return validators.get(kind);
}

// ajv's "/spec/containers/0/ports" as "spec.containers[0].ports".
function fieldPath(instancePath) {
  return instancePath.split("/").slice(1).reduce(
    (path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), "");
}

function describe(error) {
  const path = fieldPath(error.instancePath);
  switch (error.keyword) {
    case "additionalProperties": return `${path}.${error.params.additionalProperty}: unknown field`;
    case "required": return `${path ? `${path}.` : ""}${error.params.missingProperty}: required`;
    case "enum": return `${path}: ${JSON.stringify(error.data)} is not one of ${error.params.allowedValues.join(", ")}`;
    default: return `${path}: ${error.message}`;
  }
}

// The problems of one KServe document against its CRD, each naming its field.
export function crdProblems(doc) {
  const validate = validatorOf(`${doc.apiVersion} ${doc.kind}`);
  if (!validate) return [`unknown apiVersion/kind ${doc.apiVersion} ${doc.kind} (KServe CRDs here: ${[...schemas.keys()].join(", ")})`];
  const problems = typeof doc.metadata?.name === "string" ? [] : ["metadata.name: required"];
  if (!validate(doc)) problems.push(...new Set(validate.errors.map(describe)));
  return problems;
}
