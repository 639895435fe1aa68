// deberta-cli client commands. Sequences are given as token ids:
//   deberta-cli classify --server=localhost:50051 --sequences="1 17 42 2;1 9 2"
//   deberta-cli fill-mask --sequences="1 17 4 2" --top_k=5
//   deberta-cli bench --concurrency=1,8,32 --duration=10s --min_len=16 --max_len=64
// --server accepts any gRPC target; with --lb=round_robin and a
// dns:///headless-service:50051 target, requests spread over every pod.
#include "service/client/client_commands.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

ABSL_FLAG(std::string, server, "localhost:50051", "client: gRPC target of the server");
ABSL_FLAG(std::string, lb, "", "client: load-balancing policy, e.g. round_robin over a headless service");
ABSL_FLAG(std::string, sequences, "", "client: token ids, space-separated, sequences split by ';'");
ABSL_FLAG(int, top_k, 0, "client: labels (classify) or candidates (fill-mask) to return");
ABSL_FLAG(std::string, health_service, "", "health: service name ('' = whole server)");
ABSL_FLAG(std::string, endpoint, "classify", "bench: classify or fill-mask");
ABSL_FLAG(std::string, concurrency, "8", "bench: concurrent clients, or a comma-separated sweep");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10), "bench: duration of each concurrency level");
ABSL_FLAG(int, min_len, 16, "bench: shortest sequence (uniform between min_len and max_len)");
ABSL_FLAG(int, max_len, 64, "bench: longest sequence");
ABSL_FLAG(int, vocab, 1000, "bench: token ids are drawn from [5, vocab)");
ABSL_FLAG(int, mask_id, 4, "bench: mask id placed in fill-mask sequences");
ABSL_FLAG(bool, json, false, "bench: print JSON instead of a table");
ABSL_FLAG(int, batch_size, 32, "engine-bench: sequences per engine call");

namespace deberta::service {
namespace {

namespace pb = deberta::serving::v1;

std::shared_ptr<grpc::Channel> MakeChannel() {
  grpc::ChannelArguments args;
  if (!absl::GetFlag(FLAGS_lb).empty()) args.SetLoadBalancingPolicyName(absl::GetFlag(FLAGS_lb));
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel(absl::GetFlag(FLAGS_server), grpc::InsecureChannelCredentials(), args);
}

bool ParseSequences(std::vector<std::vector<int>>* out) {
  for (absl::string_view part : absl::StrSplit(absl::GetFlag(FLAGS_sequences), ';', absl::SkipWhitespace())) {
    std::vector<int> ids;
    for (absl::string_view token : absl::StrSplit(part, ' ', absl::SkipWhitespace())) {
      int id;
      if (!absl::SimpleAtoi(token, &id)) {
        std::cerr << "bad token id '" << token << "'\n";
        return false;
      }
      ids.push_back(id);
    }
    out->push_back(ids);
  }
  if (out->empty()) std::cerr << "--sequences is required (e.g. --sequences=\"1 17 42 2\")\n";
  return !out->empty();
}

int Report(const grpc::Status& status) {
  std::cerr << "error: " << status.error_code() << " " << status.error_message() << "\n";
  return 1;
}

int Classify() {
  std::vector<std::vector<int>> sequences;
  if (!ParseSequences(&sequences)) return 2;
  pb::ClassifyRequest request;
  request.set_request_id("cli");
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  for (const auto& ids : sequences) {
    *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
  }
  pb::ClassifyResponse response;
  grpc::ClientContext context;
  auto status = pb::InferenceService::NewStub(MakeChannel())->Classify(&context, request, &response);
  if (!status.ok()) return Report(status);
  for (int i = 0; i < response.results_size(); ++i) {
    std::cout << "sequence " << i << ":";
    for (const auto& l : response.results(i).labels()) {
      std::cout << "  " << l.label() << " " << l.probability();
    }
    std::cout << "\n";
  }
  return 0;
}

int FillMask() {
  std::vector<std::vector<int>> sequences;
  if (!ParseSequences(&sequences)) return 2;
  pb::FillMaskRequest request;
  request.set_request_id("cli");
  request.set_top_k(absl::GetFlag(FLAGS_top_k));
  for (const auto& ids : sequences) {
    *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
  }
  pb::FillMaskResponse response;
  grpc::ClientContext context;
  auto status = pb::InferenceService::NewStub(MakeChannel())->FillMask(&context, request, &response);
  if (!status.ok()) return Report(status);
  for (int i = 0; i < response.results_size(); ++i) {
    for (const auto& p : response.results(i).predictions()) {
      std::cout << "sequence " << i << " position " << p.position() << ":";
      for (const auto& c : p.candidates()) std::cout << "  " << c.token_id() << " " << c.probability();
      std::cout << "\n";
    }
  }
  return 0;
}

int Info() {
  pb::ModelInfo info;
  grpc::ClientContext context;
  auto status = pb::InferenceService::NewStub(MakeChannel())->GetModelInfo(&context, {}, &info);
  if (!status.ok()) return Report(status);
  std::cout << info.DebugString();
  return 0;
}

int Health() {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_health_service));
  grpc::health::v1::HealthCheckResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  auto status = grpc::health::v1::Health::NewStub(MakeChannel())->Check(&context, request, &response);
  if (!status.ok()) return Report(status);
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

struct LevelResult {
  int concurrency = 0;  // The batch size, for engine-bench.
  double seconds = 0;
  int64_t ok = 0, tokens = 0;
  std::map<std::string, int64_t> errors;
  std::vector<double> latencies_ms;
  double MeanMs() const {
    double sum = 0;
    for (double ms : latencies_ms) sum += ms;
    return latencies_ms.empty() ? 0 : sum / static_cast<double>(latencies_ms.size());
  }
  double Percentile(double p) const {
    if (latencies_ms.empty()) return 0;
    return latencies_ms[std::min(latencies_ms.size() - 1, static_cast<size_t>(p * latencies_ms.size()))];
  }
};

// Benchmark sequences: [CLS] random ids [SEP], lengths uniform in
// [--min_len, --max_len]. Each stream (one per client) is reproducible.
class BenchSequences {
 public:
  explicit BenchSequences(uint32_t stream)
      : rng_(1234 + stream),
        length_(std::max(3, absl::GetFlag(FLAGS_min_len)),
                std::max(std::max(3, absl::GetFlag(FLAGS_min_len)), absl::GetFlag(FLAGS_max_len))),
        token_(5, absl::GetFlag(FLAGS_vocab) - 1) {}

