// ReplicaOptions: devices round-robin over a --device list, CPU threads
// split between the CPU replicas, and the errors for what cannot work.
#include "model/replica_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace deberta::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Devices(const std::vector<EngineOptions>& replicas) {
  std::vector<std::string> devices;
  for (const EngineOptions& options : replicas) devices.push_back(options.device);
  return devices;
}

std::vector<int> Threads(const std::vector<EngineOptions>& replicas) {
  std::vector<int> threads;
  for (const EngineOptions& options : replicas) threads.push_back(options.num_threads);
  return threads;
}

TEST(ReplicaOptionsTest, OneReplicaIsTheEngineWithEveryThread) {
  EngineOptions base;
  base.model = "demo";
  auto replicas = ReplicaOptions(base, 1, 8);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  ASSERT_EQ(replicas->size(), 1u);
  EXPECT_EQ((*replicas)[0].device, "cpu");
  EXPECT_EQ((*replicas)[0].num_threads, 8);
  EXPECT_EQ((*replicas)[0].model, "demo");
}

TEST(ReplicaOptionsTest, CpuReplicasSplitTheThreadsTheFirstOnesTakingTheRemainder) {
  EngineOptions base;
  auto even = ReplicaOptions(base, 2, 8);
  ASSERT_TRUE(even.ok()) << even.status();
  EXPECT_THAT(Threads(*even), ElementsAre(4, 4));
  auto uneven = ReplicaOptions(base, 3, 8);
  ASSERT_TRUE(uneven.ok()) << uneven.status();
  EXPECT_THAT(Threads(*uneven), ElementsAre(3, 3, 2));
  EXPECT_THAT(Devices(*uneven), ElementsAre("cpu", "cpu", "cpu"));
}

TEST(ReplicaOptionsTest, ADeviceListIsSpreadRoundRobinAndGpuReplicasKeepTheirThreads) {
  EngineOptions base;
  base.device = "cuda:0, cuda:1";
  base.num_threads = 2;
  auto replicas = ReplicaOptions(base, 4, 16);
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  EXPECT_THAT(Devices(*replicas), ElementsAre("cuda:0", "cuda:1", "cuda:0", "cuda:1"));
  EXPECT_THAT(Threads(*replicas), ElementsAre(2, 2, 2, 2));
  // Mixed: only the CPU replicas share the CPU threads.
  base.device = "cuda:0,cpu";
  auto mixed = ReplicaOptions(base, 4, 6);
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_THAT(Devices(*mixed), ElementsAre("cuda:0", "cpu", "cuda:0", "cpu"));
  EXPECT_THAT(Threads(*mixed), ElementsAre(2, 3, 2, 3));
}

TEST(ReplicaOptionsTest, RefusesWhatCannotWork) {
  EngineOptions base;
  for (int replicas : {0, -1, kMaxReplicas + 1}) {
    auto refused = ReplicaOptions(base, replicas, 8);
    EXPECT_TRUE(absl::IsInvalidArgument(refused.status())) << replicas;
    EXPECT_THAT(refused.status().message(), HasSubstr("--replicas"));
  }
  auto too_few_threads = ReplicaOptions(base, 4, 2);
  EXPECT_TRUE(absl::IsInvalidArgument(too_few_threads.status()));
  EXPECT_THAT(too_few_threads.status().message(), HasSubstr("4 replicas on the CPU need at least as many threads"));
  base.device = "cuda:0,,cuda:1";
  auto empty_entry = ReplicaOptions(base, 2, 8);
  EXPECT_TRUE(absl::IsInvalidArgument(empty_entry.status()));
  EXPECT_THAT(empty_entry.status().message(), HasSubstr("no empty entries"));
}

}  // namespace
}  // namespace deberta::model
