// Closed-loop load against a server.
#include "tools/load_generator.h"

#include <iostream>
#include <mutex>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "deberta/serving/v1/inference.grpc.pb.h"
#include "tools/bench_common.h"
#include "tools/grpc_client.h"

ABSL_FLAG(std::string, endpoint, "classify", "bench: classify or fill-mask");
ABSL_FLAG(std::string, concurrency, "8", "bench: concurrent clients, or a comma-separated sweep");
ABSL_FLAG(int, mask_id, 4, "bench: mask id placed in fill-mask sequences");
ABSL_FLAG(bool, send_text, false,
          "bench: send text (made from random ids of the server's tokenizer through Detokenize) instead of ids");

namespace deberta::tools {
namespace {

namespace pb = serving::v1;

// Texts for --send_text: each stream's sequences, detokenized by the server
// (so they are made of its tokenizer's own vocabulary), with the count of
// ids they came from.
struct BenchText {
  std::string text;
  int ids = 0;
};

absl::StatusOr<std::vector<BenchText>> MakeTexts(const std::shared_ptr<grpc::Channel>& channel, uint32_t stream,
                                                int count) {
  auto stub = pb::InferenceService::NewStub(channel);
  pb::ModelInfo info;
  {
    grpc::ClientContext context;
    PrepareContext(&context);
    grpc::Status status = stub->GetModelInfo(&context, {}, &info);
    if (!status.ok()) return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  if (info.tokenizer_vocab_size() <= 5) return absl::FailedPreconditionError("the server has no tokenizer");
  BenchSequences sequences(stream, static_cast<int>(info.tokenizer_vocab_size()) - 1);  // Not [MASK].
  std::vector<BenchText> texts;
  for (int i = 0; i < count; ++i) {
    const std::vector<int> ids = sequences.Next();
    pb::DetokenizeRequest request;
    *request.mutable_token_ids() = {ids.begin(), ids.end()};
    pb::DetokenizeResponse response;
    grpc::ClientContext context;
    PrepareContext(&context);
    grpc::Status status = stub->Detokenize(&context, request, &response);
    if (!status.ok()) return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
    texts.push_back({response.text(), static_cast<int>(ids.size())});
  }
  return texts;
}

LevelResult RunLevel(const std::shared_ptr<grpc::Channel>& channel, int concurrency,
                     const std::vector<std::vector<BenchText>>& texts) {
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
      size_t next_text = 0;
      while (absl::Now() < end) {
        std::vector<int> ids = sequences.Next();
        int len = static_cast<int>(ids.size());
        const BenchText* text = nullptr;
        if (!texts.empty()) {
          const auto& mine = texts[w % texts.size()];
          text = &mine[next_text++ % mine.size()];
          len = text->ids;
        }
        grpc::ClientContext context;
        PrepareContext(&context);
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        grpc::Status status;
        const absl::Time t0 = absl::Now();
        if (fill) {
          pb::FillMaskRequest request;
          if (text != nullptr) {
            const size_t middle = text->text.find(' ', text->text.size() / 2);
            std::string masked = text->text;
            masked.insert(middle == std::string::npos ? masked.size() : middle, " [MASK]");
            request.add_sequences()->mutable_sequence()->set_text(masked);
          } else {
            ids[len / 2] = absl::GetFlag(FLAGS_mask_id);
            *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
          }
          pb::FillMaskResponse response;
          status = stub->FillMask(&context, request, &response);
        } else {
          pb::ClassifyRequest request;
          if (text != nullptr) {
            request.add_sequences()->set_text(text->text);
          } else {
            *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
          }
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
  std::vector<std::vector<BenchText>> texts;
  if (absl::GetFlag(FLAGS_send_text)) {
    for (uint32_t stream = 0; stream < 8; ++stream) {
      absl::StatusOr<std::vector<BenchText>> made = MakeTexts(channel, stream, /*count=*/32);
      if (!made.ok()) {
        std::cerr << "bench --send_text: " << made.status() << "\n";
        return 1;
      }
      texts.push_back(*std::move(made));
    }
  }
  for (absl::string_view level : absl::StrSplit(absl::GetFlag(FLAGS_concurrency), ',', absl::SkipEmpty())) {
    int concurrency;
    if (!absl::SimpleAtoi(level, &concurrency) || concurrency < 1) {
      std::cerr << "bad --concurrency value '" << level << "'\n";
      return 2;
    }
    results.push_back(RunLevel(channel, concurrency, texts));
  }
  return PrintResults(std::move(results), "concurrency");
}

}  // namespace deberta::tools
