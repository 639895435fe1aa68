// Hugging Face's own inference client (@huggingface/inference, pinned in
// package.json) against deberta-serve's Hugging Face routes, each task at
// the endpoint URL a user would give it. Prints one JSON object: what the
// client parsed for each call, and the error messages of the calls that
// must fail (no key, a bad parameter). Run by tests/e2e/compat_clients_test.cc.
//
//   node hf_client.mjs BASE_URL API_KEY '{"text": ..., "pair": [a, b], "ner_text": ...,
//                                        "mask_text": ..., "premise": ..., "labels": [...]}'
import { InferenceClient } from "@huggingface/inference";

const [base, key, inputsJson] = process.argv.slice(2);
const inputs = JSON.parse(inputsJson);
const at = (path) => new InferenceClient(key, { endpointUrl: `${base}/hf/models/${path}` });

async function failure(call) {
  try {
    await call();
    return "no error";
  } catch (error) {
    return String(error.message ?? error);
  }
}

const out = {
  textClassification: await at("demo").textClassification({ inputs: inputs.text }),
  textClassificationTop1Sigmoid: await at("demo").textClassification({
    inputs: inputs.text,
    parameters: { top_k: 1, function_to_apply: "sigmoid" },
  }),
  tokenClassification: await at("ner").tokenClassification({
    inputs: inputs.ner_text,
    parameters: { aggregation_strategy: "simple" },
  }),
  fillMask: await at("demo/pipeline/fill-mask").fillMask({ inputs: inputs.mask_text, parameters: { top_k: 3 } }),
  zeroShot: await at("nli").zeroShotClassification({
    inputs: inputs.premise,
    parameters: { candidate_labels: inputs.labels, multi_label: true },
  }),
  errors: {
    noKey: await failure(() =>
      new InferenceClient(undefined, { endpointUrl: `${base}/hf/models/demo` }).textClassification({
        inputs: inputs.text,
      }),
    ),
    badParameter: await failure(() =>
      at("demo").textClassification({ inputs: inputs.text, parameters: { function_to_apply: "cube" } }),
    ),
  },
};
console.log(JSON.stringify(out));
