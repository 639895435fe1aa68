// The CPU backend's probe and choice (see cpu_backend.h).
#include "model/torch/cpu_backend.h"


#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#ifdef DEBERTA_WITH_ONEDNN
#include "model/torch/onednn_engine.h"
#endif

namespace deberta::model {
namespace {

// ISA ceilings in oneDNN's order: each allows what the ones before allow.
enum class IsaCap { kBaseline, kAvx2, kAvx2Vnni, kAvx512, kAvx512Vnni, kAvx512Bf16, kAmx, kAll };

std::string Upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

// oneDNN's ISA names (ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA), as its
// documentation lists them; an unknown name caps nothing (oneDNN ignores it).
IsaCap OnednnCap(const std::string& value) {
  const std::string name = Upper(value);
  if (name == "SSE41" || name == "AVX") return IsaCap::kBaseline;
  if (name == "AVX2") return IsaCap::kAvx2;
  if (name == "AVX2_VNNI" || name == "AVX2_VNNI_2") return IsaCap::kAvx2Vnni;
  if (name == "AVX512_CORE") return IsaCap::kAvx512;
  if (name == "AVX512_CORE_VNNI") return IsaCap::kAvx512Vnni;
  if (name == "AVX512_CORE_BF16" || name == "AVX512_CORE_FP16" || name == "AVX10_1_512") return IsaCap::kAvx512Bf16;
  return IsaCap::kAll;  // AVX512_CORE_AMX..., ALL, or unknown.
}

// ATen's ATEN_CPU_CAPABILITY: default, avx2 or avx512 (others: no cap).
IsaCap AtenCap(const std::string& value) {
  const std::string name = Upper(value);
  if (name == "DEFAULT") return IsaCap::kBaseline;
  if (name == "AVX2") return IsaCap::kAvx2;
  if (name == "AVX512") return IsaCap::kAmx;  // ATen's widest; oneDNN's own caps are separate.
  return IsaCap::kAll;
}

struct Caps {
  IsaCap level = IsaCap::kAll;
  std::string text;  // "NAME=value ..." of the variables in force.
};

Caps ReadCaps() {
  Caps caps;
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    const IsaCap cap = std::string(name) == "ATEN_CPU_CAPABILITY" ? AtenCap(value) : OnednnCap(value);
    caps.level = std::min(caps.level, cap);
    caps.text += (caps.text.empty() ? "" : " ") + std::string(name) + "=" + value;
  }
  return caps;
}

// The processor's flags from /proc/cpuinfo (the kernel's view, which also
// says whether the OS enabled AVX-512 and AMX state); cpuid by the
// compiler's builtins where the file is missing.
void ReadHardware(CpuProbe* probe) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::string> flags;
  std::string line;
  while (std::getline(cpuinfo, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    if (key == "model name" && probe->cpu_model.empty()) probe->cpu_model = line.substr(colon + 2);
    if (key == "flags" && flags.empty()) {
      std::istringstream words(line.substr(colon + 1));
      for (std::string word; words >> word;) flags.insert(word);
    }
  }
  CpuFeatures& hw = probe->hardware;
  if (!flags.empty()) {
    auto has = [&](const char* flag) { return flags.count(flag) > 0; };
    hw.avx2_fma = has("avx2") && has("fma");
    hw.avx512 = has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq");
    hw.avx512_vnni = hw.avx512 && has("avx512_vnni");
    hw.avx_vnni = hw.avx2_fma && has("avx_vnni");
    hw.avx512_bf16 = hw.avx512 && has("avx512_bf16");
    hw.amx = hw.avx512 && has("amx_tile") && has("amx_int8") && has("amx_bf16");
  } else {
#if defined(__x86_64__)
    hw.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    hw.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    hw.avx512_vnni = hw.avx512 && __builtin_cpu_supports("avx512vnni");
    hw.avx512_bf16 = hw.avx512 && __builtin_cpu_supports("avx512bf16");
#endif
  }
  if (probe->cpu_model.empty()) probe->cpu_model = "unknown";
}

CpuFeatures Capped(const CpuFeatures& hw, IsaCap cap) {
  CpuFeatures usable;
  usable.avx2_fma = hw.avx2_fma && cap >= IsaCap::kAvx2;
  usable.avx_vnni = hw.avx_vnni && cap >= IsaCap::kAvx2Vnni;
  usable.avx512 = hw.avx512 && cap >= IsaCap::kAvx512;
  usable.avx512_vnni = hw.avx512_vnni && cap >= IsaCap::kAvx512Vnni;
  usable.avx512_bf16 = hw.avx512_bf16 && cap >= IsaCap::kAvx512Bf16;
  usable.amx = hw.amx && cap >= IsaCap::kAmx;
  return usable;
}

// ATen's kernel level. It picks the widest it was built for within
// ATEN_CPU_CAPABILITY and the CPU (Debian's LibTorch: AVX2 at most); the
// choice is not exported by LibTorch 1.13, so this names what it can be.
std::string AtenCapabilityName(const CpuFeatures& hardware) {
  if (const char* value = std::getenv("ATEN_CPU_CAPABILITY"); value != nullptr && *value != '\0') {
    return std::string(value) + " (ATEN_CPU_CAPABILITY)";
  }
  return hardware.avx512 ? "avx512 or avx2 (as built)" : hardware.avx2_fma ? "avx2" : "default";
}

#ifdef DEBERTA_WITH_ONEDNN
using dnnl::memory;

std::string OnednnIsaName() {
  // oneDNN's dnnl_cpu_isa_t values are bit sets; the ones it dispatches to.
  switch (static_cast<unsigned>(dnnl_get_effective_cpu_isa())) {
    case 0x1: return "sse41";
    case 0x3: return "avx";
    case 0x7: return "avx2";
    case 0xf: return "avx2_vnni";
    case 0x27: return "avx512_core";
    case 0x67: return "avx512_core_vnni";
    case 0xe7: return "avx512_core_bf16";
    case 0x3e7: return "avx512_core_amx";
    default: break;
  }
  std::ostringstream hex;
  hex << "isa 0x" << std::hex << static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  return hex.str();
}

// The implementation oneDNN picks for src [dims of a] x weights -> dst in
// these types, or "" if it has none. `any_weights`: it may choose the
// weights' layout (what packing does).
std::string MatmulKernel(const memory::dims& a, const memory::dims& b, const memory::dims& c, memory::data_type src,
                         memory::data_type weights, memory::data_type dst, bool any_weights) {
  const memory::format_tag plain = a.size() == 3 ? memory::format_tag::abc : memory::format_tag::ab;
  try {
    const memory::desc src_md(a, src, plain), dst_md(c, dst, plain);
    const memory::desc weights_md(b, weights, any_weights ? memory::format_tag::any : plain);
#if DNNL_VERSION_MAJOR >= 3
    const dnnl::matmul::primitive_desc pd(OnednnCpuEngine(), src_md, weights_md, dst_md);
#else
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, weights_md, dst_md), OnednnCpuEngine());
#endif
    return pd.impl_info_str();
  } catch (const dnnl::error&) {
    return "";
  }
}

