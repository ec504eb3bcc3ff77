// Checkpoint naming of Gemma 3n (naming.hpp): google/gemma-3n-E2B(-it) and -E4B(-it),
// Gemma3nForConditionalGeneration. The family's description counts AltUp, LAuReL, the per-layer
// embeddings, the audio conformer and the embedders as per-module totals (families/gemma3n.cpp),
// so the tensors are listed here from those totals, under the names transformers'
// convert_gemma3n_weights.py writes (every tensor, loaded with strict=True) and
// modeling_gemma3n.py's modules hold; tests/data/configs/SOURCES-gemma3n-names.md.
#include <fmt/format.h>

#include "naming.hpp"
#include "trace/checked_math.hpp"

namespace trace::checkpoint {

namespace {

class Emitter {
 public:
  Emitter(const ModelDescription& model, Inventory& inventory)
      : model_(model), inventory_(inventory) {
    base_ = base_dtype(model).name;
  }

  void emit() {
    if (model_.quantization) {
      gap("a quantized Gemma 3n checkpoint is not named tensor by tensor");
      return;
    }
    const Stack* main = nullptr;
    for (const Stack& stack : model_.stacks) {
      if (!stack.mtp && !stack.vision) main = &stack;
    }
    if (main == nullptr || main->blocks.empty()) {
      gap("a Gemma 3n description without its layers");
      return;
    }
    text(*main);
    audio_tower();
    embedder("model.embed_audio");
    embedder("model.embed_vision");
    vision_tower();
  }

 private:
  void gap(std::string why) { add_gap(inventory_, std::move(why)); }

  void add(std::string name, std::vector<std::int64_t> shape) {
    add_tensor(inventory_, std::move(name), std::move(shape), base_);
  }

  // The count of the description's extra of this name; -1 when it has none.
  std::int64_t find(std::string_view name) const {
    for (const ExtraParameter& extra : model_.extra_parameters) {
      if (extra.name == name) return extra.params;
    }
    return -1;
  }

  // `total` split into `parts` equal parts; 0 (and a gap) when it does not split.
  std::int64_t per(std::int64_t total, std::int64_t parts, std::string_view what) {
    if (total < 0 || parts <= 0 || total % parts != 0) {
      gap(fmt::format("Gemma 3n's {} does not split into the tensors named", what));
      return 0;
    }
    return total / parts;
  }

  // The text model (model.language_model.*): Gemma3nTextModel's names as the converter writes
  // them. Every layer stores its k_proj / v_proj / k_norm, KV-shared or not.
  void text(const Stack& main) {
    const std::string root = "model.language_model.";
    const std::int64_t h = model_.hidden_size;
    const std::int64_t layers = static_cast<std::int64_t>(main.blocks.size());
    add(root + "embed_tokens.weight", {model_.vocab_size, model_.embedding_dim});  // lm_head tied
    for (std::size_t i = 0; i < main.blocks.size(); ++i) {
      const Block& block = main.blocks[i];
      const std::string at = fmt::format("{}layers.{}.", root, i);
      const Attention& a = block.attention;
      if (a.q_bias || a.k_bias || a.v_bias || a.o_bias || a.fused_qkv || block.mlp.up_bias ||
          block.mlp.down_bias || block.mlp.fused_gate_up || block.moe || block.ssm) {
        gap("a Gemma 3n layer with biases, fused or MoE modules is not named");
      }
      const std::int64_t q = checked_mul(a.num_heads, a.head_dim, "the tensor inventory");
      const std::int64_t kv = checked_mul(a.num_kv_heads, a.head_dim, "the tensor inventory");
      add(at + "self_attn.q_proj.weight", {q, h});
      add(at + "self_attn.k_proj.weight", {kv, h});
      add(at + "self_attn.v_proj.weight", {kv, h});
      add(at + "self_attn.o_proj.weight", {h, q});
      if (a.q_norm) add(at + "self_attn.q_norm.weight", {a.q_norm->dim});
      if (a.k_norm) add(at + "self_attn.k_norm.weight", {a.k_norm->dim});
      const std::int64_t width = block.mlp.intermediate;
      add(at + "mlp.gate_proj.weight", {width, h});
      add(at + "mlp.up_proj.weight", {width, h});
      add(at + "mlp.down_proj.weight", {h, width});
      for (const Norm& norm : block.norms) add(at + norm.name + ".weight", {norm.dim});
    }
    if (main.final_norm) add(root + main.final_norm->name + ".weight", {main.final_norm->dim});

    // Gemma3nTextAltUp: correct_output_scale [h] (a bare Parameter), correction_coefs
    // Linear(n, n), prediction_coefs Linear(n, n^2), modality_router Linear(h, n), router_norm.
    const std::int64_t n = main.blocks.front().residual_streams;
    const std::string each = root + "layers.*.";
    if (per(find(each + "altup"), layers, "AltUp total") !=
        checked_add(checked_product({n, n, n + 1}), checked_mul(h, n + 1))) {
      gap("Gemma 3n's AltUp total does not match altup_num_inputs");
    }
    // Gemma3nTextLaurelBlock: linear_left Linear(h, r), linear_right Linear(r, h).
    const std::int64_t rank =
        per(find(each + "laurel"), checked_mul(2 * h, layers), "LAuReL total");
    // The per-layer input width p: per_layer_projection_norm is RMSNorm(p).
    const std::int64_t p = find(root + "per_layer_projection_norm");
    for (std::int64_t i = 0; i < layers; ++i) {
      const std::string at = fmt::format("{}layers.{}.", root, i);
      add(at + "altup.correct_output_scale", {h});
      add(at + "altup.correction_coefs.weight", {n, n});
      add(at + "altup.prediction_coefs.weight", {n * n, n});
      add(at + "altup.modality_router.weight", {n, h});
      add(at + "altup.router_norm.weight", {h});
      add(at + "laurel.linear_left.weight", {rank, h});
      add(at + "laurel.linear_right.weight", {h, rank});
      add(at + "laurel.post_laurel_norm.weight", {h});
      add(at + "per_layer_input_gate.weight", {p, h});
      add(at + "per_layer_projection.weight", {h, p});
      add(at + "post_per_layer_input_norm.weight", {h});
    }
    // The per-layer token table [Vp, L p], the projection of the token embedding onto it
    // Linear(h, L p), its norm, and AltUp's n - 1 projections in and out (ModuleLists of
    // Linear(h, h)).
    const std::int64_t lp = checked_mul(layers, p, "the tensor inventory");
    add(root + "embed_tokens_per_layer.weight",
        {per(find(root + "embed_tokens_per_layer"), lp, "per-layer embedding"), lp});
    add(root + "per_layer_model_projection.weight", {lp, h});
    add(root + "per_layer_projection_norm.weight", {p});
    if (find(root + "altup_projections") >= 0) {
      const std::int64_t count = per(find(root + "altup_projections"), h * h, "AltUp projections");
      for (std::int64_t j = 0; j < count; ++j) {
        add(fmt::format("{}altup_projections.{}.weight", root, j), {h, h});
        add(fmt::format("{}altup_unembed_projections.{}.weight", root, j), {h, h});
      }
    }
  }

