// The CPU backend: the one place that decides which kernels run on the
// CPU. It probes the processor once (cpuid, capped the way oneDNN and ATen
// cap themselves: ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA, ATEN_CPU_CAPABILITY),
// asks oneDNN which kernels it really has for our products (by making
// primitives, not by guessing from flags), and from that chooses, per
// dtype, the linear layers' and the attention's implementation:
//
//   float32 linear   oneDNN packed (brgemm)  > oneDNN sgemm   > at::linear
//   bfloat16 linear  oneDNN packed (brgemm)                   > at::linear
//   int8 linear      with VNNI: oneDNN int8 > LibTorch's quantized engine;
//                    without: oneDNN int8 on activations split per sign
//                    (no saturating 16-bit sums) up to 64 rows, else int8
//                    weights widened to float32 (7-bit schemes measured
//                    outside the int8 budget: docs/cpu-backend.md)
//   attention        CpuAttention (oneDNN products, our per-head pass) where
//                    oneDNN makes the dtype's matmul > op by op (LibTorch)
//   bfloat16         as asked where oneDNN has bfloat16 kernels; else float32
//                    (with a start-up warning): LibTorch's own bfloat16
//                    products are no path to serve on (9 tokens/s)
//   our kernels      AVX2 + FMA intrinsics where usable > portable C++
//
// A product oneDNN refuses is a fallback chosen here, never an error at
// serve time. Tests and benchmarks force a mode (ScopedCpuKernelMode); the
// golden tests run under every mode the host supports.
#ifndef DEBERTA_MODEL_TORCH_CPU_BACKEND_H_
#define DEBERTA_MODEL_TORCH_CPU_BACKEND_H_

#include <c10/core/ScalarType.h>

#include <string>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>

// On a function whose body uses AVX2 or FMA intrinsics.
#define DEBERTA_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace deberta::model {

// Instruction sets that choose kernels.
struct CpuFeatures {
  bool avx2_fma = false;
  bool avx512 = false;       // F, BW, VL, DQ: oneDNN's avx512_core
  bool avx512_vnni = false;
  bool avx_vnni = false;     // VNNI on 256-bit registers (Alder Lake, Zen 5)
  bool avx512_bf16 = false;
  bool amx = false;          // AMX tiles for int8 and bf16

  bool vnni() const { return avx512_vnni || avx_vnni; }
  std::string Names() const;  // "avx2 fma avx512 ...", or "baseline"
};

// What this process found, once.
struct CpuProbe {
  std::string cpu_model;        // /proc/cpuinfo's model name
  CpuFeatures hardware;         // cpuid
  CpuFeatures usable;           // hardware within the caps below
  std::string caps;             // the variables in force, "" if none
  std::string onednn_version;   // "" in a build without oneDNN
  std::string onednn_isa;       // what oneDNN dispatches to (its effective ISA)
  std::string aten_capability;  // ATen's kernels: "default", "avx2", "avx512", as far as known
  // oneDNN's kernels, asked by making primitives:
  bool onednn_packed_float32 = false;   // brgemm for float32 products
  bool onednn_packed_bfloat16 = false;  // brgemm for bfloat16 products
  bool onednn_bfloat16_matmul = false;  // any bfloat16 matmul (the attention's)
  bool onednn_int8_vnni = false;        // brgemm for u8 x s8 (VNNI or AMX)
};

// The probe; the first call makes it (a few milliseconds).
const CpuProbe& ProbeCpu();

enum class LinearKernel { kOnednnPacked, kOnednnSgemm, kLibTorch };
// kOnednnNoVnni: oneDNN's int8 kernel without VNNI, on activations split
// into positive and negative parts (int8_no_vnni.h); kWeightOnly: int8
// weights widened to float32 for a float32 product (no oneDNN at all).
enum class Int8Kernel { kOnednn, kLibTorch, kOnednnNoVnni, kWeightOnly };