bool IsBrgemm(const std::string& kernel) { return kernel.rfind("brg", 0) == 0; }

void ProbeOnednn(CpuProbe* probe) {
  const dnnl_version_t* version = dnnl_version();
  probe->onednn_version =
      std::to_string(version->major) + "." + std::to_string(version->minor) + "." + std::to_string(version->patch);
  probe->onednn_isa = OnednnIsaName();
  using dt = memory::data_type;
  // Shapes of deberta-base's products: the answer is about the ISA, not them.
  const memory::dims rows{128, 768}, weights{768, 768}, out{128, 768};
  probe->onednn_packed_float32 = IsBrgemm(MatmulKernel(rows, weights, out, dt::f32, dt::f32, dt::f32, true));
  probe->onednn_packed_bfloat16 = IsBrgemm(MatmulKernel(rows, weights, out, dt::bf16, dt::bf16, dt::f32, true));
  probe->onednn_int8_vnni = IsBrgemm(MatmulKernel(rows, weights, out, dt::u8, dt::s8, dt::f32, true));
  probe->onednn_bfloat16_matmul =
      !MatmulKernel({12, 128, 64}, {12, 64, 128}, {12, 128, 128}, dt::bf16, dt::bf16, dt::f32, false).empty();
}
#endif

CpuProbe MakeProbe() {
  CpuProbe probe;
  ReadHardware(&probe);
  const Caps caps = ReadCaps();
  probe.caps = caps.text;
  probe.usable = Capped(probe.hardware, caps.level);
  probe.aten_capability = AtenCapabilityName(probe.hardware);
#ifdef DEBERTA_WITH_ONEDNN
  ProbeOnednn(&probe);
#endif
  return probe;
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : separator) + part;
  return out;
}

