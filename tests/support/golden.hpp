#pragma once
// Golden files (bloaty's FileCheck idea, in-process): compare rendered output with
// tests/golden/<name>. TRACE_UPDATE_GOLDEN=1 rewrites them; a reviewer reads the diff. The
// numbers inside are asserted independently by hand-derived tests; goldens pin the layout.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "catch.hpp"

namespace trace::test {

inline void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(TRACE_GOLDEN_DIR) + "/" + name;
  if (std::getenv("TRACE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << actual;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream file(path, std::ios::binary);
  INFO("golden file " << path << " (TRACE_UPDATE_GOLDEN=1 rewrites it)");
  REQUIRE(file.good());
  std::ostringstream expected;
  expected << file.rdbuf();
  CHECK(actual == expected.str());
}

}  // namespace trace::test