// The kernels chosen, and why.
struct CpuKernelChoice {
  LinearKernel float32_linear = LinearKernel::kLibTorch;
  LinearKernel bfloat16_linear = LinearKernel::kLibTorch;
  Int8Kernel int8_linear = Int8Kernel::kWeightOnly;
  // CpuAttention for this dtype; else the op-by-op attention.
  bool fused_attention_float32 = false;
  bool fused_attention_bfloat16 = false;
  // The op-by-op attention's float32 batched products on oneDNN's sgemm.
  bool sgemm_products = false;
  // Our intrinsics kernels (position terms, softmax, quantization) in AVX2.
  bool avx2_kernels = false;
  // The same for the activation quantizer's AVX-512 version.
  bool avx512_kernels = false;
  // A bfloat16 network runs in float32: the CPU has no bfloat16 kernels
  // (neither oneDNN's packed nor any oneDNN bfloat16 matmul), and
  // LibTorch's own bfloat16 products ran 90x slower than float32 there.
  bool bfloat16_as_float32 = false;
  // The compute dtype of an int8 network's other products (attention,
  // heads): bfloat16 where the CPU has bf16 instructions and oneDNN a
  // bfloat16 matmul, else float32.
  at::ScalarType int8_other_products = at::kFloat;
  std::string reasons;  // Why, one clause per choice not taken.

  bool FusedAttention(at::ScalarType dtype) const {
    return dtype == at::kFloat ? fused_attention_float32 : dtype == at::kBFloat16 && fused_attention_bfloat16;
  }
  bool PacksLinear(at::ScalarType dtype) const {
    return (dtype == at::kFloat && float32_linear == LinearKernel::kOnednnPacked) ||
           (dtype == at::kBFloat16 && bfloat16_linear == LinearKernel::kOnednnPacked);
  }
  // One line for the start-up log and ModelInfo.
  std::string Describe() const;
};

// The dtype a CPU network computes in when `requested` is asked for:
// float32 for bfloat16 where CpuKernels().bfloat16_as_float32, else as is.
at::ScalarType CpuComputeDType(at::ScalarType requested);

// The probe and the choice in force, one line: "CPU <model>: <usable
// sets> [caps]; oneDNN <version> <isa>; ATen <capability>; <choice>".
std::string DescribeCpuBackend();

// What a test or a benchmark may force; kAuto is what serving uses.
enum class CpuKernelMode {
  kAuto,      // The fastest correct kernels the host has.
  kPortable,  // kAuto with our kernels in portable C++ (no intrinsics).
  kUnpacked,  // kAuto without packed weights (oneDNN's sgemm, at::linear).
  kNoVnni,    // kAuto's int8 as on a CPU without VNNI (float32 products).
  kLibTorch,  // LibTorch's ops only, and portable C++: runs anywhere.
};
const char* CpuKernelModeName(CpuKernelMode mode);
// The modes worth running on this host (kAuto first): each that differs
// from kAuto here. kPortable and kLibTorch always.
std::vector<CpuKernelMode> DistinctCpuKernelModes();

// The choice in force: kAuto's unless a mode was forced.
const CpuKernelChoice& CpuKernels();
// The choice a mode makes on this host.
const CpuKernelChoice& CpuKernelsFor(CpuKernelMode mode);

// Forces `mode` for its lifetime, process-wide (layers packed or quantized
// meanwhile keep what they got). For tests and benchmarks; not for
// concurrent use.
class ScopedCpuKernelMode {
 public:
  explicit ScopedCpuKernelMode(CpuKernelMode mode);
  ~ScopedCpuKernelMode();
  ScopedCpuKernelMode(const ScopedCpuKernelMode&) = delete;
  ScopedCpuKernelMode& operator=(const ScopedCpuKernelMode&) = delete;

 private:
  const CpuKernelChoice* previous_;
};

// For a program's flag (benchmarks): forces the mode named by
// CpuKernelModeName for the rest of the process; false for an unknown name.
bool ForceCpuKernelMode(const std::string& name);

// Whether our AVX2 kernels run now (CpuKernels().avx2_kernels).
bool UseAvx2Kernels();

}  // namespace deberta::model

#endif  // DEBERTA_MODEL_TORCH_CPU_BACKEND_H_
