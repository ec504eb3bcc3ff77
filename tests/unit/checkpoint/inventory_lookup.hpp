#pragma once
// Looking tensors up in an inventory by their checkpoint name, for the naming tests.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace trace::test {

inline const checkpoint::ExpectedTensor* find_tensor(const checkpoint::Inventory& inventory,
                                                     const std::string& name) {
  const auto it = std::find_if(inventory.tensors.begin(), inventory.tensors.end(),
                               [&](const checkpoint::ExpectedTensor& t) { return t.name == name; });
  return it == inventory.tensors.end() ? nullptr : &*it;
}

/// The inventory of a fixture config in tests/data/configs.
inline checkpoint::Inventory fixture_inventory(const std::string& config) {
  return checkpoint::build_inventory(fixture(config));
}

/// The inventory lists `name` at `shape`.
inline void check_tensor(const checkpoint::Inventory& inventory, const std::string& name,
                         const std::vector<std::int64_t>& shape) {
  INFO(name);
  const checkpoint::ExpectedTensor* tensor = find_tensor(inventory, name);
  REQUIRE(tensor != nullptr);
  CHECK(tensor->shape == shape);
}

/// The dtype the inventory expects `name` in (the tensor must be listed).
inline std::string dtype_of(const checkpoint::Inventory& inventory, const std::string& name) {
  INFO(name);
  const checkpoint::ExpectedTensor* tensor = find_tensor(inventory, name);
  REQUIRE(tensor != nullptr);
  return std::string(tensor->dtype);
}

/// The inventory does not list `name`.
inline void check_absent(const checkpoint::Inventory& inventory, const std::string& name) {
  INFO(name);
  CHECK(find_tensor(inventory, name) == nullptr);
}

/// The parameters every tensor of the inventory holds (ExpectedTensor::logical_params).
inline std::int64_t inventory_params(const checkpoint::Inventory& inventory) {
  std::int64_t params = 0;
  for (const checkpoint::ExpectedTensor& tensor : inventory.tensors)
    params += tensor.logical_params;
  return params;
}

/// How many of the inventory's tensors are buffers (ExpectedTensor::buffer).
inline std::int64_t buffer_count(const checkpoint::Inventory& inventory) {
  return std::count_if(inventory.tensors.begin(), inventory.tensors.end(),
                       [](const checkpoint::ExpectedTensor& tensor) { return tensor.buffer; });
}

/// The bytes every tensor of the inventory is stored in (ExpectedTensor::bytes), buffers too.
inline std::int64_t inventory_bytes(const checkpoint::Inventory& inventory) {
  std::int64_t bytes = 0;
  for (const checkpoint::ExpectedTensor& tensor : inventory.tensors) bytes += tensor.bytes();
  return bytes;
}

/// How many of the inventory's tensors are stored in `dtype` ("F32", "BF16", ...).
inline std::int64_t dtype_tensor_count(const checkpoint::Inventory& inventory,
                                       const std::string& dtype) {
  return std::count_if(
      inventory.tensors.begin(), inventory.tensors.end(),
      [&](const checkpoint::ExpectedTensor& tensor) { return tensor.dtype == dtype; });
}

/// The stored elements of the inventory's tensors in `dtype`.
inline std::int64_t dtype_elements(const checkpoint::Inventory& inventory,
                                   const std::string& dtype) {
  std::int64_t elements = 0;
  for (const checkpoint::ExpectedTensor& tensor : inventory.tensors) {
    if (tensor.dtype == dtype) elements += tensor.elements();
  }
  return elements;
}

// Tensors whose names start with `prefix`.
inline std::int64_t count_under(const checkpoint::Inventory& inventory, const std::string& prefix) {
  std::int64_t count = 0;
  for (const checkpoint::ExpectedTensor& tensor : inventory.tensors)
    count += tensor.name.starts_with(prefix);
  return count;
}

// Stored bytes of the tensors whose names start with `prefix`.
inline std::int64_t bytes_under(const checkpoint::Inventory& inventory, const std::string& prefix) {
  std::int64_t bytes = 0;
  for (const checkpoint::ExpectedTensor& tensor : inventory.tensors)
    if (tensor.name.starts_with(prefix)) bytes += tensor.bytes();
  return bytes;
}

// Whether no name is listed twice.
inline bool names_distinct(const checkpoint::Inventory& inventory) {
  std::set<std::string_view> names;
  for (const checkpoint::ExpectedTensor& tensor : inventory.tensors) names.insert(tensor.name);
  return names.size() == inventory.tensors.size();
}

}  // namespace trace::test
