// OpenAPI from descriptors: messages become schemas, RPCs operations.
#include "service/protocols/openapi.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "proto/descriptor_set.h"
#include "service/protocols/json_routes.h"
#include "service/protocols/openapi_operation.h"
#include "service/status_util.h"

namespace deberta::service {
namespace {

namespace gp = google::protobuf;
using nlohmann::json;

// The leading comment of a descriptor, as written in the proto (each line
// trimmed); empty when it has none.
template <typename Descriptor>
std::string Comment(const Descriptor& descriptor) {
  gp::SourceLocation location;
  if (!descriptor.GetSourceLocation(&location)) return "";
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(location.leading_comments, '\n')) {
    lines.emplace_back(absl::StripAsciiWhitespace(line));
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return absl::StrJoin(lines, "\n");
}

std::string SchemaRef(const gp::Descriptor& message) {
  return absl::StrCat("#/components/schemas/", message.full_name());
}

// Collects every message a schema refers to, then writes each once.
class SchemaWriter {
 public:
  void Add(const gp::Descriptor& message) {
    if (!seen_.insert(message.full_name()).second) return;
    json properties = json::object();
    for (int i = 0; i < message.field_count(); ++i) {
      const gp::FieldDescriptor& field = *message.field(i);
      json schema = FieldSchema(field);
      std::string description = Comment(field);
      if (const gp::OneofDescriptor* oneof = field.real_containing_oneof(); oneof != nullptr) {
        absl::StrAppend(&description, description.empty() ? "" : "\n",
                        "At most one of the fields of `", oneof->name(), "` is set.");
      }
      if (!description.empty()) {
        // OpenAPI 3.0 ignores siblings of $ref: describe through allOf.
        if (schema.contains("$ref")) schema = json{{"allOf", json::array({schema})}};
        // An enum's own description (its values) follows the field's.
        if (schema.contains("description")) description += "\n\n" + schema["description"].get<std::string>();
        schema["description"] = description;
      }
      properties[field.json_name()] = std::move(schema);
    }
    json schema = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
    if (std::string description = Comment(message); !description.empty()) schema["description"] = description;
    schemas_[message.full_name()] = std::move(schema);
  }

  json Take() { return std::move(schemas_); }

 private:
  json FieldSchema(const gp::FieldDescriptor& field) {
    if (field.is_map()) {
      return {{"type", "object"}, {"additionalProperties", FieldSchema(*field.message_type()->map_value())}};
    }
    json item = ScalarOrMessage(field);
    if (field.is_repeated()) return {{"type", "array"}, {"items", std::move(item)}};
    return item;
  }

  json ScalarOrMessage(const gp::FieldDescriptor& field) {
    using T = gp::FieldDescriptor;
    switch (field.cpp_type()) {
      case T::CPPTYPE_INT32: return {{"type", "integer"}, {"format", "int32"}};
      case T::CPPTYPE_UINT32: return {{"type", "integer"}, {"format", "int64"}, {"minimum", 0}};
      // The canonical JSON mapping writes 64-bit integers as strings (and
      // reads numbers too).
      case T::CPPTYPE_INT64:
      case T::CPPTYPE_UINT64: return {{"type", "string"}, {"format", "int64"}};
      case T::CPPTYPE_FLOAT: return {{"type", "number"}, {"format", "float"}};
      case T::CPPTYPE_DOUBLE: return {{"type", "number"}, {"format", "double"}};
      case T::CPPTYPE_BOOL: return {{"type", "boolean"}};
      case T::CPPTYPE_STRING:
        if (field.type() == T::TYPE_BYTES) return {{"type", "string"}, {"format", "byte"}};
        return {{"type", "string"}};
      case T::CPPTYPE_ENUM: {
        json names = json::array();
        const gp::EnumDescriptor& values = *field.enum_type();
        std::string description = Comment(values);
        for (int i = 0; i < values.value_count(); ++i) {
          names.push_back(values.value(i)->name());
          if (std::string comment = Comment(*values.value(i)); !comment.empty()) {
            absl::StrAppend(&description, description.empty() ? "" : "\n", "- ", values.value(i)->name(), ": ",
                            comment);
          }
        }
        json schema = {{"type", "string"}, {"enum", std::move(names)}};
        if (!description.empty()) schema["description"] = description;
        return schema;
      }
      case T::CPPTYPE_MESSAGE:
        Add(*field.message_type());
        return {{"$ref", SchemaRef(*field.message_type())}};
    }
    return json::object();
  }