CpuKernelChoice Choose(const CpuProbe& probe, CpuKernelMode mode) {
#ifdef DEBERTA_WITH_ONEDNN
  constexpr bool kOnednn = true;
#else
  constexpr bool kOnednn = false;
#endif
  CpuKernelChoice c;
  std::vector<std::string> why;
  // kAuto.
  c.float32_linear = probe.onednn_packed_float32 ? LinearKernel::kOnednnPacked
                     : kOnednn                   ? LinearKernel::kOnednnSgemm
                                                 : LinearKernel::kLibTorch;
  c.bfloat16_linear = probe.onednn_packed_bfloat16 ? LinearKernel::kOnednnPacked : LinearKernel::kLibTorch;
  // VNNI sums u8 x s8 pairs in 32 bits; without it they go through 16-bit
  // sums that saturate (measured: MLM logits off by 3.1 against a 0.6
  // budget); 7-bit weights, which cannot, measured 0.65-0.73. Activations
  // split into positive and negative parts (at most 127 each) cannot
  // either, on 8-bit weights: within the budget (docs/cpu-backend.md).
  const bool vnni = kOnednn ? probe.onednn_int8_vnni : probe.usable.vnni();
  c.int8_linear = vnni      ? (kOnednn ? Int8Kernel::kOnednn : Int8Kernel::kLibTorch)
                  : kOnednn ? Int8Kernel::kOnednnNoVnni
                            : Int8Kernel::kWeightOnly;
  c.fused_attention_float32 = kOnednn;
  c.fused_attention_bfloat16 = probe.onednn_bfloat16_matmul;
  c.sgemm_products = kOnednn;
  c.avx2_kernels = probe.usable.avx2_fma;
  c.avx512_kernels = probe.usable.avx512;
  c.int8_other_products = probe.usable.avx512_bf16 && probe.onednn_bfloat16_matmul ? at::kBFloat16 : at::kFloat;
  c.bfloat16_as_float32 = kOnednn && !probe.onednn_packed_bfloat16 && !probe.onednn_bfloat16_matmul;
  if (!kOnednn) why.push_back("built without oneDNN: LibTorch's products");
  if (kOnednn && !probe.onednn_packed_float32) why.push_back("oneDNN has no packed float32 kernel here");
  if (kOnednn && !probe.onednn_packed_bfloat16) why.push_back("no packed bfloat16 kernel (needs AVX-512)");
  if (c.bfloat16_as_float32) {
    why.push_back("no oneDNN bfloat16 kernels: bfloat16 runs as float32 (LibTorch's own: 9 tokens/s)");
  } else if (kOnednn && !probe.onednn_bfloat16_matmul) {
    why.push_back("no oneDNN bfloat16 matmul: bfloat16 attention op by op");
  }
  if (!vnni) why.push_back(kOnednn ? "no int8 VNNI kernel: activations split per sign (no saturating sums)" : "no int8 VNNI kernel: int8 weights, float32 products");
  if (!probe.usable.avx2_fma) why.push_back("no AVX2+FMA: portable kernels");
  switch (mode) {
    case CpuKernelMode::kAuto: break;
    case CpuKernelMode::kPortable:
      c.avx2_kernels = c.avx512_kernels = false;
      why.push_back("forced portable");
      break;
    case CpuKernelMode::kUnpacked:
      if (c.float32_linear == LinearKernel::kOnednnPacked) c.float32_linear = LinearKernel::kOnednnSgemm;
      c.bfloat16_linear = LinearKernel::kLibTorch;
      why.push_back("forced unpacked");
      break;
    case CpuKernelMode::kNoVnni:
      c.int8_linear = kOnednn ? Int8Kernel::kOnednnNoVnni : Int8Kernel::kWeightOnly;
      c.int8_other_products = at::kFloat;
      why.push_back("forced int8 without VNNI");
      break;
    case CpuKernelMode::kLibTorch:
      c.float32_linear = c.bfloat16_linear = LinearKernel::kLibTorch;
      if (c.int8_linear == Int8Kernel::kOnednn) c.int8_linear = Int8Kernel::kLibTorch;
      if (c.int8_linear == Int8Kernel::kOnednnNoVnni) c.int8_linear = Int8Kernel::kWeightOnly;
      c.fused_attention_float32 = c.fused_attention_bfloat16 = c.sgemm_products = false;
      c.avx2_kernels = c.avx512_kernels = false;
      // bfloat16 products with LibTorch's int8 layers put case b's MLM
      // logits past the int8 golden bound (0.65 > 0.6); float32 is within.
      c.int8_other_products = at::kFloat;
      why.push_back("forced LibTorch only");
      break;
  }
  c.reasons = Join(why, "; ");
  return c;
}

