// The serialized google.protobuf.FileDescriptorSet of the serving API
// (inference.proto and its imports, with comments), compiled into the
// binary at build time. The OpenAPI document (service/protocols/openapi.h) is made
// from it.
#ifndef DEBERTA_PROTO_DESCRIPTOR_SET_H_
#define DEBERTA_PROTO_DESCRIPTOR_SET_H_

#include <string_view>

namespace deberta::proto {

std::string_view ServingDescriptorSet();

}  // namespace deberta::proto

#endif  // DEBERTA_PROTO_DESCRIPTOR_SET_H_