  // Gemma3nAudioEncoder (model.audio_tower.*): the subsampler's two Conv2d (no bias) with their
  // cumulative group norms' scale, its input projection, then the conformer blocks.
  void audio_tower() {
    const std::string at = "model.audio_tower.";
    const std::string block = at + "conformer.*.";
    const std::int64_t w = find("model.embed_audio.hard_embedding_norm");  // the tower's width
    if (w <= 0 || find(block + "norm") < 0) {
      gap("Gemma 3n's audio tower is not described");
      return;
    }
    const std::int64_t layers = per(find(block + "norm"), w, "audio conformer norm");
    const std::int64_t square = checked_mul(w, w, "the tensor inventory");
    if (per(find(block + "ffw_layer_start"), layers, "audio feed-forward") != 8 * square + 2 * w ||
        find(block + "ffw_layer_end") != find(block + "ffw_layer_start")) {
      gap("Gemma 3n's audio feed-forward totals do not match its width");
    }
    // attention: 5 [w, w] Linears, 2 norms and per_dim_scale [head_dim].
    const std::int64_t head_dim =
        per(find(block + "attention"), layers, "audio attention") - 5 * square - 2 * w;
    // lconv1d: linear_start [2w, w], linear_end [w, w], 2 norms, depthwise_conv1d [w, 1, k].
    const std::int64_t kernel =
        per(per(find(block + "lconv1d"), layers, "audio lconv1d") - 3 * square, w,
            "audio depthwise conv") -
        2;
    if (head_dim <= 0 || kernel <= 0) gap("Gemma 3n's audio totals do not split");
    // The subsampler's kernels are Gemma3nAudioConfig's 3 x 3 (sscp_conv_kernel_size): the
    // counts alone do not tell other kernels from other channel counts.
    const std::string sscp = at + "subsample_conv_projection.";
    const std::int64_t c0 = per(find(sscp + "conv_0"), 3 * 3 + 1, "audio subsampler conv_0");
    const std::int64_t c1 = per(find(sscp + "conv_1"), 3 * 3 * c0 + 1, "audio subsampler conv_1");
    add(sscp + "conv_0.conv.weight", {c0, 1, 3, 3});
    add(sscp + "conv_0.norm.weight", {c0});
    add(sscp + "conv_1.conv.weight", {c1, c0, 3, 3});
    add(sscp + "conv_1.norm.weight", {c1});
    add(sscp + "input_proj_linear.weight",
        {w, per(find(sscp + "input_proj_linear"), w, "audio input projection")});
    for (std::int64_t i = 0; i < layers; ++i) {
      const std::string c = fmt::format("{}conformer.{}.", at, i);
      for (const char* ffw : {"ffw_layer_start", "ffw_layer_end"}) {
        add(fmt::format("{}{}.pre_layer_norm.weight", c, ffw), {w});
        add(fmt::format("{}{}.ffw_layer_1.weight", c, ffw), {4 * w, w});
        add(fmt::format("{}{}.ffw_layer_2.weight", c, ffw), {w, 4 * w});
        add(fmt::format("{}{}.post_layer_norm.weight", c, ffw), {w});
      }
      add(c + "attention.pre_attn_norm.weight", {w});
      add(c + "attention.attn.per_dim_scale", {head_dim});
      add(c + "attention.attn.relative_position_embedding.pos_proj.weight", {w, w});
      add(c + "attention.attn.q_proj.weight", {w, w});
      add(c + "attention.attn.k_proj.weight", {w, w});
      add(c + "attention.attn.v_proj.weight", {w, w});
      add(c + "attention.post.weight", {w, w});
      add(c + "attention.post_norm.weight", {w});
      add(c + "lconv1d.pre_layer_norm.weight", {w});
      add(c + "lconv1d.linear_start.weight", {2 * w, w});
      add(c + "lconv1d.depthwise_conv1d.weight", {w, 1, kernel});
      add(c + "lconv1d.conv_norm.weight", {w});
      add(c + "lconv1d.linear_end.weight", {w, w});
      add(c + "norm.weight", {w});
    }
  }

