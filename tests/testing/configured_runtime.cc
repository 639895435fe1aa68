// Linked into the test binaries that load models in-process (model_tests,
// e2e_tests): LibTorch's process-wide settings made once before any test,
// by ConfigureRuntime, as deberta-server's main makes them (one thread on
// the main thread, TF32 off, oneDNN as the quantized engine int8 needs).
#include <gtest/gtest.h>

#include "model/runtime.h"

namespace deberta::testing {
namespace {

class ConfiguredRuntime : public ::testing::Environment {
 public:
  void SetUp() override { model::ConfigureRuntime(model::RuntimeOptions{}); }
};

// Registered before main runs: this file is one of the binary's sources.
::testing::Environment* const kConfiguredRuntime = ::testing::AddGlobalTestEnvironment(new ConfiguredRuntime);

}  // namespace
}  // namespace deberta::testing
