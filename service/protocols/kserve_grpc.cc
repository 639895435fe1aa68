// Open Inference Protocol gRPC messages -> the REST bodies of kserve_api.h
// -> gRPC answers.
#include "service/protocols/kserve_grpc.h"

#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kserve/grpc_predict_v2.grpc.pb.h"
#include "service/endpoint.h"
#include "service/protocols/in_process_call.h"
#include "service/protocols/kserve_api.h"

namespace deberta::service {
namespace {

namespace oip = ::inference;
using json = nlohmann::json;
using Stub = GrpcAdapterBackend::Stub;
using HealthStub = GrpcAdapterBackend::HealthStub;

CallOrigin KserveOrigin(const grpc::CallbackServerContext& context) {
  return CallOrigin::FromGrpc(context, Protocol::kKserve);
}

json ParameterValue(const oip::InferParameter& parameter) {
  switch (parameter.parameter_choice_case()) {
    case oip::InferParameter::kBoolParam: return parameter.bool_param();
    case oip::InferParameter::kInt64Param: return parameter.int64_param();
    case oip::InferParameter::kStringParam: return parameter.string_param();
    default: return nullptr;
  }
}

// Little-endian fixed-size values read from raw contents.
template <typename T>
absl::StatusOr<json> RawNumbers(const std::string& raw, const std::string& name) {
  if (raw.size() % sizeof(T) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("raw contents of input '", name, "' are ", raw.size(), " bytes, not a multiple of ", sizeof(T)));
  }
  json data = json::array();
  for (size_t at = 0; at < raw.size(); at += sizeof(T)) {
    T value;
    std::memcpy(&value, raw.data() + at, sizeof(T));
    data.push_back(value);
  }
  return data;
}

// BYTES raw contents: each element a 4-byte little-endian length and its bytes.
absl::StatusOr<json> RawStrings(const std::string& raw, const std::string& name) {
  json data = json::array();
  size_t at = 0;
  while (at < raw.size()) {
    uint32_t length = 0;
    if (raw.size() - at < sizeof(length)) {
      return absl::InvalidArgumentError(absl::StrCat("raw contents of input '", name, "' end inside a length"));
    }
    std::memcpy(&length, raw.data() + at, sizeof(length));
    at += sizeof(length);
    if (raw.size() - at < length) {
      return absl::InvalidArgumentError(absl::StrCat("raw contents of input '", name, "' end inside an element"));
    }
    data.push_back(raw.substr(at, length));
    at += length;
  }
  return data;
}

absl::StatusOr<json> RawData(const std::string& datatype, const std::string& raw, const std::string& name) {
  if (datatype == "BYTES") return RawStrings(raw, name);
  if (datatype == "INT64") return RawNumbers<int64_t>(raw, name);
  if (datatype == "INT32") return RawNumbers<int32_t>(raw, name);
  return json::array();  // The mapping refuses the datatype, naming the one it takes.
}

json ContentsData(const std::string& datatype, const oip::InferTensorContents& contents) {
  if (datatype == "BYTES") return std::vector<std::string>(contents.bytes_contents().begin(), contents.bytes_contents().end());
  if (datatype == "INT64") return std::vector<int64_t>(contents.int64_contents().begin(), contents.int64_contents().end());
  if (datatype == "INT32") return std::vector<int32_t>(contents.int_contents().begin(), contents.int_contents().end());
  return json::array();
}

// The request as the REST body.
absl::StatusOr<json> BodyOf(const oip::ModelInferRequest& request) {
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size()) {
    return absl::InvalidArgumentError(absl::StrCat("raw_input_contents holds ", request.raw_input_contents_size(),
                                                   " tensors for ", request.inputs_size(), " inputs"));
  }
  json inputs = json::array();
  for (int i = 0; i < request.inputs_size(); ++i) {
    const oip::ModelInferRequest::InferInputTensor& input = request.inputs(i);
    if (raw && input.has_contents()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", input.name(), "' has contents and raw_input_contents; send one of them"));
    }
    json data;
    if (raw) {
      absl::StatusOr<json> decoded = RawData(input.datatype(), request.raw_input_contents(i), input.name());
      if (!decoded.ok()) return decoded.status();
      data = *std::move(decoded);
    } else {
      data = ContentsData(input.datatype(), input.contents());
    }
    inputs.push_back({{"name", input.name()},
                      {"datatype", input.datatype()},
                      {"shape", std::vector<int64_t>(input.shape().begin(), input.shape().end())},
                      {"data", std::move(data)}});
  }
  json body = {{"inputs", std::move(inputs)}};
  if (!request.id().empty()) body["id"] = request.id();
  if (!request.parameters().empty()) {
    json parameters = json::object();
    for (const auto& [name, value] : request.parameters()) parameters[name] = ParameterValue(value);
    body["parameters"] = std::move(parameters);
  }
  if (request.outputs_size() > 0) {
    json outputs = json::array();
    for (const auto& output : request.outputs()) outputs.push_back({{"name", output.name()}});
    body["outputs"] = std::move(outputs);
  }
  return body;
}

