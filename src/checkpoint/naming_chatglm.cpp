// Checkpoint namings of ChatGLM (naming.hpp).
#include "naming.hpp"

namespace trace::checkpoint {

namespace {

// The first ChatGLM-6B (THUDM/chatglm-6b's modeling_chatglm.py, which chatglm_v1.cpp marks with
// ModelDescription::text_model_type "chatglm_v1"): ChatGLMForConditionalGeneration.{transformer,
// lm_head} with transformer.word_embeddings, transformer.layers.N.{input_layernorm,
// attention.query_key_value, attention.dense, post_attention_layernorm, mlp.dense_h_to_4h,
// mlp.dense_4h_to_h} (LayerNorms with bias, every Linear biased), transformer.final_layernorm.
// The description's StoredExtras are each layer's attention.rotary_emb.inv_freq buffer and the
// lm_head.weight copy of the tied embedding THUDM's .bin shards hold (ChatGLM-6B #665: "lm_head
// .weight 在 pytorch_model-00008-of-00008.bin"). Sources: tests/data/configs/
// SOURCES-chatglm-names.md.
Naming chatglm_v1_naming() {
  return {.label = "ChatGLM-6B (transformer.layers.N, attention.query_key_value, dense_h_to_4h)",
          .root = "transformer.",
          .embedding = "word_embeddings",
          .renames = {{"", ".attention.qkv_proj.", ".attention.query_key_value."},
                      {"", ".attention.o_proj.", ".attention.dense."},
                      {"", ".mlp.up_proj.", ".mlp.dense_h_to_4h."},
                      {"", ".mlp.down_proj.", ".mlp.dense_4h_to_h."}},
          .buffers = Buffers::stored_extras};
}

// ChatGLM2 / ChatGLM3 / GLM-4-9B's remote modeling_chatglm.py (ChatGLMModel): transformer.
// embedding.word_embeddings, transformer.encoder.layers.N.{input_layernorm,
// self_attention.query_key_value, self_attention.dense, post_attention_layernorm,
// mlp.dense_h_to_4h (gate and up fused), mlp.dense_4h_to_h}, transformer.encoder.final_layernorm,
// the untied head as transformer.output_layer, and the transformer.rotary_pos_emb.inv_freq buffer
// (the description's StoredExtra): chatglm2-6b's pytorch_model.bin.index.json lists exactly these
// 200 names (SOURCES-chatglm-names.md); vLLM's chatglm.py skips the buffer when loading.
Naming chatglm2_naming() {
  return {.label = "ChatGLM2/3 (transformer.encoder.layers.N, self_attention, output_layer)",
          .root = "transformer.",
          .embedding = "embedding.word_embeddings",
          .renames = {{"", ".self_attention.qkv_proj.", ".self_attention.query_key_value."},
                      {"", ".self_attention.o_proj.", ".self_attention.dense."},
                      {"", ".mlp.gate_up_proj.", ".mlp.dense_h_to_4h."},
                      {"", ".mlp.down_proj.", ".mlp.dense_4h_to_h."},
                      {"", "lm_head.", "transformer.output_layer."}},
          .layers = "encoder.layers",
          .buffers = Buffers::stored_extras,
          .final_norm_root = "transformer.encoder."};
}

}  // namespace

std::optional<Naming> chatglm_naming(const std::string& type, const std::string& text_type) {
  if (type != "chatglm") return std::nullopt;
  return text_type == "chatglm_v1" ? chatglm_v1_naming() : chatglm2_naming();
}

}  // namespace trace::checkpoint
