// Checkpoint namings of DeepSeek-V4 (naming.hpp).
#include <fmt/format.h>

#include <algorithm>

#include "naming.hpp"
#include "trace/checked_math.hpp"

namespace trace::checkpoint {

namespace {

// The published DeepSeek-V4-Flash upload (deepseek-ai/DeepSeek-V4-Flash, 46 shards) holds
// DeepSeek's reference inference/model.py state dict as is, without a wrapper prefix: embed,
// head, norm, hc_head_{fn,base,scale}; layers.N.{attn_norm, ffn_norm, hc_attn_*, hc_ffn_*};
// layers.N.attn.{attn_sink, wq_a, q_norm, wq_b, wkv, kv_norm, wo_a, wo_b, compressor.*,
// indexer.{wq_b, weights_proj, compressor.*}}; layers.N.ffn.{gate.{weight, bias | tid2eid},
// experts.E.{w1,w2,w3}, shared_experts.{w1,w2,w3}}; mtp.{i}.* (a layer plus e_proj, h_proj,
// enorm, hnorm, norm, hc_head_*). A quantized Linear stores `.weight` and its UE8M0 block scales
// as `.scale` (model.py's Linear: `self.weight.scale = self.scale`). Names from the index's
// tensor families and a shard header (audit report, code-index id 59368543979) and rtp-llm's
// checkpoint oracle (fxp19950422/rtp-llm, rtp_llm/model_loader/test/
// dsv4_checkpoint_inventory.py, which asserts the index's 69,187 names);
// tests/data/configs/SOURCES-deepseek_v4-names.md.
class Emitter {
 public:
  Emitter(const ModelDescription& model, Inventory& inventory)
      : model_(model), inventory_(inventory) {
    const Quantization* q = model.quantization ? &*model.quantization : nullptr;
    published_ = q != nullptr && !q->family_layout.empty();
    if (published_) {
      block_rows_ = q->block_rows;
      block_cols_ = q->block_cols;
    } else {
      // Linears are then listed at the checkpoint's dtype, without scales: no such upload has
      // been seen.
      gap("DeepSeek-V4 tensors are checked against the published FP4 / FP8 layout only");
    }
    base_ = base_dtype(model).name;
  }

  void emit() {
    const Stack* main = nullptr;
    for (const Stack& stack : model_.stacks) {
      if (stack.vision) gap("a vision tower is not named for DeepSeek-V4");
      if (!stack.mtp && !stack.vision) main = &stack;
    }
    if (main == nullptr || main->blocks.empty()) {
      gap("a DeepSeek-V4 description without its layers");
      return;
    }
    if (!read_output_groups(static_cast<std::int64_t>(main->blocks.size()), main->blocks.front()))
      return;
    const std::int64_t h = model_.hidden_size;
    const std::int64_t v = model_.vocab_size;
    add("embed.weight", {v, h}, base_);
    add("head.weight", {v, h}, base_);  // ParallelHead, stored apart (untied)
    add("norm.weight", {h}, base_);
    hc_head("", main->blocks.front().residual_streams);
    for (std::size_t i = 0; i < main->blocks.size(); ++i) {
      layer(fmt::format("layers.{}.", i), main->blocks[i]);
    }
    for (const Stack& stack : model_.stacks) {
      if (!stack.mtp) continue;
      for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
        const std::string at = fmt::format("mtp.{}.", i);
        layer(at, stack.blocks[i]);
        fp8(at + "e_proj", h, h);
        fp8(at + "h_proj", h, h);
        for (const char* norm : {"enorm", "hnorm", "norm"}) {
          add(at + norm + ".weight", {h}, base_);
        }
        hc_head(at, stack.blocks[i].residual_streams);
      }
    }
  }

 private:
  void gap(std::string why) { add_gap(inventory_, std::move(why)); }

  void add(std::string name, std::vector<std::int64_t> shape, std::string_view dtype,
           bool parameter = true, std::int64_t logical = -1) {
    add_tensor(inventory_, std::move(name), std::move(shape), dtype, parameter, logical);
  }

  // An FP8 E4M3 Linear [rows, cols] with one UE8M0 scale per weight block.
  void fp8(const std::string& at, std::int64_t rows, std::int64_t cols) {
    if (!published_) {
      add(at + ".weight", {rows, cols}, base_);
      return;
    }
    add(at + ".weight", {rows, cols}, "F8_E4M3");
    add(at + ".scale", {ceil_div(rows, block_rows_), ceil_div(cols, block_cols_)}, "F8_E8M0",
        false);
  }

  // A routed expert's FP4 Linear [rows, cols]: two values a byte (I8 [rows, cols / 2]) and one
  // UE8M0 scale per 32 values along the input (model.py's fp4_block_size).
  void fp4(const std::string& at, std::int64_t rows, std::int64_t cols) {
    if (!published_) {
      add(at + ".weight", {rows, cols}, base_);
      return;
    }
    add(at + ".weight", {rows, ceil_div(cols, 2)}, "I8", true, checked_mul(rows, cols));
    add(at + ".scale", {rows, ceil_div(cols, 32)}, "F8_E8M0", false);
  }

  // Compressor: ape [ratio, c d] (F32), wkv / wgate [c d, H] and norm [d] (BF16), c = 2 where
  // the windows overlap (ratio 4).
  void compressor(const std::string& at, std::int64_t ratio, std::int64_t dim) {
    const std::int64_t width = (ratio == 4 ? 2 : 1) * dim;
    add(at + "ape", {ratio, width}, "F32");
    add(at + "wkv.weight", {width, model_.hidden_size}, base_);
    add(at + "wgate.weight", {width, model_.hidden_size}, base_);
    add(at + "norm.weight", {dim}, base_);
  }

