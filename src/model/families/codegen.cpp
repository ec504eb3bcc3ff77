// CodeGen (model_type codegen: Salesforce/codegen-350M/2B/6B/16B-nl/multi/mono, and the CodeGen2
// uploads codegen2-1B/3_7B/7B/16B, whose remote code keeps the same module tree): GPT-J's
// parallel block (one ln_1 feeding attention and MLP), a fused qkv_proj and an out_proj without
// biases, partial RoPE over rotary_dim dims per head, biased fc_in/fc_out, and an untied lm_head
// with a bias.
// Tensor list: transformers models/codegen/modeling_codegen.py.
#include <algorithm>

#include "family.hpp"

namespace trace::family {

namespace {

std::string safetensors_dtype(const std::string& torch_dtype) {
  if (torch_dtype == "float16") return "F16";
  if (torch_dtype == "bfloat16") return "BF16";
  return "F32";
}

}  // namespace

ModelDescription build_codegen(const ConfigReader& config) {
  ModelDescription model;
  const std::int64_t vocab = config.require_int({"vocab_size"}, 1, k_max_vocab);
  const std::int64_t hidden = config.require_int({"n_embd", "hidden_size"}, 1, k_max_width);
  const std::int64_t layers = config.require_int({"n_layer", "num_hidden_layers"}, 1, k_max_layers);
  const HeadShape shape =
      read_head_shape(config, hidden, {"n_head", "num_attention_heads"}, {}, false);
  fill_decoder_basics(model, config, vocab, hidden, false,
                      {"n_positions", "max_position_embeddings"});
  if (model.max_position_embeddings == 0) model.max_position_embeddings = 2048;  // class default
  model.family = "CodeGen (decoder-only, partial RoPE, parallel attention+MLP, LayerNorm)";
  model.position = PositionKind::rope;
  model.lm_head_bias = true;

  // CodeGenConfig defaults rotary_dim to 64; an explicit null rotates the whole head.
  std::int64_t rotary = shape.head_dim;
  if (config.has("rotary_dim")) {
    rotary = config.require_int({"rotary_dim"}, 1, shape.head_dim);
  } else if (!config.json().contains("rotary_dim")) {
    rotary = std::min<std::int64_t>(64, shape.head_dim);
  }
  if (rotary % 2 != 0) config.fail("rotary_dim", "must be even (RoPE rotates pairs of dims)");

  DecoderLayout layout;
  layout.norm_kind = NormKind::layer_norm;
  layout.norms = DecoderLayout::Norms::parallel;
  layout.norm_names = {"ln_1"};
  layout.final_norm_name = "ln_f";
  layout.attention_name = "attn";
  layout.fused_qkv = true;
  layout.qkv_bias = layout.o_bias = false;
  const std::int64_t inner = config.optional_int({"n_inner"}, 1, k_max_width).value_or(4 * hidden);
  const std::string activation = config.optional_string("activation_function").value_or("gelu_new");
  layout.mlp = Mlp{MlpKind::plain, activation, hidden, inner, true, true, false};
  layout.rotary_dim = rotary;
  model.stacks.push_back(decoder_stack(hidden, layers, shape, layout));

  // Buffers some .bin uploads hold, never parameters: codegen-350M-mono's loader warns about 20
  // unused transformer.h.N.attn.causal_mask tensors; Salesforce's jaxformer-to-HF converter also
  // writes a masked_bias scalar per layer.
  const std::int64_t positions = model.max_position_embeddings;
  StoredExtra masks{"transformer.h.*.attn.causal_mask",
                    layers,
                    checked_mul(positions, positions, "the mask size"),
                    "BOOL",
                    false,
                    "causal-mask buffers (1 x 1 x n_positions^2) in the Salesforce .bin uploads; "
                    "not parameters"};
  masks.shape = {1, 1, positions, positions};
  model.stored_extras.push_back(std::move(masks));
  model.stored_extras.push_back(StoredExtra{
      "transformer.h.*.attn.masked_bias", layers, 1, safetensors_dtype(model.torch_dtype), false,
      "-1e9 scalar written by Salesforce's jaxformer converter (CodeGen2 era); not a parameter"});

  note_defaults(model, config, "CodeGenConfig",
                {{"rotary_dim", "64"},
                 {"n_inner", "null (4 x n_embd)"},
                 {"activation_function", "gelu_new"},
                 {"n_positions", "2048"},
                 {"tie_word_embeddings", "false"}});
  return model;
}

}  // namespace trace::family