const char* LinearName(LinearKernel kernel) {
  switch (kernel) {
    case LinearKernel::kOnednnPacked: return "oneDNN packed";
    case LinearKernel::kOnednnSgemm: return "oneDNN sgemm";
    case LinearKernel::kLibTorch: return "LibTorch";
  }
  return "?";
}

const char* Int8Name(Int8Kernel kernel) {
  switch (kernel) {
    case Int8Kernel::kOnednn: return "oneDNN";
    case Int8Kernel::kLibTorch: return "LibTorch";
    case Int8Kernel::kOnednnNoVnni: return "oneDNN without VNNI, activations split per sign up to 64 rows";
    case Int8Kernel::kWeightOnly: return "int8 weights, float32 products";
  }
  return "?";
}

bool SameChoice(const CpuKernelChoice& a, const CpuKernelChoice& b) {
  return a.float32_linear == b.float32_linear && a.bfloat16_linear == b.bfloat16_linear &&
         a.int8_linear == b.int8_linear &&
         a.fused_attention_float32 == b.fused_attention_float32 &&
         a.fused_attention_bfloat16 == b.fused_attention_bfloat16 && a.sgemm_products == b.sgemm_products &&
         a.avx2_kernels == b.avx2_kernels && a.avx512_kernels == b.avx512_kernels &&
         a.int8_other_products == b.int8_other_products && a.bfloat16_as_float32 == b.bfloat16_as_float32;
}

// In the enum's order (CpuKernelsFor indexes by it).
constexpr std::array<CpuKernelMode, 5> kModes{CpuKernelMode::kAuto, CpuKernelMode::kPortable, CpuKernelMode::kUnpacked,
                                              CpuKernelMode::kNoVnni, CpuKernelMode::kLibTorch};

std::atomic<const CpuKernelChoice*> g_forced{nullptr};

}  // namespace

std::string CpuFeatures::Names() const {
  std::vector<std::string> names;
  if (avx2_fma) names.push_back("avx2 fma");
  if (avx_vnni) names.push_back("avx_vnni");
  if (avx512) names.push_back("avx512");
  if (avx512_vnni) names.push_back("avx512_vnni");
  if (avx512_bf16) names.push_back("avx512_bf16");
  if (amx) names.push_back("amx");
  return names.empty() ? "baseline" : Join(names, " ");
}

