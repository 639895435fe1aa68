// Load against a server: closed loop, or open loop at --rate; clients may
// give up (--cancel_after).
#include "tools/load_generator.h"

#include <future>
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
#include "tools/bench_texts.h"
#include "tools/grpc_client.h"

ABSL_FLAG(std::string, endpoint, "classify", "bench: classify or fill-mask");
ABSL_FLAG(std::string, concurrency, "8", "bench: concurrent clients, or a comma-separated sweep");
ABSL_FLAG(int, mask_id, 4, "bench: mask id placed in fill-mask sequences");
ABSL_FLAG(double, rate, 0,
          "bench: requests per second over all clients, sent on schedule whatever the answers' latency "
          "(open loop); 0: each client sends its next request when the last is answered");
ABSL_FLAG(absl::Duration, cancel_after, absl::ZeroDuration(),
          "bench: cancel each request not answered within this time (0: never), as clients that give up");
ABSL_FLAG(bool, send_text, false,
          "bench, engine-bench: send text (made from random ids of the model's tokenizer: the server's Detokenize, "
          "or the checkpoint's tokenizer) instead of ids; classify with --max_length, --windows, --stride; tokens "
          "counted as the server (or the request builder) counts them");

namespace deberta::tools {
namespace {

namespace pb = serving::v1;

// Texts for --send_text, one list per stream: made of the server's
// tokenizer's own vocabulary through its Detokenize.
absl::StatusOr<std::vector<std::vector<std::string>>> MakeTexts(const std::shared_ptr<grpc::Channel>& channel) {
  auto stub = pb::InferenceService::NewStub(channel);
  pb::ModelInfo info;
  {
    grpc::ClientContext context;
    PrepareContext(&context);
    pb::GetModelInfoRequest request;
    request.set_model(ModelNameFromFlags());
    grpc::Status status = stub->GetModelInfo(&context, request, &info);
    if (!status.ok()) return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  }
  if (info.tokenizer_vocab_size() <= 5) return absl::FailedPreconditionError("the server has no tokenizer");
  auto detokenize = [&stub](const std::vector<int>& ids) -> absl::StatusOr<std::string> {
    pb::DetokenizeRequest request;
    request.set_model(ModelNameFromFlags());
    *request.mutable_token_ids() = {ids.begin(), ids.end()};
    pb::DetokenizeResponse response;
    grpc::ClientContext context;
    PrepareContext(&context);
    grpc::Status status = stub->Detokenize(&context, request, &response);
    if (!status.ok()) return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
    return response.text();
  };
  std::vector<std::vector<std::string>> texts;
  for (uint32_t stream = 0; stream < kBenchTextStreams; ++stream) {
    absl::StatusOr<std::vector<std::string>> made =
        MakeBenchTexts(stream, static_cast<int>(info.tokenizer_vocab_size()), detokenize);
    if (!made.ok()) return made.status();
    texts.push_back(*std::move(made));
  }
  return texts;
}

// The tokens of a text request as the server counted them: its answers'
// num_tokens (each whole text, special tokens included, however many
// windows ran); 0 for a failed call.
template <typename Response>
int64_t AnswerTokens(const Response& response) {
  int64_t tokens = 0;
  for (const auto& result : response.results()) tokens += result.num_tokens();
  return tokens;
}

// Sends one request on `stub` and waits for its answer; with a positive
// `cancel_after`, cancels it if no answer came by then (as a client that
// gives up).
template <typename Request, typename Response, typename Call>
grpc::Status SendAndWait(grpc::ClientContext* context, const Request& request, Response* response, Call call,
                         absl::Duration cancel_after) {
  std::promise<grpc::Status> done;
  std::future<grpc::Status> answer = done.get_future();
  call(context, &request, response, [&done](grpc::Status status) { done.set_value(std::move(status)); });
  if (cancel_after > absl::ZeroDuration() &&
      answer.wait_for(absl::ToChronoNanoseconds(cancel_after)) != std::future_status::ready) {
    context->TryCancel();
  }
  return answer.get();
}

LevelResult RunLevel(const std::shared_ptr<grpc::Channel>& channel, int concurrency,
                     const std::vector<std::vector<std::string>>& texts) {
  LevelResult result;
  result.level = concurrency;
  std::mutex mu;
  const bool fill = absl::GetFlag(FLAGS_endpoint) == "fill-mask";
  const absl::Duration cancel_after = absl::GetFlag(FLAGS_cancel_after);
  // Open loop when --rate is set: each worker sends on its own schedule
  // (rate / concurrency per second) whatever the answers' latency.
  const double rate = absl::GetFlag(FLAGS_rate);
  const absl::Duration interval =
      rate > 0 ? absl::Seconds(concurrency / rate) : absl::ZeroDuration();
  const absl::Time start = absl::Now();
  const absl::Time end = start + absl::GetFlag(FLAGS_duration);
  std::vector<std::thread> workers;
  for (int w = 0; w < concurrency; ++w) {
    workers.emplace_back([&, w] {
      auto stub = pb::InferenceService::NewStub(channel);
      BenchSequences sequences(w);
      size_t next_text = 0;
      // Workers start spread over one interval.
      absl::Time next_send = start + interval * w / concurrency;
      while (true) {
        if (interval > absl::ZeroDuration()) {
          const absl::Duration wait = next_send - absl::Now();
          if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
          next_send += interval;
        }
        if (absl::Now() >= end) break;
        std::vector<int> ids = sequences.Next();
        // Tokens sent: the sequence's, or for text the server's count
        // (AnswerTokens).
        int64_t len = static_cast<int64_t>(ids.size());
        const std::string* text = nullptr;
        if (!texts.empty()) {
          const auto& mine = texts[w % texts.size()];
          text = &mine[next_text++ % mine.size()];
        }
        grpc::ClientContext context;
        PrepareContext(&context);
        grpc::Status status;
        const absl::Time t0 = absl::Now();
        if (fill) {
          pb::FillMaskRequest request;
          request.set_model(ModelNameFromFlags());
          if (text != nullptr) {
            const size_t middle = text->find(' ', text->size() / 2);
            std::string masked = *text;
            masked.insert(middle == std::string::npos ? masked.size() : middle, " [MASK]");
            request.add_sequences()->mutable_sequence()->set_text(masked);
          } else {
            ids[len / 2] = absl::GetFlag(FLAGS_mask_id);
            *request.add_sequences()->mutable_sequence()->mutable_token_ids() = {ids.begin(), ids.end()};
          }
          pb::FillMaskResponse response;
          status = SendAndWait(&context, request, &response,
                               [&stub](auto... args) { stub->async()->FillMask(args...); }, cancel_after);
          if (text != nullptr) len = AnswerTokens(response);
        } else {
          // (--aggregate was checked before the run.)
          pb::ClassifyRequest request = text != nullptr ? *BenchClassifyRequest(*text) : pb::ClassifyRequest();
          if (text == nullptr) {
            request.set_model(ModelNameFromFlags());
            *request.add_sequences()->mutable_token_ids() = {ids.begin(), ids.end()};
          }
          pb::ClassifyResponse response;
          status = SendAndWait(&context, request, &response,
                               [&stub](auto... args) { stub->async()->Classify(args...); }, cancel_after);
          if (text != nullptr) len = AnswerTokens(response);
        }
        const double ms = absl::ToDoubleMilliseconds(absl::Now() - t0);
        std::lock_guard<std::mutex> lock(mu);
        if (status.ok()) {
          ++result.ok;
          result.tokens += len;
          result.latencies_ms.push_back(ms);
        } else {
          const std::string code = absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
          ++result.errors[code];
          result.error_latencies_ms[code].push_back(ms);
        }
        if (interval == absl::ZeroDuration() && status.error_code() == grpc::StatusCode::UNAVAILABLE) {
          // A closed-loop client backs off from a server that is away
          // (draining, restarting) rather than spinning on it.
          absl::SleepFor(absl::Milliseconds(10));
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
  std::vector<std::vector<std::string>> texts;
  if (absl::GetFlag(FLAGS_send_text)) {
    if (!BenchClassifyRequest("").ok()) return 2;
    absl::StatusOr<std::vector<std::vector<std::string>>> made = MakeTexts(channel);
    if (!made.ok()) {
      std::cerr << "bench --send_text: " << made.status() << "\n";
      return 1;
    }
    texts = *std::move(made);
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
