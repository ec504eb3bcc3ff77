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

// One post-LayerNorm encoder layer as its modeling file names it: four biased h x h
// projections (q, k, v, out), the attention's norm, the biased FFN in (h -> ffn) and out, the
// output norm: 16 tensors under `at`.
struct EncoderLayerNames {
  std::vector<std::string> projections;  // q, k, v, out
  std::string attention_norm;
  std::string ffn_in;
  std::string ffn_out;
  std::string output_norm;
};

inline void encoder_layer(Wanted& want, const std::string& at, std::int64_t h, std::int64_t ffn,
                          const EncoderLayerNames& names) {
  for (const std::string& projection : names.projections) linear(want, at + projection, h, h);
  layer_norm(want, at + names.attention_norm, h);
  linear(want, at + names.ffn_in, ffn, h);
  linear(want, at + names.ffn_out, h, ffn);
  layer_norm(want, at + names.output_norm, h);
}

// L encoder layers named `names` under `prefix` + "N.".
inline void encoder_layers(Wanted& want, const std::string& prefix, int layers, std::int64_t h,
                           std::int64_t ffn, const EncoderLayerNames& names) {
  for (int i = 0; i < layers; ++i) {
    encoder_layer(want, prefix + std::to_string(i) + ".", h, ffn, names);
  }
}

// BertLayer x L (RobertaLayer and ElectraLayer are copies) under `prefix` + "N.", LayerNorms
// weight/bias.
inline void bert_layers(Wanted& want, const std::string& prefix, int layers, std::int64_t h,
                        std::int64_t ffn) {
  encoder_layers(want, prefix, layers, h, ffn,
                 {{"attention.self.query", "attention.self.key", "attention.self.value",
                   "attention.output.dense"},
                  "attention.output.LayerNorm",
                  "intermediate.dense",
                  "output.dense",
                  "output.LayerNorm"});
}

// BertEmbeddings (word, position, token-type tables, LayerNorm weight/bias) and BertLayer x L
// under `root` ("roberta.", "bert.", "" for a bare upload), with the position_ids buffer
// uploads saved by transformers < 4.31 hold.
inline Wanted bert_body(const std::string& root, std::int64_t vocab, int layers, std::int64_t h,
                        std::int64_t ffn, std::int64_t positions, std::int64_t types) {
  Wanted want;
  want[root + "embeddings.word_embeddings.weight"] = {{vocab, h}};
  want[root + "embeddings.position_embeddings.weight"] = {{positions, h}};
  want[root + "embeddings.token_type_embeddings.weight"] = {{types, h}};
  layer_norm(want, root + "embeddings.LayerNorm", h);
  want[root + "embeddings.position_ids"] = {{1, positions}, true};
  bert_layers(want, root + "encoder.layer.", layers, h, ffn);
  return want;
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