const CpuProbe& ProbeCpu() {
  static const CpuProbe* probe = new CpuProbe(MakeProbe());
  return *probe;
}

std::string CpuKernelChoice::Describe() const {
  std::ostringstream out;
  out << "linear float32 " << LinearName(float32_linear) << ", bfloat16 " << LinearName(bfloat16_linear)
      << ", int8 " << Int8Name(int8_linear) << "; attention float32 "
      << (fused_attention_float32 ? "fused" : "op by op") << ", bfloat16 "
      << (fused_attention_bfloat16 ? "fused" : "op by op") << "; int8 other products "
      << c10::toString(int8_other_products) << (bfloat16_as_float32 ? "; bfloat16 runs as float32" : "")
      << "; own kernels "
      << (avx512_kernels ? "AVX-512/AVX2" : avx2_kernels ? "AVX2" : "portable");
  if (!reasons.empty()) out << " (" << reasons << ")";
  return out.str();
}

std::string DescribeCpuBackend() {
  const CpuProbe& probe = ProbeCpu();
  std::ostringstream out;
  out << "CPU " << probe.cpu_model << ": " << probe.usable.Names();
  if (!probe.caps.empty()) out << " [" << probe.caps << "; the CPU has " << probe.hardware.Names() << "]";
  out << "; oneDNN " << (probe.onednn_version.empty() ? "not built in" : probe.onednn_version + " " + probe.onednn_isa)
      << "; ATen " << probe.aten_capability << "; " << CpuKernels().Describe();
  return out.str();
}

const char* CpuKernelModeName(CpuKernelMode mode) {
  switch (mode) {
    case CpuKernelMode::kAuto: return "auto";
    case CpuKernelMode::kPortable: return "portable";
    case CpuKernelMode::kUnpacked: return "unpacked";
    case CpuKernelMode::kNoVnni: return "no-vnni";
    case CpuKernelMode::kLibTorch: return "libtorch";
  }
  return "?";
}

const CpuKernelChoice& CpuKernelsFor(CpuKernelMode mode) {
  static const std::array<CpuKernelChoice, kModes.size()>* choices = [] {
    auto* all = new std::array<CpuKernelChoice, kModes.size()>();
    for (size_t i = 0; i < kModes.size(); ++i) (*all)[i] = Choose(ProbeCpu(), kModes[i]);
    return all;
  }();
  return (*choices)[static_cast<size_t>(mode)];
}

std::vector<CpuKernelMode> DistinctCpuKernelModes() {
  std::vector<CpuKernelMode> modes{CpuKernelMode::kAuto};
  for (CpuKernelMode mode : kModes) {
    if (mode == CpuKernelMode::kAuto) continue;
    const bool always = mode == CpuKernelMode::kPortable || mode == CpuKernelMode::kLibTorch;
    if (always || !SameChoice(CpuKernelsFor(mode), CpuKernelsFor(CpuKernelMode::kAuto))) modes.push_back(mode);
  }
  return modes;
}

const CpuKernelChoice& CpuKernels() {
  const CpuKernelChoice* forced = g_forced.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : CpuKernelsFor(CpuKernelMode::kAuto);
}

ScopedCpuKernelMode::ScopedCpuKernelMode(CpuKernelMode mode)
    : previous_(g_forced.exchange(&CpuKernelsFor(mode), std::memory_order_acq_rel)) {}

ScopedCpuKernelMode::~ScopedCpuKernelMode() { g_forced.store(previous_, std::memory_order_release); }

bool ForceCpuKernelMode(const std::string& name) {
  for (CpuKernelMode mode : kModes) {
    if (name == CpuKernelModeName(mode)) {
      g_forced.store(&CpuKernelsFor(mode), std::memory_order_release);
      return true;
    }
  }
  return false;
}

at::ScalarType CpuComputeDType(at::ScalarType requested) {
  return requested == at::kBFloat16 && CpuKernels().bfloat16_as_float32 ? at::kFloat : requested;
}

bool UseAvx2Kernels() { return CpuKernels().avx2_kernels; }

}  // namespace deberta::model
