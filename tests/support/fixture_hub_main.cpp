// trace_fixture_hub: the test fixture Hub as a process, to run the real binary against it:
//   build/tests/trace_fixture_hub > endpoint.txt &   # prints http://127.0.0.1:PORT, then serves
//   HF_ENDPOINT=$(cat endpoint.txt) build/trace fixture-org/Llama-3.1-8B --plan
// It serves fixture-org/Llama-3.1-8B (4 shards), fixture-org/Llama-3.2-1B (one file) and
// fixture-org/Llama-3.1-8B-NVFP4 until stdin closes, then prints the requests it logged and the
// body bytes it sent on stderr.
#include <iostream>
#include <string>

#include "hub_fixtures.hpp"

int main() {
  trace::test::FixtureHub hub;
  hub.add_repo(trace::test::llama_8b_repo());
  hub.add_repo(trace::test::llama_1b_repo());
  hub.add_repo(trace::test::nvfp4_repo());
  std::cout << hub.endpoint() << std::endl;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "stats") {
      std::cout << hub.request_count() << " requests, " << hub.body_bytes_sent() << " body bytes" << std::endl;
    } else if (line == "clear") {
      hub.clear_log();
    }
  }
  std::cerr << hub.request_count() << " requests, " << hub.body_bytes_sent() << " body bytes\n";
  return 0;
}
