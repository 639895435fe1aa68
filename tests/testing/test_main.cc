// main() of the test binaries that run servers or clients in process: the
// process is set up as deberta-server's is (abseil's deadlock detector, see
// service/mutex_deadlock_detection.h), then every test runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "service/mutex_deadlock_detection.h"

int main(int argc, char** argv) {
  deberta::service::ConfigureMutexDeadlockDetection();
  testing::InitGoogleMock(&argc, argv);
  return RUN_ALL_TESTS();
}
