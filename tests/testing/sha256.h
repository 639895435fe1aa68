// A small SHA-256 (FIPS 180-4) for checking the vendored golden files
// against cases.json without another dependency.
#ifndef DEBERTA_TESTS_TESTING_SHA256_H_
#define DEBERTA_TESTS_TESTING_SHA256_H_

#include <string>

namespace deberta::testing {

// Lower-case hex digest of `data`.
std::string Sha256Hex(const std::string& data);

}  // namespace deberta::testing

#endif  // DEBERTA_TESTS_TESTING_SHA256_H_