  void hc_head(const std::string& at, std::int64_t n) {
    add(at + "hc_head_fn", {n, checked_mul(n, model_.hidden_size)}, "F32");
    add(at + "hc_head_base", {n}, "F32");
    add(at + "hc_head_scale", {1}, "F32");
  }

  void layer(const std::string& at, const Block& block) {
    const std::int64_t h = model_.hidden_size;
    const Attention& a = block.attention;
    for (const Norm& norm : block.norms) add(at + norm.name + ".weight", {norm.dim}, base_);
    const std::string attn = at + "attn.";
    const std::int64_t q_lora = a.mla.q_lora_rank;
    const std::int64_t width = checked_mul(a.num_heads, a.head_dim);
    add(attn + "attn_sink", {a.num_heads}, "F32");
    fp8(attn + "wq_a", q_lora, h);
    add(attn + "q_norm.weight", {q_lora}, base_);
    fp8(attn + "wq_b", width, q_lora);
    fp8(attn + "wkv", a.head_dim, h);
    add(attn + "kv_norm.weight", {a.head_dim}, base_);
    fp8(attn + "wo_a", checked_mul(o_groups_, o_lora_), width / o_groups_);
    fp8(attn + "wo_b", h, checked_mul(o_groups_, o_lora_));
    if (const std::optional<CompressedKv>& pooled = a.compressed_kv) {
      compressor(attn + "compressor.", pooled->ratio, a.head_dim);
      if (pooled->index_heads > 0) {
        fp8(attn + "indexer.wq_b", checked_mul(pooled->index_heads, pooled->index_key_dim), q_lora);
        add(attn + "indexer.weights_proj.weight", {pooled->index_heads, h}, base_);
        compressor(attn + "indexer.compressor.", pooled->ratio, pooled->index_key_dim);
      }
    }
    if (!block.moe || !block.moe->shared) {
      gap("a DeepSeek-V4 layer without its MoE and shared expert is not named");
      return;
    }
    const Moe& moe = *block.moe;
    const std::string ffn = at + "ffn.";
    add(ffn + "gate.weight", {moe.num_experts, h}, base_);
    if (moe.router_correction_bias) {
      add(ffn + "gate.bias", {moe.num_experts}, "F32");
    } else {
      // Hash routing (layer_id < num_hash_layers): a fixed token-to-expert table, stored I64.
      add(ffn + "gate.tid2eid", {model_.vocab_size, moe.top_k}, "I64");
    }
    const std::int64_t inter = moe.expert.intermediate;
    for (std::int64_t e = 0; e < moe.num_experts; ++e) {
      const std::string expert = fmt::format("{}experts.{}.", ffn, e);
      fp4(expert + "w1", inter, h);
      fp4(expert + "w2", h, inter);
      fp4(expert + "w3", inter, h);
    }
    const std::int64_t shared = moe.shared->intermediate;
    fp8(ffn + "shared_experts.w1", shared, h);
    fp8(ffn + "shared_experts.w2", h, shared);
    fp8(ffn + "shared_experts.w3", shared, h);
    // mHC: fn [(2 + n) n, n H], base [(2 + n) n], scale [3] per site.
    const std::int64_t n = block.residual_streams;
    for (const char* site : {"hc_attn_", "hc_ffn_"}) {
      add(at + site + "fn", {(2 + n) * n, checked_mul(n, h)}, "F32");
      add(at + site + "base", {(2 + n) * n}, "F32");
      add(at + site + "scale", {3}, "F32");
    }
  }

  // The grouped output's o_groups and o_lora_rank are no block's field: the family counts them
  // in its extra "layers.*.attn.kv_norm, wo_a, wo_b, attn_sink", head_dim + heads + o_lora x
  // (heads x head_dim + H x o_groups) a layer. The o_groups dividing heads that leaves a whole
  // o_lora is taken; none or several: the layer is not named.
  bool read_output_groups(std::int64_t layers, const Block& block) {
    const Attention& a = block.attention;
    const auto extra =
        std::find_if(model_.extra_parameters.begin(), model_.extra_parameters.end(),
                     [](const ExtraParameter& e) {
                       return e.name == "layers.*.attn.kv_norm, wo_a, wo_b, attn_sink";
                     });
    std::int64_t found = 0;
    if (extra != model_.extra_parameters.end() && extra->params % layers == 0) {
      const std::int64_t rest = extra->params / layers - a.head_dim - a.num_heads;
      for (std::int64_t g = 1; g <= a.num_heads; ++g) {
        if (a.num_heads % g != 0) continue;
        const std::int64_t per_rank = a.num_heads * a.head_dim + model_.hidden_size * g;
        if (rest > 0 && rest % per_rank == 0) {
          ++found;
          o_groups_ = g;
          o_lora_ = rest / per_rank;
        }
      }
    }
    if (found != 1) gap("DeepSeek-V4's o_groups and o_lora_rank are not told by the description");
    return found == 1;
  }

  const ModelDescription& model_;
  Inventory& inventory_;
  bool published_ = false;
  std::int64_t block_rows_ = 128;
  std::int64_t block_cols_ = 128;
  std::string_view base_;
  std::int64_t o_groups_ = 1;
  std::int64_t o_lora_ = 0;
};

void deepseek_v4_tensors(const ModelDescription& model, Inventory& inventory) {
  Emitter(model, inventory).emit();
}

}  // namespace

std::optional<Naming> deepseek_v4_naming(const std::string& type) {
  if (type != "deepseek_v4") return std::nullopt;
  return Naming{.label =
                    "DeepSeek-V4 (reference model.py names, no wrapper: layers.N.attn.wq_a, "
                    "ffn.experts.E.w1, .scale)",
                .root = "",
                .embedding = "embed",
                .family_tensors = deepseek_v4_tensors};
}

}  // namespace trace::checkpoint
