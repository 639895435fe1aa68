// deberta-server: loads a DeBERTa checkpoint (or the demo model) and serves
// it over gRPC until SIGTERM/SIGINT, then drains and exits 0.
#include <csignal>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "model/engine_factory.h"
#include "model/demo_model.h"
#include "service/server.h"
#include "service/special_tokens.h"

ABSL_FLAG(std::string, model, "demo", "Checkpoint folder (config.json + model.safetensors) or 'demo'");
ABSL_FLAG(std::string, listen_address, "0.0.0.0", "Address to listen on");
ABSL_FLAG(int, port, 50051, "gRPC port (0 = pick a free one)");
ABSL_FLAG(int, metrics_port, 9464, "Prometheus /metrics port (-1 = off; 9464, not Prometheus's own 9090)");
ABSL_FLAG(std::string, device, "cpu", "cpu or cuda:N");
ABSL_FLAG(std::string, dtype, "float32", "float32, bfloat16 (CPU with avx512_bf16, GPU) or float16 (GPU)");
ABSL_FLAG(int, threads, 0, "CPU threads for the model (0 = the CPUs this process may use, within its cgroup CPU limit)");
ABSL_FLAG(std::string, emd, "auto", "Fill-mask decoder: auto, emd (Enhanced Mask Decoder) or plain");
ABSL_FLAG(int, max_batch_size, 32, "Most sequences per batch");
ABSL_FLAG(int64_t, max_batch_tokens, 8192, "Most padded tokens (sequences x longest) per batch");
ABSL_FLAG(absl::Duration, batch_timeout, absl::ZeroDuration(),
          "Longest wait for a batch to fill (0: run what is queued as soon as the model is free)");
ABSL_FLAG(std::string, batching, "length_aware",
          "Batch formation: length_aware (similar lengths together) or first_come (arrival order)");
ABSL_FLAG(int, max_message_bytes, 16 << 20, "Largest request message; larger ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_queue_size, 1024, "Most queued sequences per endpoint before RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_sequence_length, 0, "Longest sequence in tokens (0 = the model's limit)");
ABSL_FLAG(bool, truncate, false, "Truncate over-long sequences instead of rejecting them");
ABSL_FLAG(int, max_sequences_per_request, 64, "Most sequences in one request");
ABSL_FLAG(absl::Duration, drain_timeout, absl::Seconds(20), "Time accepted work gets to finish on SIGTERM");
ABSL_FLAG(int, pad_token_id, 0, "Pad id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, cls_token_id, 1, "CLS id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, sep_token_id, 2, "SEP id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, unk_token_id, 3, "UNK id when the checkpoint has no tokenizer files");
ABSL_FLAG(int, mask_token_id, -1, "MASK id when the checkpoint has no tokenizer files");

namespace {

int Fail(const absl::Status& status) {
  std::cerr << "deberta-server: " << status << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("deberta-server --model=DIR|demo [--port=50051] [--metrics_port=9464]");
  absl::ParseCommandLine(argc, argv);

  // Signals are taken by a dedicated thread (sigwait), so shutdown runs
  // outside any signal handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  deberta::model::EngineOptions engine_options;
  engine_options.model = absl::GetFlag(FLAGS_model);
  engine_options.device = absl::GetFlag(FLAGS_device);
  engine_options.num_threads = absl::GetFlag(FLAGS_threads);
  engine_options.max_sequence_length = absl::GetFlag(FLAGS_max_sequence_length);
  auto dtype = deberta::model::ParseComputeDType(absl::GetFlag(FLAGS_dtype));
  if (!dtype.ok()) return Fail(dtype.status());
  engine_options.dtype = *dtype;
  auto emd = deberta::model::ParseEmdMode(absl::GetFlag(FLAGS_emd));
  if (!emd.ok()) return Fail(emd.status());
  engine_options.emd = *emd;

  deberta::service::ServerConfig config;
  config.listen_address = absl::GetFlag(FLAGS_listen_address);
  config.port = absl::GetFlag(FLAGS_port);
  config.metrics_port = absl::GetFlag(FLAGS_metrics_port);
  config.batcher.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  config.batcher.max_batch_tokens = absl::GetFlag(FLAGS_max_batch_tokens);
  config.batcher.batch_timeout = absl::GetFlag(FLAGS_batch_timeout);
  config.batcher.max_enqueued_tasks = absl::GetFlag(FLAGS_max_queue_size);
  const std::string batching = absl::GetFlag(FLAGS_batching);
  if (batching != "length_aware" && batching != "first_come") {
    return Fail(absl::InvalidArgumentError("--batching must be length_aware or first_come, not '" + batching + "'"));
  }
  config.batcher.length_aware = batching == "length_aware";
  config.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  config.drain_timeout = absl::GetFlag(FLAGS_drain_timeout);
  config.service.truncate = absl::GetFlag(FLAGS_truncate);
  config.service.max_sequences_per_request = absl::GetFlag(FLAGS_max_sequences_per_request);
  config.service.server_version = DEBERTA_SERVE_VERSION;
  deberta::service::SpecialTokens defaults{absl::GetFlag(FLAGS_pad_token_id), absl::GetFlag(FLAGS_cls_token_id),
                                           absl::GetFlag(FLAGS_sep_token_id), absl::GetFlag(FLAGS_unk_token_id),
                                           absl::GetFlag(FLAGS_mask_token_id)};
  if (engine_options.model == deberta::model::kDemoModelName) {
    defaults = {deberta::model::kDemoPadId, deberta::model::kDemoClsId, deberta::model::kDemoSepId,
                deberta::model::kDemoUnkId, deberta::model::kDemoMaskId};
    config.service.special_tokens = defaults;
  } else {
    config.service.special_tokens = deberta::service::ReadSpecialTokens(engine_options.model, defaults);
  }
  if (absl::Status s = config.Validate(); !s.ok()) return Fail(s);

  auto engine = deberta::model::CreateTorchEngine(engine_options);
  if (!engine.ok()) return Fail(engine.status());
  const deberta::model::ModelInfo info = (*engine)->info();
  deberta::service::Server server(config, *std::move(engine), std::make_shared<prometheus::Registry>());
  if (absl::Status s = server.Start(); !s.ok()) return Fail(s);
  std::cout << "deberta-server " << DEBERTA_SERVE_VERSION << ": serving " << info.name << " ("
            << info.model_type << ", " << info.device << ", " << info.dtype
            << ", EMD " << (info.emd_enabled ? "on" : "off") << ") on " << config.listen_address << ":"
            << server.port() << ", metrics on :" << server.metrics_port() << std::endl;

  std::thread signal_thread([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::cout << "deberta-server: signal " << signal << ", draining" << std::endl;
    server.Shutdown();
  });
  server.Wait();
  signal_thread.join();
  std::cout << "deberta-server: stopped" << std::endl;
  return 0;
}