  // One block of timm's MobileNetV5 arch_def: EdgeResidual ("er"), UniversalInvertedResidual
  // ("uir": dw_start kernel a, dw_mid kernel k, 0 for none) or MobileAttention ("mqa": MQA heads
  // of head_dim, keys / values strided by kv_stride), expansion e, out channels c.
  struct VisionBlock {
    char kind;  // 'e', 'u', 'm'
    std::int64_t a, k, e, c, heads, head_dim, kv_stride;
  };

  // timm mobilenetv5.py _gen_mobilenet_v5, the mobilenetv5_300m_enc arch_def (stages of 3 / 5 /
  // 37 / 39 blocks), in blocks.{stage}.{index}.
  static std::vector<std::vector<VisionBlock>> mobilenetv5_300m() {
    const auto er = [](std::int64_t c) { return VisionBlock{'e', 0, 3, 4, c, 0, 0, 0}; };
    const auto uir = [](std::int64_t a, std::int64_t k, std::int64_t e, std::int64_t c) {
      return VisionBlock{'u', a, k, e, c, 0, 0, 0};
    };
    const auto mqa = [](std::int64_t heads, std::int64_t d, std::int64_t stride, std::int64_t c) {
      return VisionBlock{'m', 0, 3, 0, c, heads, d, stride};
    };
    std::vector<std::vector<VisionBlock>> stages{
        {er(128), er(128), er(128)},
        {uir(3, 5, 6, 256), uir(5, 0, 4, 256), uir(3, 0, 4, 256), uir(5, 0, 4, 256),
         uir(3, 0, 4, 256)},
        {uir(5, 5, 6, 640)},
        {uir(5, 5, 6, 1280)}};
    for (int i = 0; i < 7; ++i) stages[2].push_back(uir(5, 0, 4, 640));
    stages[2].push_back(uir(0, 0, 1, 640));
    for (int i = 0; i < 14; ++i) {
      stages[2].push_back(mqa(12, 64, 2, 640));
      stages[2].push_back(uir(0, 0, 2, 640));
    }
    for (int i = 0; i < 19; ++i) {
      stages[3].push_back(mqa(16, 96, 1, 1280));
      stages[3].push_back(uir(0, 0, 2, 1280));
    }
    return stages;
  }

