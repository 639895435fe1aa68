#!/usr/bin/env bash
# Offline checks of the deployment files (a CTest test, label "deploy"):
#   * promtool: the rules and the example config parse; the alert unit tests pass;
#   * the PrometheusRule in the base is in sync with deploy/prometheus/rules.yaml;
#   * kustomize: the overlays build, and every object passes its Kubernetes
#     (or Prometheus-operator) schema;
#   * the KServe manifests pass KServe's own CRDs (vendored in
#     deploy/tools/kserve-crds/) and each InferenceService finds its runtime;
#   * the Dockerfiles lint clean.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== promtool"
promtool check rules deploy/prometheus/rules.yaml
promtool check config deploy/prometheus/prometheus.yaml
promtool test rules deploy/prometheus/tests/rules_test.yaml

echo "== node tools (deploy/tools, pinned by package-lock.json)"
if [ ! -d deploy/tools/node_modules ]; then
  npm ci --prefix deploy/tools --no-audit --no-fund --loglevel=error
fi

node deploy/tools/prometheus_rule.mjs --check

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for overlay in cpu gpu cpu-tls multi-model; do
  echo "== kustomize overlays/$overlay"
  kubectl kustomize "deploy/kubernetes/overlays/$overlay" >"$out/$overlay.yaml"
  node deploy/tools/validate_manifests.mjs <"$out/$overlay.yaml"
done
# The overlays must differ where they should: device, image, GPU resource.
expect() {  # expect OVERLAY PATTERN yes|no
  if grep -q -e "$2" "$out/$1.yaml"; then found=yes; else found=no; fi
  if [ "$found" != "$3" ]; then echo "FAIL overlays/$1: '$2' present: $found, expected $3" >&2; exit 1; fi
}
expect gpu "nvidia.com/gpu: \"1\"" yes
expect cpu "nvidia.com/gpu" no
expect gpu "--device=cuda:0" yes
expect cpu "--device=cpu" yes
expect gpu "image: deberta-serve:cuda" yes
expect cpu "image: deberta-serve:cpu" yes
# The tls component: flags, Secrets, probes that speak TLS, HTTPS scrapes.
expect cpu-tls "--tls_client_ca=/etc/deberta-serve-tls/ca.crt" yes
expect cpu-tls "--api_keys_file=/etc/deberta-serve-api-keys/keys" yes
expect cpu-tls "secretName: deberta-serve-tls" yes
expect cpu-tls "grpc:\s*$" no
expect cpu-tls "scheme: https" yes
expect cpu "--tls_cert" no
# The multi-model overlay: a repository filled by an init container.
expect multi-model "--model_repository=/models" yes
expect multi-model "--model=demo" no
expect multi-model "initContainers:" yes
expect multi-model "image: registry.example.com/deberta-models:" yes
expect cpu "initContainers:" no

echo "== KServe (deploy/kserve, against KServe's CRDs)"
# All files in one stream: an InferenceService's runtime is in another file.
kserve_documents() {  # kserve_documents FILE...
  for file in "$@"; do echo "---"; cat "$file"; done
}
kserve_documents deploy/kserve/*.yaml | node deploy/tools/validate_manifests.mjs
# The runtime names each model after its InferenceService and serves the
# Open Inference Protocol on the ports the InferenceServices route to.
kserve_expect() {  # kserve_expect FILE PATTERN
  grep -q -e "$2" "deploy/kserve/$1" || { echo "FAIL deploy/kserve/$1: no '$2'" >&2; exit 1; }
}
kserve_expect serving-runtime.yaml "--model_name={{.Name}}"
kserve_expect serving-runtime.yaml "--model=/mnt/models"
kserve_expect serving-runtime.yaml "--http_port=8080"
kserve_expect serving-runtime.yaml "--port=8081"
kserve_expect inference-service-grpc.yaml "containerPort: 8081"
kserve_expect inference-service-grpc.yaml "protocolVersion: grpc-v2"
# The KServe check can fail: a misspelt field (in the spec, in a container,
# in the metadata), a wrong type, a repeated port and a protocol no runtime
# serves must each be named.
printf '%s\n' 'apiVersion: serving.kserve.io/v1beta1' 'kind: InferenceService' 'metadata: {name: bad, lables: {}}' \
  'spec:' '  predictor:' '    minReplica: 1' '    model:' '      modelFormat: {name: deberta}' \
  '      runtime: deberta-serve' '      protocolVersion: v3' '      resourcez: {}' '      args: [1]' \
  '      ports: [{containerPort: 8080}, {containerPort: 8080, protocol: TCP}]' >"$out/bad-isvc.yaml"
bad=$(kserve_documents "$out/bad-isvc.yaml" deploy/kserve/serving-runtime.yaml |
  node deploy/tools/validate_manifests.mjs 2>&1) &&
  { echo "FAIL the KServe check passed a bad InferenceService" >&2; exit 1; }
for problem in "spec.predictor.minReplica: unknown field" "spec.predictor.model.resourcez: unknown field" \
    "spec.predictor.model.args[0]: must be string" "ports: duplicate containerPort/protocol" \
    "metadata.lables (not in V1ObjectMeta)" \
    "serves model format deberta over protocolVersion v3"; do
  grep -qF "$problem" <<<"$bad" || { echo "FAIL the KServe check did not name '$problem': $bad" >&2; exit 1; }
done

echo "== Dockerfiles"
node deploy/tools/lint_dockerfiles.mjs docker/Dockerfile docker/Dockerfile.cuda
sh -n docker/entrypoint.sh
echo "deploy checks: all passed"
