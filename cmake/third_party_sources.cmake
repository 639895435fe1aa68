# abseil, Google Benchmark and nlohmann-json built from sources in
# DEBERTA_THIRD_PARTY_DIR instead of found installed: for a machine that has
# PyTorch's LibTorch and a compiler but no packages (the GPU check,
# scripts/gpu_check.sh; scripts/gpu_check_prepare.sh fills the folder from
# Debian's source packages, the same versions and patches the Debian build
# uses, so absl::string_view stays its own type there too).
#
#   DEBERTA_THIRD_PARTY_DIR/abseil-cpp/   abseil's CMake project
#   DEBERTA_THIRD_PARTY_DIR/benchmark/    Google Benchmark's CMake project
#   DEBERTA_THIRD_PARTY_DIR/nlohmann/     the nlohmann/*.hpp headers
set(third_party ${DEBERTA_THIRD_PARTY_DIR})
foreach(part abseil-cpp benchmark nlohmann)
  if(NOT EXISTS ${third_party}/${part})
    message(FATAL_ERROR "DEBERTA_THIRD_PARTY_DIR=${third_party} has no ${part}/ (see scripts/gpu_check_prepare.sh)")
  endif()
endforeach()

# Compiled with LibTorch's flags (its C++ ABI setting above all), so that
# their std::string-taking functions link with ours.
string(APPEND CMAKE_CXX_FLAGS " ${TORCH_CXX_FLAGS}")
# Warnings in their code are theirs: no -Werror reaches them (our targets
# add it per target), and their own tests stay out of the build.
set(ABSL_PROPAGATE_CXX_STD ON)
set(ABSL_ENABLE_INSTALL OFF)
set(BUILD_TESTING OFF)
add_subdirectory(${third_party}/abseil-cpp ${CMAKE_BINARY_DIR}/third_party/abseil-cpp EXCLUDE_FROM_ALL)

set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_INSTALL OFF CACHE BOOL "" FORCE)
set(BENCHMARK_ENABLE_WERROR OFF CACHE BOOL "" FORCE)
# Debian's patch drops the version read from git; "0.0.0" makes it take
# project()'s.
set(GIT_VERSION "0.0.0")
add_subdirectory(${third_party}/benchmark ${CMAKE_BINARY_DIR}/third_party/benchmark EXCLUDE_FROM_ALL)

add_library(deberta_nlohmann_json INTERFACE)
target_include_directories(deberta_nlohmann_json SYSTEM INTERFACE ${third_party})
add_library(nlohmann_json::nlohmann_json ALIAS deberta_nlohmann_json)
