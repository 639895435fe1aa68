// The CPU backend's probe and choice: what it finds is consistent with
// itself, the caps in this process's environment are honoured (CI runs
// the model tests again under ONEDNN_MAX_CPU_ISA=AVX2 DNNL_MAX_CPU_ISA=AVX2
// ATEN_CPU_CAPABILITY=avx2 on an AVX-512 machine, scripts/avx2_check.sh),
// and forcing a mode changes what the kernels ask and gives it back.
#include "model/torch/cpu_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace deberta::model {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

TEST(CpuBackendTest, UsableFeaturesAreTheHardwaresWithinTheCaps) {
  const CpuProbe& probe = ProbeCpu();
  const CpuFeatures &hw = probe.hardware, &usable = probe.usable;
  EXPECT_TRUE(!usable.avx2_fma || hw.avx2_fma);
  EXPECT_TRUE(!usable.avx512 || hw.avx512);
  EXPECT_TRUE(!usable.avx512_vnni || hw.avx512_vnni);
  EXPECT_TRUE(!usable.avx512_bf16 || hw.avx512_bf16);
  EXPECT_TRUE(!usable.amx || hw.amx);
  if (probe.caps.empty()) {
    EXPECT_EQ(usable.Names(), hw.Names());
  }
  EXPECT_FALSE(probe.cpu_model.empty());
}

TEST(CpuBackendTest, AnAvx2CapLeavesNoAvx512KernelAnywhere) {
  if (Env("ONEDNN_MAX_CPU_ISA") != "AVX2" || Env("DNNL_MAX_CPU_ISA") != "AVX2" ||
      Env("ATEN_CPU_CAPABILITY") != "avx2") {
    GTEST_SKIP() << "runs under the AVX2 caps (scripts/avx2_check.sh)";
  }
  const CpuProbe& probe = ProbeCpu();
  EXPECT_FALSE(probe.usable.avx512 || probe.usable.avx512_vnni || probe.usable.avx512_bf16 || probe.usable.amx);
  EXPECT_EQ(probe.usable.avx2_fma, probe.hardware.avx2_fma);
  EXPECT_NE(probe.caps.find("ONEDNN_MAX_CPU_ISA=AVX2"), std::string::npos);
  if (!probe.onednn_version.empty()) {
    EXPECT_EQ(probe.onednn_isa, "avx2");  // oneDNN capped itself too.
    EXPECT_FALSE(probe.onednn_int8_vnni);
    EXPECT_FALSE(probe.onednn_packed_bfloat16);
  }
  const CpuKernelChoice& auto_choice = CpuKernelsFor(CpuKernelMode::kAuto);
  EXPECT_EQ(auto_choice.int8_linear,
            probe.onednn_version.empty() ? Int8Kernel::kWeightOnly : Int8Kernel::kOnednnNoVnni);
  EXPECT_EQ(auto_choice.int8_other_products, at::kFloat);
  EXPECT_FALSE(auto_choice.avx512_kernels);
  EXPECT_EQ(auto_choice.avx2_kernels, probe.hardware.avx2_fma);
}

TEST(CpuBackendTest, EveryModeRunsAndTheForcedOneIsGivenBack) {
  const std::vector<CpuKernelMode> modes = DistinctCpuKernelModes();
  ASSERT_FALSE(modes.empty());
  EXPECT_EQ(modes.front(), CpuKernelMode::kAuto);
  for (CpuKernelMode always : {CpuKernelMode::kPortable, CpuKernelMode::kLibTorch}) {
    EXPECT_NE(std::find(modes.begin(), modes.end(), always), modes.end()) << CpuKernelModeName(always);
  }
  const CpuKernelChoice* before = &CpuKernels();
  {
    ScopedCpuKernelMode libtorch(CpuKernelMode::kLibTorch);
    const CpuKernelChoice& c = CpuKernels();
    EXPECT_EQ(c.float32_linear, LinearKernel::kLibTorch);
    EXPECT_EQ(c.bfloat16_linear, LinearKernel::kLibTorch);
    EXPECT_NE(c.int8_linear, Int8Kernel::kOnednn);
    EXPECT_NE(c.int8_linear, Int8Kernel::kOnednnNoVnni);
    EXPECT_FALSE(c.FusedAttention(at::kFloat) || c.FusedAttention(at::kBFloat16) || c.sgemm_products);
    EXPECT_FALSE(UseAvx2Kernels());
    {
      ScopedCpuKernelMode portable(CpuKernelMode::kPortable);
      EXPECT_FALSE(CpuKernels().avx2_kernels);
      EXPECT_EQ(CpuKernels().fused_attention_float32, CpuKernelsFor(CpuKernelMode::kAuto).fused_attention_float32);
    }
    EXPECT_EQ(&CpuKernels(), &CpuKernelsFor(CpuKernelMode::kLibTorch));
  }
  EXPECT_EQ(&CpuKernels(), before);
  EXPECT_EQ(CpuKernelsFor(CpuKernelMode::kNoVnni).int8_linear,
            ProbeCpu().onednn_version.empty() ? Int8Kernel::kWeightOnly : Int8Kernel::kOnednnNoVnni);
}

TEST(CpuBackendTest, TheStartUpLineNamesTheCpuAndEveryChoice) {
  const std::string line = DescribeCpuBackend();
  for (const char* part : {"CPU ", "oneDNN", "ATen", "linear float32", "bfloat16", "int8", "attention"}) {
    EXPECT_NE(line.find(part), std::string::npos) << part << " missing from: " << line;
  }
}

}  // namespace
}  // namespace deberta::model