  std::vector<int> Next() {
    const int len = length_(rng_);
    std::vector<int> ids{1};
    for (int i = 1; i < len - 1; ++i) ids.push_back(token_(rng_));
    ids.push_back(2);
    return ids;
  }

 private:
  std::mt19937 rng_;
  std::uniform_int_distribution<int> length_, token_;
};

LevelResult BenchLevel(const std::shared_ptr<grpc::Channel>& channel, int concurrency) {
  LevelResult result;
  result.concurrency = concurrency;
  std::mutex mu;
  const bool fill = absl::GetFlag(FLAGS_endpoint) == "fill-mask";
  const absl::Time end = absl::Now() + absl::GetFlag(FLAGS_duration);
  const absl::Time start = absl::Now();
  std::vector<std::thread> workers;
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&, w] {
      auto stub = pb::InferenceService::NewStub(channel);
      BenchSequences sequences(w);
      while (absl::Now() < end) {
        std::vector<int> ids = sequences.Next();
        const int len = static_cast<int>(ids.size());
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        grpc::Status status;
        const absl::Time t0 = absl::Now();
        if (fill) {
          ids[len / 2] = absl::GetFlag(FLAGS_mask_id);
          pb::FillMaskRequest request;
          *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
          pb::FillMaskResponse response;
          status = stub->FillMask(&context, request, &response);
        } else {
          pb::ClassifyRequest request;
          *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
          pb::ClassifyResponse response;
          status = stub->Classify(&context, request, &response);
        }
        const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
        std::lock_guard<std::mutex> lock(mu);
        if (status.ok()) {
          ++result.ok;
          result.tokens += len;
          result.latencies_ms.push_back(ms);
        } else {
          ++result.errors[absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()))];
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::sort(result.latencies_ms.begin(), result.latencies_ms.end());
  return result;
}

// Prints results as a table or JSON; `unit` names the first column
// ("concurrency" for bench, "batch_size" for engine-bench). Returns the
// exit code: 1 if any request failed.
int PrintResults(const std::vector<LevelResult>& results, const std::string& unit) {
  if (absl::GetFlag(FLAGS_json)) {
    std::vector<std::string> items;
    for (const auto& r : results) {
      std::vector<std::string> errors;
      for (const auto& [code, n] : r.errors) errors.push_back(absl::StrCat("\"", code, "\": ", n));
      items.push_back(absl::StrCat(
          "{\"", unit, "\": ", r.concurrency, ", \"seconds\": ", r.seconds, ", \"ok\": ", r.ok,
          ", \"sequences_per_s\": ", r.ok / r.seconds, ", \"tokens_per_s\": ", r.tokens / r.seconds,
          ", \"mean_ms\": ", r.MeanMs(), ", \"p50_ms\": ", r.Percentile(0.5), ", \"p90_ms\": ", r.Percentile(0.9),
          ", \"p99_ms\": ", r.Percentile(0.99), ", \"errors\": {", absl::StrJoin(errors, ", "), "}}"));
    }
    std::cout << "[" << absl::StrJoin(items, ",\n ") << "]\n";
  } else {
    std::printf("%-12s seq/s     tokens/s   p50_ms   p90_ms   p99_ms   ok       errors\n", unit.c_str());
    for (const auto& r : results) {
      std::vector<std::string> errors;
      for (const auto& [code, n] : r.errors) errors.push_back(absl::StrCat(code, "=", n));
      std::printf("%-12d %-9.1f %-10.1f %-8.2f %-8.2f %-8.2f %-8lld %s\n", r.concurrency, r.ok / r.seconds,
                  r.tokens / r.seconds, r.Percentile(0.5), r.Percentile(0.9), r.Percentile(0.99),
                  static_cast<long long>(r.ok), absl::StrJoin(errors, ",").c_str());
    }
  }
  int64_t errors = 0;
  for (const auto& r : results) {
    for (const auto& [code, n] : r.errors) errors += n;
  }
  return errors == 0 ? 0 : 1;
}

int Bench() {
  auto channel = MakeChannel();
  std::vector<LevelResult> results;
  for (absl::string_view level : absl::StrSplit(absl::GetFlag(FLAGS_concurrency), ',', absl::SkipEmpty())) {
    int concurrency;
    if (!absl::SimpleAtoi(level, &concurrency) || concurrency < 1) {
      std::cerr << "bad --concurrency value '" << level << "'\n";
      return 2;
    }
    results.push_back(BenchLevel(channel, concurrency));
  }
  return PrintResults(results, "concurrency");
}

// The engine alone, in one thread, on batches of --batch_size sequences
// drawn like bench's. Latencies are per engine call.
int EngineBench(const EngineMaker& make_engine) {
  const int batch_size = absl::GetFlag(FLAGS_batch_size);
  if (batch_size < 1) {
    std::cerr << "--batch_size must be >= 1\n";
    return 2;
  }
  auto engine = make_engine();
  if (!engine.ok()) {
    std::cerr << "engine-bench: " << engine.status() << "\n";
    return 1;
  }
  BenchSequences sequences(0);
  auto next_batch = [&] {
    std::vector<model::Sequence> batch(batch_size);
    for (auto& s : batch) {
      std::vector<int> ids = sequences.Next();
      s.token_ids.assign(ids.begin(), ids.end());
    }
    return batch;
  };
  if (auto warm = (*engine)->Classify(next_batch()); !warm.ok()) {
    std::cerr << "engine-bench: " << warm.status() << "\n";
    return 1;
  }
  LevelResult result;
  result.concurrency = batch_size;
  const absl::Time start = absl::Now(), end = start + absl::GetFlag(FLAGS_duration);
  while (absl::Now() < end) {
    std::vector<model::Sequence> batch = next_batch();
    const absl::Time t0 = absl::Now();
    auto out = (*engine)->Classify(batch);
    const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
    if (!out.ok()) {
      ++result.errors[absl::StatusCodeToString(out.status().code())];
      continue;
    }
    result.ok += batch_size;
    for (const auto& s : batch) result.tokens += static_cast<int64_t>(s.token_ids.size());
    result.latencies_ms.push_back(ms);
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  std::sort(result.latencies_ms.begin(), result.latencies_ms.end());
  return PrintResults({result}, "batch_size");
}

}  // namespace

int RunClientCommand(const std::string& command, const std::vector<std::string>& args,
                     const EngineMaker& make_engine) {
  if (!args.empty()) {
    std::cerr << "unexpected argument '" << args.front() << "'\n";
    return 2;
  }
  if (command == "classify") return Classify();
  if (command == "fill-mask") return FillMask();
  if (command == "info") return Info();
  if (command == "health") return Health();
  if (command == "bench") return Bench();
  if (command == "engine-bench") return EngineBench(make_engine);
  std::cerr << "unknown command '" << command
            << "' (run, make-random-model, classify, fill-mask, info, health, bench, engine-bench)\n";
  return 2;
}

}  // namespace deberta::service
