#include "synthetic_safetensors.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace trace::test {

namespace {

std::uint64_t dtype_bits(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 64;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 32;
  if (dtype == "BF16" || dtype == "F16" || dtype == "I16" || dtype == "U16") return 16;
  if (dtype == "U8" || dtype == "I8" || dtype == "BOOL" || dtype.rfind("F8_", 0) == 0) return 8;
  if (dtype == "F4") return 4;
  throw std::invalid_argument("unknown dtype " + dtype);
}

std::string le64(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xffU);
  return bytes;
}

}  // namespace

std::uint64_t tensor_bytes(const TensorSpec& tensor) {
  std::uint64_t count = 1;
  for (const std::uint64_t dim : tensor.shape) count *= dim;
  return count * dtype_bits(tensor.dtype) / 8;
}

SyntheticShard make_shard(const std::vector<TensorSpec>& tensors) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  std::uint64_t offset = 0;
  for (const TensorSpec& tensor : tensors) {
    const std::uint64_t end = offset + tensor_bytes(tensor);
    header[tensor.name] = {{"dtype", tensor.dtype}, {"shape", tensor.shape}, {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return {le64(text.size()) + text, 8 + text.size() + offset};
}

std::vector<TensorSpec> llama_tensors(const LlamaShape& s) {
  const std::uint64_t head_dim = s.hidden / s.heads;
  const std::uint64_t kv = s.kv_heads * head_dim;
  std::vector<TensorSpec> tensors = {{"model.embed_tokens.weight", "BF16", {s.vocab, s.hidden}}};
  for (std::uint64_t i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    tensors.push_back({p + "input_layernorm.weight", "BF16", {s.hidden}});
    tensors.push_back({p + "self_attn.q_proj.weight", "BF16", {s.hidden, s.hidden}});
    tensors.push_back({p + "self_attn.k_proj.weight", "BF16", {kv, s.hidden}});
    tensors.push_back({p + "self_attn.v_proj.weight", "BF16", {kv, s.hidden}});
    tensors.push_back({p + "self_attn.o_proj.weight", "BF16", {s.hidden, s.hidden}});
    tensors.push_back({p + "post_attention_layernorm.weight", "BF16", {s.hidden}});
    tensors.push_back({p + "mlp.gate_proj.weight", "BF16", {s.intermediate, s.hidden}});
    tensors.push_back({p + "mlp.up_proj.weight", "BF16", {s.intermediate, s.hidden}});
    tensors.push_back({p + "mlp.down_proj.weight", "BF16", {s.hidden, s.intermediate}});
  }
  tensors.push_back({"model.norm.weight", "BF16", {s.hidden}});
  if (!s.tied_embeddings) tensors.push_back({"lm_head.weight", "BF16", {s.vocab, s.hidden}});
  return tensors;
}

std::vector<TensorSpec> llama_nvfp4_tensors(const LlamaShape& s) {
  std::vector<TensorSpec> tensors;
  for (const TensorSpec& tensor : llama_tensors(s)) {
    const bool block_linear = tensor.name.rfind("model.layers.", 0) == 0 && tensor.shape.size() == 2;
    if (!block_linear) {
      tensors.push_back(tensor);
      continue;
    }
    const std::string base = tensor.name.substr(0, tensor.name.size() - std::string("weight").size());
    const std::uint64_t out = tensor.shape[0];
    const std::uint64_t in = tensor.shape[1];
    tensors.push_back({base + "weight", "U8", {out, in / 2}});
    tensors.push_back({base + "weight_scale", "F8_E4M3", {out, in / 16}});
    tensors.push_back({base + "weight_scale_2", "F32", {}});
    tensors.push_back({base + "input_scale", "F32", {}});
    if (tensor.name.find("k_proj") != std::string::npos) tensors.push_back({base + "k_scale", "F32", {}});
    if (tensor.name.find("v_proj") != std::string::npos) tensors.push_back({base + "v_scale", "F32", {}});
  }
  return tensors;
}

void add_checkpoint(FixtureRepo& repo, const std::vector<TensorSpec>& tensors, int shards) {
  if (shards <= 1) {
    const SyntheticShard shard = make_shard(tensors);
    repo.files["model.safetensors"] = {shard.prefix_and_header, shard.file_size, true};
    return;
  }
  std::uint64_t total = 0;
  for (const TensorSpec& tensor : tensors) total += tensor_bytes(tensor);
  const std::uint64_t target = total / static_cast<std::uint64_t>(shards) + 1;
  std::vector<std::vector<TensorSpec>> groups(1);
  std::uint64_t in_group = 0;
  for (const TensorSpec& tensor : tensors) {
    if (in_group >= target && static_cast<int>(groups.size()) < shards) {
      groups.emplace_back();
      in_group = 0;
    }
    groups.back().push_back(tensor);
    in_group += tensor_bytes(tensor);
  }
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, groups.size());
    const SyntheticShard shard = make_shard(groups[i]);
    repo.files[name] = {shard.prefix_and_header, shard.file_size, true};
    for (const TensorSpec& tensor : groups[i]) index["weight_map"][tensor.name] = name;
  }
  add_text_file(repo, "model.safetensors.index.json", index.dump(2));
}

void add_text_file(FixtureRepo& repo, const std::string& name, const std::string& text) {
  repo.files[name] = {text, text.size(), false};
}

}  // namespace trace::test
