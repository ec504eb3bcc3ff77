#pragma once
// Hand-written tensor lists for the checkpoint naming tests: what an upload's model.safetensors
// holds, built tensor by tensor from the modules of the modeling files, and the check that an
// inventory lists exactly those (encoder_names_test.cpp, encoder_names_more_test.cpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace trace::test::tensors {

using checkpoint::ExpectedTensor;
using checkpoint::Inventory;
using Shape = std::vector<std::int64_t>;

struct Want {
  Shape shape;
  bool buffer = false;  // stored by some uploads only, not a parameter
};
using Wanted = std::map<std::string, Want>;

inline Inventory fixture_inventory(const std::string& config) {
  return checkpoint::build_inventory(fixture(config));
}

// A Linear with a bias: weight [out, in], bias [out].
inline void linear(Wanted& want, const std::string& at, std::int64_t out, std::int64_t in) {
  want[at + ".weight"] = {{out, in}};
  want[at + ".bias"] = {{out}};
}

inline void layer_norm(Wanted& want, const std::string& at, std::int64_t width) {
  want[at + ".weight"] = {{width}};
  want[at + ".bias"] = {{width}};
}

inline std::int64_t elements(const Shape& shape) {
  std::int64_t n = 1;
  for (const std::int64_t dim : shape) n *= dim;
  return n;
}

// The inventory holds exactly `want` (names, shapes, which are buffers); returns the elements
// of its parameter tensors (buffers left out).
inline std::int64_t check_exact(const Inventory& inventory, const Wanted& want) {
  CHECK(inventory.complete);
  CHECK(inventory.gaps.empty());
  std::int64_t parameters = 0;
  for (const ExpectedTensor& tensor : inventory.tensors) {
    INFO(tensor.name);
    const auto it = want.find(tensor.name);
    CHECK(it != want.end());  // nothing the upload does not hold
    if (it == want.end()) continue;
    CHECK(tensor.shape == it->second.shape);
    CHECK(tensor.buffer == it->second.buffer);
    if (!tensor.buffer) parameters += elements(tensor.shape);
  }
  for (const auto& [name, wanted] : want) {
    INFO(name);
    const auto found =
        std::count_if(inventory.tensors.begin(), inventory.tensors.end(),
                      [&](const ExpectedTensor& tensor) { return tensor.name == name; });
    CHECK(found == 1);  // listed once
  }
  CHECK(inventory.tensors.size() == want.size());
  return parameters;
}

inline const ExpectedTensor& tensor_named(const Inventory& inventory, const std::string& name) {
  const auto it = std::find_if(inventory.tensors.begin(), inventory.tensors.end(),
                               [&](const ExpectedTensor& t) { return t.name == name; });
  REQUIRE(it != inventory.tensors.end());
  return *it;
}

}  // namespace trace::test::tensors