  std::set<std::string> seen_;
  json schemas_ = json::object();
};

json ErrorSchema() {
  json codes = json::array();
  for (int code = 0; code <= 16; ++code) codes.push_back(GrpcCodeName(static_cast<grpc::StatusCode>(code)));
  return {{"type", "object"},
          {"description", "What failed: the gRPC status code by name (mapped to the HTTP status) and why."},
          {"required", {"code", "message"}},
          {"properties",
           {{"code", {{"type", "string"}, {"enum", std::move(codes)}}}, {"message", {{"type", "string"}}}}}};
}

json ErrorResponse() {
  return {{"description", "The call failed: the HTTP status is the gRPC code's (Google API design guide)."},
          {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
}

json HealthOperation(const std::string& summary) {
  json schema = {{"type", "object"},
                 {"properties", {{"status", {{"type", "string"}, {"enum", {"SERVING", "NOT_SERVING", "UNKNOWN"}}}}}}};
  return {{"get",
           {{"summary", summary},
            {"tags", {"health"}},
            {"security", json::array()},
            {"responses",
             {{"200", {{"description", "Serving."}, {"content", {{"application/json", {{"schema", schema}}}}}}},
              {"503", {{"description", "Not serving."}, {"content", {{"application/json", {{"schema", schema}}}}}}}}}}}};
}

}  // namespace

absl::StatusOr<std::string> MakeOpenApiDocument(const OpenApiOptions& options, std::string_view descriptor_set,
                                                std::string_view service_name) {
  gp::FileDescriptorSet files;
  if (!files.ParseFromArray(descriptor_set.data(), static_cast<int>(descriptor_set.size()))) {
    return absl::InternalError("the embedded descriptor set does not parse");
  }
  gp::DescriptorPool pool;
  for (const gp::FileDescriptorProto& file : files.file()) {
    if (pool.BuildFile(file) == nullptr) {
      return absl::InternalError(absl::StrCat("the embedded descriptor of ", file.name(), " does not build"));
    }
  }
  const gp::ServiceDescriptor* service = pool.FindServiceByName(std::string(service_name));
  if (service == nullptr) {
    return absl::InternalError(absl::StrCat("the descriptor set has no service ", std::string(service_name)));
  }

  SchemaWriter schemas;
  json paths = json::object();
  const json deadline_parameters = json::array(
      {{{"name", kDeadlineHeader},
        {"in", "header"},
        {"required", false},
        {"description", "The call's deadline in milliseconds from now (as a gRPC deadline)."},
        {"schema", {{"type", "integer"}, {"minimum", 1}}}},
       {{"name", kDeadlineParameter},
        {"in", "query"},
        {"required", false},
        {"description", "The same as the header, for clients that cannot set headers."},
        {"schema", {{"type", "integer"}, {"minimum", 1}}}}});
  for (int i = 0; i < service->method_count(); ++i) {
    const gp::MethodDescriptor& method = *service->method(i);
    const std::string_view path = JsonPath(method.name());
    if (path.empty()) {
      return absl::InternalError(absl::StrCat("the RPC ", method.full_name(), " has no HTTP path in json_routes.h"));
    }
    schemas.Add(*method.input_type());
    schemas.Add(*method.output_type());
    const std::string comment = Comment(method);
    json operation = {
        {"operationId", method.name()},
        {"summary", comment.substr(0, comment.find('\n'))},
        {"description", absl::StrCat(comment, "\n\nThe gRPC method ", method.full_name(), " with its JSON mapping.")},
        {"tags", {"inference"}},
        {"parameters", deadline_parameters},
        {"requestBody",
         {{"required", true},
          {"content", {{"application/json", {{"schema", {{"$ref", SchemaRef(*method.input_type())}}}}}}}}},
        {"responses",
         {{"200",
           {{"description", "The answer."},
            {"content", {{"application/json", {{"schema", {{"$ref", SchemaRef(*method.output_type())}}}}}}}}},
          {"default", ErrorResponse()}}}};
    if (IsModelEndpoint(RouteOf(method.name()).endpoint)) {
      // The same call with the model in the path (json_api.cc).
      json per_model = operation;
      per_model["operationId"] = absl::StrCat(method.name(), "OfModel");
      per_model["parameters"].push_back(
          {{"name", "model"},
           {"in", "path"},
           {"required", true},
           {"description", "The model's name (ListModels); the body's model field, if set, must be the same."},
           {"schema", {{"type", "string"}}}});
      paths[absl::StrCat(kModelRoutePrefix, "{model}", std::string(path.substr(3)))] = {{"post", std::move(per_model)}};
    }
    paths[std::string(path)] = {{"post", std::move(operation)}};
  }
  paths[kLivePath] = HealthOperation("Liveness: the process answers.");
  paths[kReadyPath] = HealthOperation(
      "Readiness: every model is loaded and warmed up and the server is not draining; with ?model=NAME, that "
      "model is (404 for a model the server does not know).");
  paths[kOpenApiPath] = {{"get",
                          {{"summary", "This document."},
                           {"tags", {"meta"}},
                           {"security", json::array()},
                           {"responses",
                            {{"200",
                              {{"description", "The OpenAPI document."},
                               {"content", {{"application/json", {{"schema", {{"type", "object"}}}}}}}}}}}}}};

  // The adapters for other servers' APIs (http_protocols.h).
  const json adapters = HttpProtocolsOpenApi(options.protocols);
  for (const auto& item : adapters.items()) paths[item.key()] = item.value();

  json components_schemas = schemas.Take();
  components_schemas["Error"] = ErrorSchema();
  json document = {
      {"openapi", "3.0.3"},
      {"info",
       {{"title", "deberta-serve"},
        {"version", options.server_version.empty() ? "unknown" : options.server_version},
        {"description", absl::StrCat(Comment(*service),
                                     "\n\nEvery RPC of the gRPC service ", service->full_name(),
                                     " as a POST with the same messages in protobuf's JSON mapping.")}}},
      {"tags",
       {{{"name", "inference"}, {"description", "The model's RPCs."}},
        {{"name", "health"}, {"description", "Probes for orchestrators; never need an API key."}},
        {{"name", kCompatibilityTag},
         {"description",
          "Other servers' APIs, for the clients written for them: Hugging Face's Inference API, "
          "text-embeddings-inference, Cohere's rerank, KServe's Open Inference Protocol (v2). Each maps onto the "
          "RPCs above."}},
        {{"name", "meta"}, {"description", "About the API itself."}}}},
      {"paths", std::move(paths)},
      {"components",
       {{"schemas", std::move(components_schemas)},
        {"securitySchemes",
         {{"bearerAuth", {{"type", "http"}, {"scheme", "bearer"}, {"description", "An API key from --api_keys_file."}}}}}}}};
  if (options.api_keys) document["security"] = json::array({{{"bearerAuth", json::array()}}});
  return document.dump(2);
}

absl::StatusOr<std::string> MakeOpenApiDocument(const OpenApiOptions& options) {
  return MakeOpenApiDocument(options, proto::ServingDescriptorSet(), "deberta.serving.v1.InferenceService");
}

}  // namespace deberta::service