  // model.vision_tower.timm_model.*: the converter's names for timm's modules (conv_stem, blocks,
  // msfa). Every conv is bias-free except the stem's (timm ea4f9407); each RmsNorm2d (".bn",
  // ".norm") and LayerScale2d (".layer_scale.gamma") holds one vector. Listed only for the
  // architecture whose count the family holds; the listed total must close to it.
  void vision_tower() {
    const std::string at = "model.vision_tower.timm_model.";
    const std::int64_t params = find("model.vision_tower.timm_model");
    if (params < 0) return;
    const std::size_t first = inventory_.tensors.size();
    const auto conv = [&](const std::string& name, std::int64_t out_ch, std::int64_t in_ch,
                          std::int64_t kernel) {
      add(at + name + ".weight", {out_ch, in_ch, kernel, kernel});
    };
    const auto conv_norm = [&](const std::string& name, std::int64_t out_ch, std::int64_t in_ch,
                               std::int64_t kernel) {
      conv(name + ".conv", out_ch, in_ch, kernel);
      add(at + name + ".bn.weight", {out_ch});
    };
    conv("conv_stem.conv", 64, 3, 3);
    add(at + "conv_stem.conv.bias", {64});
    add(at + "conv_stem.bn.weight", {64});
    std::int64_t in = 64;  // stem_size
    const std::vector<std::vector<VisionBlock>> stages = mobilenetv5_300m();
    for (std::size_t s = 0; s < stages.size(); ++s) {
      for (std::size_t b = 0; b < stages[s].size(); ++b) {
        const VisionBlock& block = stages[s][b];
        const std::string name = fmt::format("blocks.{}.{}.", s, b);
        const std::int64_t c = block.c;
        if (block.kind == 'e') {  // EdgeResidual: conv_exp k x k to in x e, conv_pwl 1 x 1
          conv(name + "conv_exp", in * block.e, in, block.k);
          add(at + name + "bn1.weight", {in * block.e});
          conv(name + "conv_pwl", c, in * block.e, 1);
          add(at + name + "bn2.weight", {c});
        } else if (block.kind == 'u') {
          const std::int64_t mid = in * block.e;
          if (block.a > 0) conv_norm(name + "dw_start", in, 1, block.a);  // depthwise
          conv_norm(name + "pw_exp", mid, in, 1);
          if (block.k > 0) conv_norm(name + "dw_mid", mid, 1, block.k);  // depthwise
          conv_norm(name + "pw_proj", c, mid, 1);
          add(at + name + "layer_scale.gamma", {c});
        } else {  // MobileAttention: norm, MultiQueryAttention2d, layer_scale
          add(at + name + "norm.weight", {in});
          conv(name + "attn.query.proj", block.heads * block.head_dim, in, 1);
          for (const char* kv : {"key", "value"}) {
            if (block.kv_stride > 1) {  // depthwise down_conv + norm before the projection
              conv(fmt::format("{}attn.{}.down_conv", name, kv), in, 1, block.k);
              add(fmt::format("{}{}attn.{}.norm.weight", at, name, kv), {in});
            }
            conv(fmt::format("{}attn.{}.proj", name, kv), block.head_dim, in, 1);
          }
          conv(name + "attn.output.proj", c, block.heads * block.head_dim, 1);
          add(at + name + "layer_scale.gamma", {c});
        }
        in = c;
      }
    }
    // MobileNetV5MultiScaleFusionAdapter: stages 2 and 3 concatenated (640 + 1280), a UIR FFN
    // of expansion 2 to the 2048 output channels, then its norm.
    conv_norm("msfa.ffn.pw_exp", 2 * 1920, 1920, 1);
    conv_norm("msfa.ffn.pw_proj", 2048, 2 * 1920, 1);
    add(at + "msfa.norm.weight", {2048});
    std::int64_t listed = 0;
    for (std::size_t i = first; i < inventory_.tensors.size(); ++i) {
      listed += inventory_.tensors[i].logical_params;
    }
    if (listed != params) {
      inventory_.tensors.resize(first);
      gap(
          fmt::format("the vision tower's {} parameters are not MobileNetV5-300M's, which alone is "
                      "named tensor by tensor",
                      params));
    }
  }

  // Gemma3nMultimodalEmbedder: embedding [vocab, d], hard / soft embedding norms [d],
  // embedding_projection Linear(d, text h); the post-projection norm has no scale (no tensor).
  void embedder(const std::string& at) {
    const std::int64_t d = find(at + ".hard_embedding_norm");
    if (d <= 0) {
      gap(fmt::format("Gemma 3n's {} is not described", at));
      return;
    }
    add(at + ".embedding.weight", {per(find(at + ".embedding"), d, "embedder table"), d});
    add(at + ".hard_embedding_norm.weight", {d});
    add(at + ".soft_embedding_norm.weight", {d});
    add(at + ".embedding_projection.weight", {model_.hidden_size, d});
  }

  const ModelDescription& model_;
  Inventory& inventory_;
  std::string_view base_;
};

void gemma3n_tensors(const ModelDescription& model, Inventory& inventory) {
  Emitter(model, inventory).emit();
}

}  // namespace

std::optional<Naming> gemma3n_naming(const std::string& type) {
  if (type != "gemma3n") return std::nullopt;
  return Naming{.label =
                    "Gemma 3n (model.language_model.*: AltUp, LAuReL, per-layer embeddings; "
                    "model.audio_tower.conformer.N; model.embed_audio / embed_vision)",
                .root = "model.language_model.",
                .family_tensors = gemma3n_tensors};
}

}  // namespace trace::checkpoint
