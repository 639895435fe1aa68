// KServe's two kinds that deploy/kserve/ uses, ServingRuntime
// (serving.kserve.io/v1alpha1) and InferenceService (serving.kserve.io/v1beta1),
// as schemas of the fields this project sets and their neighbours, written
// here from KServe's API reference (no package of KServe's CRD schemas is
// reachable from this project's machines: not in Debian, not on npm). The
// containers inside them are Kubernetes containers and are checked against
// the Kubernetes schema by validate_manifests.mjs; here they are "container".
//
// A schema is {type, properties, required, items, values, enum}; an object
// with properties refuses any other key (a typo is an error).

const string = { type: "string" };
const boolean = { type: "boolean" };
const integer = { type: "integer" };
const stringMap = { type: "object", values: string };
const anyObject = { type: "object", values: {} };
const anyList = { type: "array", items: {} };

// Fields of InferenceService's component specs (predictor) besides the model.
const componentExtension = {
  minReplicas: integer,
  maxReplicas: integer,
  scaleTarget: integer,
  scaleMetric: { type: "string", enum: ["cpu", "memory", "concurrency", "rps"] },
  containerConcurrency: integer,
  timeout: integer,
  canaryTrafficPercent: integer,
  serviceAccountName: string,
  nodeSelector: stringMap,
  tolerations: anyList,
  affinity: anyObject,
  volumes: anyList,
  imagePullSecrets: anyList,
  labels: stringMap,
  annotations: stringMap,
};

// ModelSpec: the model's own fields, inline with a container's.
const modelSpec = {
  type: "object",
  container: true,  // Every key not listed here is a Kubernetes container field.
  properties: {
    modelFormat: { type: "object", properties: { name: string, version: string }, required: ["name"] },
    runtime: string,
    protocolVersion: { type: "string", enum: ["v1", "v2", "grpc-v1", "grpc-v2"] },
    storageUri: string,
  },
  required: ["modelFormat"],
};

export const schemas = {
  "serving.kserve.io/v1alpha1 ServingRuntime": {
    type: "object",
    properties: {
      supportedModelFormats: {
        type: "array",
        items: {
          type: "object",
          properties: { name: string, version: string, autoSelect: boolean, priority: integer },
          required: ["name"],
        },
      },
      protocolVersions: { type: "array", items: { type: "string", enum: ["v1", "v2", "grpc-v1", "grpc-v2"] } },
      multiModel: boolean,
      disabled: boolean,
      grpcEndpoint: string,
      grpcDataEndpoint: string,
      httpDataEndpoint: string,
      replicas: integer,
      containers: { type: "array", items: { type: "container" } },
      volumes: anyList,
      nodeSelector: stringMap,
      tolerations: anyList,
      affinity: anyObject,
      imagePullSecrets: anyList,
      labels: stringMap,
      annotations: stringMap,
    },
    required: ["containers"],
  },
  "serving.kserve.io/v1beta1 InferenceService": {
    type: "object",
    properties: {
      predictor: { type: "object", properties: { model: modelSpec, ...componentExtension } },
    },
    required: ["predictor"],
  },
};

// The problems of `value` against `schema` at `path`; containers found are
// pushed on `containers` as [path, value] for the Kubernetes check.
export function check(value, schema, path, containers) {
  const problems = [];
  const is = {
    string: (v) => typeof v === "string",
    boolean: (v) => typeof v === "boolean",
    integer: (v) => Number.isInteger(v),
    object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
    array: (v) => Array.isArray(v),
    container: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  };
  if (schema.type && !is[schema.type](value)) return [`${path}: not a ${schema.type}`];
  if (schema.type === "container") {
    containers.push([path, value]);
    return [];
  }
  if (schema.enum && !schema.enum.includes(value)) return [`${path}: ${value} is not one of ${schema.enum.join(", ")}`];
  if (schema.type === "array" && schema.items) {
    value.forEach((item, i) => problems.push(...check(item, schema.items, `${path}[${i}]`, containers)));
  }
  if (schema.type === "object") {
    for (const key of schema.required ?? []) {
      if (!(key in value)) problems.push(`${path}.${key}: required`);
    }
    const rest = {};
    for (const [key, item] of Object.entries(value)) {
      if (schema.properties && key in schema.properties) {
        problems.push(...check(item, schema.properties[key], `${path}.${key}`, containers));
      } else if (schema.values) {
        problems.push(...check(item, schema.values, `${path}.${key}`, containers));
      } else if (schema.container) {
        rest[key] = item;
      } else if (schema.properties) {
        problems.push(`${path}.${key}: unknown field`);
      }
    }
    if (schema.container) containers.push([path, { name: "kserve-container", ...rest }]);
  }
  return problems;
}
