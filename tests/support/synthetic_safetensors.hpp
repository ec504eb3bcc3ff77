#pragma once
// Synthetic safetensors checkpoints for the fixture Hub: real-shaped headers (names, dtypes,
// shapes and contiguous data_offsets of a real model's inventory), split into shards with an
// index, and no weight bytes: each shard stores its 8 + N header bytes and reports its full size.
#include <cstdint>
#include <string>
#include <vector>

#include "fixture_hub.hpp"

namespace trace::test {

struct TensorSpec {
  std::string name;
  std::string dtype;  // BF16, F32, U8, F8_E4M3, ...
  std::vector<std::uint64_t> shape;
};

std::uint64_t tensor_bytes(const TensorSpec& tensor);

/// The 8-byte length and the header JSON (padded with spaces to a multiple of 8), and the size a
/// shard holding these tensors has.
struct SyntheticShard {
  std::string prefix_and_header;
  std::uint64_t file_size = 0;
};
SyntheticShard make_shard(const std::vector<TensorSpec>& tensors);

/// A Llama-style decoder's stored tensors (BF16), as in meta-llama checkpoints.
struct LlamaShape {
  std::uint64_t hidden = 4096;
  std::uint64_t intermediate = 14336;
  std::uint64_t layers = 32;
  std::uint64_t heads = 32;
  std::uint64_t kv_heads = 8;
  std::uint64_t vocab = 128256;
  bool tied_embeddings = false;
};
std::vector<TensorSpec> llama_tensors(const LlamaShape& shape);

/// The same model as a ModelOpt NVFP4 export: each block linear stores U8 weights (two FP4 per
/// byte), F8_E4M3 scales per 16 inputs and F32 weight_scale_2 / input_scale; embeddings, norms
/// and lm_head stay BF16; FP8 KV scales per layer.
std::vector<TensorSpec> llama_nvfp4_tensors(const LlamaShape& shape);

/// Adds the tensors to `repo` as `shards` files model-0000i-of-0000n.safetensors (by size) with
/// model.safetensors.index.json, or as one model.safetensors when shards == 1.
void add_checkpoint(FixtureRepo& repo, const std::vector<TensorSpec>& tensors, int shards);

/// Adds a small JSON file (config.json, hf_quant_config.json).
void add_text_file(FixtureRepo& repo, const std::string& name, const std::string& text);

}  // namespace trace::test
