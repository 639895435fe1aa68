// Whether KServe would find a runtime for each InferenceService among the
// ServingRuntimes given with it: the controller's rule (KServe's
// pkg/apis/serving/v1beta1/predictor_model.go, GetSupportingRuntimes and
// RuntimeSupportsModel, and ServingRuntimeSpec.IsProtocolVersionSupported),
// which no CRD schema states and a cluster reports only after the apply, as
// an InferenceService that never becomes ready. A runtime supports a model
// when it is not disabled, is single-model and single-node like the
// predictor, lists the model's format ("name" or "name:version"; without an
// explicit runtime, only formats with autoSelect), and lists the model's
// protocolVersion (v1 when the model names none) or lists none.

// A model format's label as KServe matches it: "name" or "name:version".
function formatLabel(format) {
  return format?.version !== undefined ? `${format.name}:${format.version}` : format?.name;
}

function supportsFormat(runtime, model) {
  const explicit = typeof model.runtime === "string";
  const labels = new Set();
  for (const format of runtime.spec.supportedModelFormats ?? []) {
    if (explicit || format.autoSelect === true) {
      labels.add(format.name);
      labels.add(formatLabel(format));
    }
  }
  return labels.has(formatLabel(model.modelFormat));
}

function supportsProtocol(runtime, protocol) {
  const listed = runtime.spec.protocolVersions ?? [];
  return listed.length === 0 || listed.includes(protocol);
}

// The problems, one per InferenceService whose model no runtime here serves.
export function runtimeProblems(documents) {
  const runtimes = documents.filter((d) => d.kind === "ServingRuntime" && d.spec);
  const problems = [];
  for (const service of documents.filter((d) => d.kind === "InferenceService")) {
    const predictor = service.spec?.predictor ?? {};
    const model = predictor.model;
    if (!model) continue;  // A predictor of its own containers picks no runtime.
    const name = `InferenceService/${service.metadata?.name}`;
    const candidates = model.runtime ? runtimes.filter((r) => r.metadata?.name === model.runtime) : runtimes;
    if (model.runtime && candidates.length === 0) {
      problems.push(`${name}: spec.predictor.model.runtime ${model.runtime}: no ServingRuntime of that name here`);
      continue;
    }
    const protocol = model.protocolVersion ?? "v1";
    const multiNode = predictor.workerSpec !== undefined;
    const supporting = candidates.filter((r) =>
      r.spec.disabled !== true && r.spec.multiModel !== true && (r.spec.workerSpec !== undefined) === multiNode &&
      supportsFormat(r, model) && supportsProtocol(r, protocol));
    if (supporting.length === 0) {
      problems.push(`${name}: no ServingRuntime here (${candidates.map((r) => r.metadata?.name).join(", ") || "none"}) ` +
                    `serves model format ${formatLabel(model.modelFormat)} over protocolVersion ${protocol}`);
    }
  }
  return problems;
}