// One output tensor's data, typed or raw (little-endian; BYTES length-prefixed).
void SetOutputData(const json& output, oip::InferTensorContents* contents, std::string* raw) {
  const std::string datatype = output["datatype"].get<std::string>();
  for (const json& value : output["data"]) {
    if (datatype == "FP32") {
      const float number = value.get<float>();
      if (raw != nullptr) {
        raw->append(reinterpret_cast<const char*>(&number), sizeof(number));
      } else {
        contents->add_fp32_contents(number);
      }
    } else {  // BYTES: our outputs are FP32 or BYTES.
      const std::string text = value.get<std::string>();
      if (raw != nullptr) {
        const uint32_t length = static_cast<uint32_t>(text.size());
        raw->append(reinterpret_cast<const char*>(&length), sizeof(length));
        raw->append(text);
      } else {
        contents->add_bytes_contents(text);
      }
    }
  }
}

void AnswerOf(const json& answer, bool raw, oip::ModelInferResponse* response) {
  response->set_model_name(answer["model_name"].get<std::string>());
  response->set_model_version(answer["model_version"].get<std::string>());
  if (answer.contains("id")) response->set_id(answer["id"].get<std::string>());
  for (const json& output : answer["outputs"]) {
    oip::ModelInferResponse::InferOutputTensor* tensor = response->add_outputs();
    tensor->set_name(output["name"].get<std::string>());
    tensor->set_datatype(output["datatype"].get<std::string>());
    for (const json& dimension : output["shape"]) tensor->add_shape(dimension.get<int64_t>());
    SetOutputData(output, tensor->mutable_contents(), raw ? response->add_raw_output_contents() : nullptr);
    if (raw) tensor->clear_contents();
  }
}

void MetadataOf(const json& metadata, oip::ModelMetadataResponse* response) {
  response->set_name(metadata["name"].get<std::string>());
  for (const json& version : metadata["versions"]) response->add_versions(version.get<std::string>());
  response->set_platform(metadata["platform"].get<std::string>());
  for (const char* side : {"inputs", "outputs"}) {
    for (const json& tensor : metadata[side]) {
      oip::ModelMetadataResponse::TensorMetadata* out =
          std::string(side) == "inputs" ? response->add_inputs() : response->add_outputs();
      out->set_name(tensor["name"].get<std::string>());
      out->set_datatype(tensor["datatype"].get<std::string>());
      for (const json& dimension : tensor["shape"]) out->add_shape(dimension.get<int64_t>());
    }
  }
}

}  // namespace

class KserveGrpcService::Impl : public oip::GRPCInferenceService::CallbackService {
 public:
  Impl(GrpcAdapterBackend* backend, std::string server_version)
      : backend_(backend), server_version_(std::move(server_version)) {}

  grpc::ServerUnaryReactor* ServerLive(grpc::CallbackServerContext* context, const oip::ServerLiveRequest*,
                                       oip::ServerLiveResponse* response) override {
    response->set_live(true);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* ServerReady(grpc::CallbackServerContext* context, const oip::ServerReadyRequest*,
                                        oip::ServerReadyResponse* response) override {
    return backend_->Unary(context, [response](Stub&, HealthStub& health) {
      response->set_ready(IsServing(health, ""));
      return absl::OkStatus();
    });
  }

  grpc::ServerUnaryReactor* ModelReady(grpc::CallbackServerContext* context, const oip::ModelReadyRequest* request,
                                       oip::ModelReadyResponse* response) override {
    return backend_->Unary(context, [context, request, response](Stub& stub, HealthStub& health) {
      ModelCalls calls(KserveOrigin(*context), stub, request->name());
      absl::StatusOr<bool> ready = KserveModelReady(calls, health, request->version());
      if (!ready.ok()) return ready.status();
      response->set_ready(*ready);
      return absl::OkStatus();
    });
  }

  grpc::ServerUnaryReactor* ServerMetadata(grpc::CallbackServerContext* context, const oip::ServerMetadataRequest*,
                                           oip::ServerMetadataResponse* response) override {
    response->set_name("deberta-serve");
    response->set_version(server_version_);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerUnaryReactor* ModelMetadata(grpc::CallbackServerContext* context,
                                          const oip::ModelMetadataRequest* request,
                                          oip::ModelMetadataResponse* response) override {
    return backend_->Unary(context, [context, request, response](Stub& stub, HealthStub&) {
      ModelCalls calls(KserveOrigin(*context), stub, request->name());
      absl::StatusOr<json> metadata = KserveModelMetadata(calls, request->version());
      if (!metadata.ok()) return metadata.status();
      MetadataOf(*metadata, response);
      return absl::OkStatus();
    });
  }

  grpc::ServerUnaryReactor* ModelInfer(grpc::CallbackServerContext* context, const oip::ModelInferRequest* request,
                                       oip::ModelInferResponse* response) override {
    return backend_->Unary(context, [context, request, response](Stub& stub, HealthStub&) {
      absl::StatusOr<json> body = BodyOf(*request);
      if (!body.ok()) return body.status();
      ModelCalls calls(KserveOrigin(*context), stub, request->model_name());
      absl::StatusOr<json> answer = KserveInfer(calls, request->model_version(), *body);
      if (!answer.ok()) return answer.status();
      AnswerOf(*answer, request->raw_input_contents_size() > 0, response);
      return absl::OkStatus();
    });
  }

 private:
  GrpcAdapterBackend* const backend_;
  const std::string server_version_;
};

KserveGrpcService::KserveGrpcService(GrpcAdapterBackend* backend, std::string server_version)
    : impl_(std::make_unique<Impl>(backend, std::move(server_version))) {}

KserveGrpcService::~KserveGrpcService() = default;

grpc::Service* KserveGrpcService::service() { return impl_.get(); }

}  // namespace deberta::service
