// Test helpers for RPCs in flight: PendingCall (a Classify started with
// the callback client API, awaited later) and Eventually (polls a positive
// condition; never used to prove that something did not happen).
#ifndef DEBERTA_TESTS_TESTING_PENDING_CALL_H_
#define DEBERTA_TESTS_TESTING_PENDING_CALL_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "deberta/serving/v1/inference.grpc.pb.h"

namespace deberta::testing {

namespace pb = serving::v1;

// One sequence {first_id, 5, 6, 7}: FakeEngine's logits name it.
inline pb::ClassifyRequest OneSequence(int32_t first_id) {
  pb::ClassifyRequest request;
  const std::vector<int32_t> tokens{first_id, 5, 6, 7};
  request.add_sequences()->mutable_token_ids()->Add(tokens.begin(), tokens.end());
  return request;
}

// An RPC started with the callback client API; Wait() gives its status.
struct PendingCall {
  grpc::ClientContext context;
  pb::ClassifyRequest request;
  pb::ClassifyResponse response;
  grpc::Status status;
  absl::Notification done;

  void Start(pb::InferenceService::Stub* stub, int32_t first_id) {
    request = OneSequence(first_id);
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    stub->async()->Classify(&context, &request, &response, [this](grpc::Status s) {
      status = std::move(s);
      done.Notify();
    });
  }
  grpc::Status Wait() {
    done.WaitForNotification();
    return status;
  }
};

// Polls `condition` (a positive condition, never used to prove absence).
template <typename Condition>
bool Eventually(Condition condition) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_PENDING_CALL_H_
