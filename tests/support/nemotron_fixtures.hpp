#pragma once
// Published Nemotron fixture texts shared by the storage and reconciliation tests.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

namespace trace::test {

// The published hf_quant_config.json of Nemotron-3-Nano-30B-A3B-NVFP4: NVFP4 everywhere but
// lm_head, the attention layers, the Mamba layer before each of them, and the convs.
inline std::string nano_hf_quant_config() {
  nlohmann::json exclude = nlohmann::json::array({"lm_head"});
  for (const int layer : {4, 11, 18, 25, 32, 41}) {
    exclude.push_back(fmt::format("backbone.layers.{}.mixer.in_proj", layer));
    exclude.push_back(fmt::format("backbone.layers.{}.mixer.out_proj", layer));
    for (const char* leaf : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      exclude.push_back(fmt::format("backbone.layers.{}.mixer.{}", layer + 1, leaf));
    }
  }
  for (const int layer : {0, 2, 4, 7, 9, 11, 14, 16, 18, 21, 23, 25, 28, 30, 32, 35, 37, 39, 41,
                          44, 46, 48, 50}) {
    exclude.push_back(fmt::format("backbone.layers.{}.mixer.conv1d", layer));
  }
  const nlohmann::json file = {
      {"producer", {{"name", "modelopt"}, {"version", "0.29.0"}}},
      {"quantization",
       {{"quant_algo", "NVFP4"}, {"kv_cache_quant_algo", "FP8"}, {"group_size", 16},
        {"exclude_modules", exclude}}}};
  return file.dump();
}

}  // namespace trace::test
