// Closed-loop load against a server.
#include "tools/load_generator.h"

#include <iostream>
#include <mutex>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "tools/bench_common.h"
#include "tools/grpc_client.h"

ABSL_FLAG(std::string, endpoint, "classify", "bench: classify or fill-mask");
ABSL_FLAG(std::string, concurrency, "8", "bench: concurrent clients, or a comma-separated sweep");
ABSL_FLAG(int, mask_id, 4, "bench: mask id placed in fill-mask sequences");

namespace deberta::tools {
namespace {

namespace pb = serving::v1;

LevelResult RunLevel(const std::shared_ptr<grpc::Channel>& channel, int concurrency) {
  LevelResult result;
  result.level = concurrency;
  std::mutex mu;
  const bool fill = absl::GetFlag(FLAGS_endpoint) == "fill-mask";
  const absl::Time start = absl::Now();
  const absl::Time end = start + absl::GetFlag(FLAGS_duration);
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
  return result;
}

}  // namespace

int BenchCommand() {
  auto channel = MakeChannel();
  std::vector<LevelResult> results;
  for (absl::string_view level : absl::StrSplit(absl::GetFlag(FLAGS_concurrency), ',', absl::SkipEmpty())) {
    int concurrency;
    if (!absl::SimpleAtoi(level, &concurrency) || concurrency < 1) {
      std::cerr << "bad --concurrency value '" << level << "'\n";
      return 2;
    }
    results.push_back(RunLevel(channel, concurrency));
  }
  return PrintResults(std::move(results), "concurrency");
}

}  // namespace deberta::tools
