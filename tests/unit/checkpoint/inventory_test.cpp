// The inventory against trace's own totals, over every fixture config: where the inventory is
// complete, its tensors hold exactly the parameter count, and their elements and bytes are the
// storage estimate's (two derivations of the same checkpoint that must not drift apart).
#include "trace/checkpoint/inventory.hpp"

#include <filesystem>
#include <string>

#include "catch.hpp"
#include "estimate/checkpoint_layout.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"

TEST_CASE("complete inventories agree with the parameter count and the storage estimate",
          "[checkpoint][inventory]") {
  int complete = 0;
  for (const auto& entry : std::filesystem::directory_iterator(trace::test::data_dir() + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    INFO(name);
    const trace::ModelDescription model = trace::test::fixture(name);
    const trace::ParameterCount params = trace::count_parameters(model);
    const trace::StorageEstimate storage = trace::estimate_storage(model, params);
    const trace::checkpoint::Inventory inventory = trace::checkpoint::build_inventory(model);
    if (!inventory.complete) continue;
    UNSCOPED_INFO("complete: " << name);
    ++complete;
    std::int64_t logical = 0;
    std::int64_t elements = 0;
    std::int64_t bytes = 0;
    for (const auto& tensor : inventory.tensors) {
      logical += tensor.logical_params;
      elements += tensor.elements();
      bytes += tensor.bytes();
    }
    CHECK(logical == params.total);
    CHECK(elements == storage.stored_elements);
    CHECK(bytes == storage.bytes);
    const auto tensors = static_cast<std::int64_t>(inventory.tensors.size());
    if (storage.tensors > 0) CHECK(tensors == storage.tensors);
    if (!model.quantization) CHECK(tensors == trace::layout::tensor_count(model));
  }
  CHECK(complete >= 20);
}
