// The checkpoint naming of each family (naming.hpp): transformers' module names under model.*
// unless a table below says otherwise, each written from the modeling file or published
// checkpoint it cites.
#include "naming.hpp"

namespace trace::checkpoint {

namespace {

Naming plain_naming() {
  return {.label = "transformers (model.*)"};
}

// MixtralSparseMoeBlock: block_sparse_moe.gate, experts.E.w1 (gate) / w3 (up) / w2 (down).
Naming mixtral_naming() {
  return {.label = "transformers Mixtral (model.*, block_sparse_moe, w1/w2/w3)",
          .renames = {{"", ".mlp.gate.", ".block_sparse_moe.gate."},
                      {"", ".mlp.experts.", ".block_sparse_moe.experts."},
                      {".block_sparse_moe.experts.", ".gate_proj.", ".w1."},
                      {".block_sparse_moe.experts.", ".up_proj.", ".w3."},
                      {".block_sparse_moe.experts.", ".down_proj.", ".w2."}}};
}

// modeling_phi.py PhiAttention: q/k/v_proj and `dense`; PhiMLP: fc1, fc2; model.final_layernorm.
Naming phi_naming() {
  return {.label = "transformers Phi (model.*, self_attn.dense, mlp.fc1/fc2)",
          .renames = {{"", ".self_attn.o_proj.", ".self_attn.dense."},
                      {"", ".mlp.up_proj.", ".mlp.fc1."},
                      {"", ".mlp.down_proj.", ".mlp.fc2."}}};
}

// modeling_gpt2.py GPT2Model, as openai-community/gpt2's model.safetensors stores it (no
// "transformer." prefix): wte, wpe, h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
// mlp.c_proj}, ln_f; Conv1D weights [in, out]; h.N.attn.bias causal masks.
Naming gpt2_naming() {
  return {.label = "GPT-2 (wte, wpe, h.N, Conv1D [in, out])",
          .root = "",
          .embedding = "wte",
          .renames = {{"", ".attn.qkv_proj.", ".attn.c_attn."},
                      {"", ".attn.o_proj.", ".attn.c_proj."},
                      {"", ".mlp.up_proj.", ".mlp.c_fc."},
                      {"", ".mlp.down_proj.", ".mlp.c_proj."}},
          .layers = "h",
          .positions = "wpe",
          .conv1d = true,
          .buffers = Buffers::gpt2_masks};
}

// BLOOM's block names, which Falcon kept: self_attention.{query_key_value, dense},
// mlp.{dense_h_to_4h, dense_4h_to_h}.
std::vector<Rename> bloom_block_renames() {
  return {{"", ".self_attention.qkv_proj.", ".self_attention.query_key_value."},
          {"", ".self_attention.o_proj.", ".self_attention.dense."},
          {"", ".mlp.up_proj.", ".mlp.dense_h_to_4h."},
          {"", ".mlp.down_proj.", ".mlp.dense_4h_to_h."}};
}

// modeling_falcon.py: transformer.word_embeddings, transformer.h.N.self_attention.
// {query_key_value, dense}, mlp.{dense_h_to_4h, dense_4h_to_h}, transformer.ln_f; tiiuae's uploads
// also store lm_head.weight although it is tied.
Naming falcon_naming() {
  return {.label = "Falcon (transformer.h.N, query_key_value, dense_h_to_4h)",
          .root = "transformer.",
          .embedding = "word_embeddings",
          .renames = bloom_block_renames(),
          .layers = "h",
          .buffers = Buffers::tied_head_copy};
}

// modeling_gpt_neox.py: gpt_neox.embed_in, gpt_neox.layers.N.attention.{query_key_value, dense},
// mlp.{dense_h_to_4h, dense_4h_to_h}, gpt_neox.final_layer_norm, embed_out (top level);
// older uploads (Pythia, NeoX-20B) also store attention.bias / masked_bias / rotary_emb.inv_freq.
Naming gpt_neox_naming() {
  return {.label = "GPT-NeoX (gpt_neox.*, query_key_value, embed_out)",
          .root = "gpt_neox.",
          .embedding = "embed_in",
          .renames = {{"", ".attention.qkv_proj.", ".attention.query_key_value."},
                      {"", ".attention.o_proj.", ".attention.dense."},
                      {"", ".mlp.up_proj.", ".mlp.dense_h_to_4h."},
                      {"", ".mlp.down_proj.", ".mlp.dense_4h_to_h."},
                      {"", "lm_head.", "embed_out."}},
          .buffers = Buffers::neox_masks};
}

// modeling_bloom.py, as bigscience's uploads store it (saved from BloomModel: no "transformer."
// prefix; bloom-560m's 293 tensors hold no head and no buffer, SOURCES-gpt-families.md;
// onnxruntime/mobius#113): word_embeddings, word_embeddings_layernorm, h.N.{input_layernorm,
// self_attention.query_key_value, self_attention.dense, post_attention_layernorm,
// mlp.dense_h_to_4h, mlp.dense_4h_to_h}, ln_f; nn.Linear weights [out, in], all biased.
Naming bloom_naming() {
  return {.label = "BLOOM (word_embeddings, h.N, query_key_value, no wrapper prefix)",
          .root = "",
          .embedding = "word_embeddings",
          .renames = bloom_block_renames(),
          .layers = "h"};
}

// modeling_gpt_bigcode.py (base_model_prefix "transformer"): transformer.wte, wpe,
// h.N.{ln_1, attn.c_attn (fused q, k, v; H + 2 head_dim rows under multi_query), attn.c_proj,
// ln_2, mlp.c_fc, mlp.c_proj}, ln_f; nn.Linear, not GPT-2's Conv1D, so weights [out, in]; the
// tied head not stored and the causal mask non-persistent (SOURCES-gpt-families.md).
Naming gpt_bigcode_naming() {
  return {.label = "GPT-BigCode (transformer.h.N, attn.c_attn, nn.Linear)",
          .root = "transformer.",
          .embedding = "wte",
          .renames = {{"", ".attn.qkv_proj.", ".attn.c_attn."},
                      {"", ".attn.o_proj.", ".attn.c_proj."},
                      {"", ".mlp.up_proj.", ".mlp.c_fc."},
                      {"", ".mlp.down_proj.", ".mlp.c_proj."}},
          .layers = "h",
          .positions = "wpe"};
}

// modeling_gptj.py / modeling_codegen.py: transformer.wte, h.N.{ln_1, attn.{q,k,v}_proj
// (CodeGen: one fused attn.qkv_proj), attn.out_proj, mlp.fc_in, mlp.fc_out}, ln_f, an untied
// lm_head with bias; the causal-mask buffers old .bin uploads hold (GPT-J's h.N.attn.bias,
// CodeGen's h.N.attn.causal_mask and masked_bias) are the description's StoredExtras
// (SOURCES-gpt-families.md, SOURCES-codegen.md).
Naming gptj_naming(bool codegen) {
  return {.label = codegen ? "CodeGen (transformer.h.N, attn.qkv_proj, mlp.fc_in)"
                           : "GPT-J (transformer.h.N, attn.q_proj, mlp.fc_in)",
          .root = "transformer.",
          .embedding = "wte",
          .renames = {{"", ".attn.o_proj.", ".attn.out_proj."},
                      {"", ".mlp.up_proj.", ".mlp.fc_in."},
                      {"", ".mlp.down_proj.", ".mlp.fc_out."}},
          .layers = "h",
          .buffers = Buffers::stored_extras};
}

// modeling_gpt_neo.py: transformer.wte, wpe, h.N.{ln_1, attn.attention.{q,k,v}_proj (no bias),
// attn.attention.out_proj (biased), ln_2, mlp.c_fc, mlp.c_proj (nn.Linear)}, ln_f, the head tied;
// the uint8 attn.attention.bias masks of the global layers and the masked_bias scalars that
// EleutherAI's transformers-4.5 uploads hold are the description's StoredExtras
// (SOURCES-gpt_neo.md).
Naming gpt_neo_naming() {
  return {.label = "GPT-Neo (transformer.h.N, attn.attention, mlp.c_fc)",
          .root = "transformer.",
          .embedding = "wte",
          .renames = {{"", ".attention.o_proj.", ".attention.out_proj."},
                      {"", ".mlp.up_proj.", ".mlp.c_fc."},
                      {"", ".mlp.down_proj.", ".mlp.c_proj."}},
          .layers = "h",
          .positions = "wpe",
          .buffers = Buffers::stored_extras};
}

// BertLayer's module names (RoBERTa and ELECTRA reuse the class), then where the family keeps
// its extra modules (BertPooler; ELECTRA's embeddings_project) under its wrapper prefix.
std::vector<Rename> bert_layer_renames(Rename under_root) {
  return {{"", ".attention.q_proj.", ".attention.self.query."},
          {"", ".attention.k_proj.", ".attention.self.key."},
          {"", ".attention.v_proj.", ".attention.self.value."},
          {"", ".attention.o_proj.", ".attention.output.dense."},
          {"", ".mlp.up_proj.", ".intermediate.dense."},
          {"", ".mlp.down_proj.", ".output.dense."},
          under_root};
}

// The encoders that kept BERT's module names under their own root: embeddings.{word,
// position, token_type}_embeddings, encoder.layer.N with bert_layer_renames, one extra module
// (`under_root`) moved under the root, the stored buffers of their description.
Naming bert_style_naming(std::string_view label, std::string_view root, Rename under_root) {
  return {.label = label,
          .root = root,
          .embedding = "embeddings.word_embeddings",
          .renames = bert_layer_renames(under_root),
          .layers = "encoder.layer",
          .positions = "embeddings.position_embeddings",
          .token_types = "embeddings.token_type_embeddings",
          .buffers = Buffers::stored_extras};
}

// modeling_bert.py BertForPreTraining, as Google's uploads store it: bert.embeddings.*,
// bert.encoder.layer.N.attention.self.{query,key,value}, attention.output.dense,
// intermediate.dense, output.dense, bert.pooler.dense, cls.*; LayerNorms as gamma/beta (the TF
// names kept). The Builder spells them weight/bias for the other classes (below), and lists
// the position_ids buffer uploads saved by transformers < 4.31 hold.
Naming bert_naming() {
  Naming naming =
      bert_style_naming("BERT (bert.encoder.layer.N, attention.self.query, LayerNorm gamma/beta)",
                        "bert.", {"", "pooler.", "bert.pooler."});
  naming.gamma_beta = true;
  return naming;
}

// modeling_roberta.py (modeling_xlm_roberta.py and modeling_camembert.py copy it), as
// FacebookAI/roberta-*, FacebookAI/xlm-roberta-* and almanach/camembert-base store it: BERT's
// layer names under roberta.* (base_model_prefix of all three), LayerNorm weight/bias, the heads
// at top level (lm_head.{dense, layer_norm, bias}: the decoder weight is the tied word embedding
// and lm_head.decoder.bias is lm_head.bias, neither stored again; classifier.*, qa_outputs),
// roberta.pooler where the upload holds one, and the position_ids buffer uploads saved by
// transformers < 4.31 hold (roberta-base does, xlm-roberta-base does not).
Naming roberta_naming() {
  Naming naming =
      bert_style_naming("RoBERTa (roberta.encoder.layer.N, attention.self.query, lm_head.*)",
                        "roberta.", {"", "pooler.", "roberta.pooler."});
  naming.encoder_heads = true;
  return naming;
}

// modeling_electra.py, as google/electra-* store it: BERT's layer names under electra.*,
// LayerNorm weight/bias, embedding tables embedding_size wide, electra.embeddings_project where
// that differs from hidden_size, the heads at top level (discriminator_predictions.*,
// generator_predictions.*, generator_lm_head.bias: its weight is the tied word embedding). The
// base and large discriminators also store an embeddings_project nothing builds (transformers
// #7530): a buffer here, as the description does not count it.
Naming electra_naming() {
  Naming naming =
      bert_style_naming("ELECTRA (electra.encoder.layer.N, attention.self.query, *_predictions)",
                        "electra.", {"", "embeddings_project.", "electra.embeddings_project."});
  naming.encoder_heads = true;
  return naming;
}

// modeling_distilbert.py, as distilbert/distilbert-base-* store it: distilbert.embeddings.
// {word,position}_embeddings (no token types; the position table is stored even when
// sinusoidal) and LayerNorm, distilbert.transformer.layer.N.{attention.{q,k,v,out}_lin,
// sa_layer_norm, ffn.lin1, ffn.lin2, output_layer_norm}, the heads at top level (vocab_transform,
// vocab_layer_norm, vocab_projector.bias: its weight is the tied word embedding; pre_classifier,
// classifier, qa_outputs). No position_ids: DistilBERT registers it non-persistent, and the
// uploads are F32 only.
Naming distilbert_naming() {
  return {.label = "DistilBERT (distilbert.transformer.layer.N, attention.q_lin, ffn.lin1)",
          .root = "distilbert.",
          .embedding = "embeddings.word_embeddings",
          .renames = {{"", ".attention.q_proj.", ".attention.q_lin."},
                      {"", ".attention.k_proj.", ".attention.k_lin."},
                      {"", ".attention.v_proj.", ".attention.v_lin."},
                      {"", ".attention.o_proj.", ".attention.out_lin."},
                      {"", ".mlp.up_proj.", ".ffn.lin1."},
                      {"", ".mlp.down_proj.", ".ffn.lin2."}},
          .layers = "transformer.layer",
          .positions = "embeddings.position_embeddings",
          .encoder_heads = true};
}

// modeling_bart.py / modeling_mbart.py, as the *ForConditionalGeneration and
// *ForSequenceClassification uploads store them: model.shared, model.{encoder,decoder}.
// {embed_positions (max_position_embeddings + 2 rows), layernorm_embedding, layer_norm (mBART's
// final norms), layers.N.{self_attn, encoder_attn}.{q,k,v,out}_proj, self_attn_layer_norm,
// encoder_attn_layer_norm, fc1, fc2, final_layer_norm}; the heads at top level
// (classification_head.{dense, out_proj}, qa_outputs); final_logits_bias [1, V] a buffer.
Naming bart_naming() {
  return {.label = "BART (model.shared, model.encoder/decoder.layers.N, out_proj, fc1/fc2)",
          .embedding = "shared",
          .renames = {{"", ".self_attn.o_proj.", ".self_attn.out_proj."},
                      {"", ".encoder_attn.o_proj.", ".encoder_attn.out_proj."},
                      {"", ".mlp.up_proj.", ".fc1."},
                      {"", ".mlp.down_proj.", ".fc2."}},
          .positions = "decoder.embed_positions",
          .encoder_heads = true,
          .stack_layers = true,
          .buffers = Buffers::seq2seq,
          .bare_prefix = "model."};
}

// A vision tower in timm-like names under `scope` (Qwen's visual.*, InternViT's vision_model.*,
// DeepSeek-VL2's vision.*): attn.qkv and attn.proj, and where given the MLP's two Linears.
std::vector<Rename> tower_renames(std::string_view scope, std::string_view fc1,
                                  std::string_view fc2) {
  std::vector<Rename> renames{{scope, ".attn.qkv_proj.", ".attn.qkv."},
                              {scope, ".attn.o_proj.", ".attn.proj."}};
  if (!fc1.empty()) {
    renames.push_back({scope, ".mlp.up_proj.", fc1});
    renames.push_back({scope, ".mlp.down_proj.", fc2});
  }
  return renames;
}

std::vector<Rename> qwen_tower_renames(std::string_view fc1, std::string_view fc2) {
  return tower_renames("visual.", fc1, fc2);
}

// InternVLChatModel (OpenGVLab's remote modeling_internvl_chat.py and modeling_intern_vit.py)
// as InternVL2_5-8B's index names it (SOURCES-internvl.md): the language model under
// language_model.* in its own family's names (Qwen2, Qwen3, Llama, Phi-3: model.* and lm_head;
// InternLM2: model.tok_embeddings, attention.wqkv, feed_forward.w1/w3/w2, output); the tower
// as vision_model.embeddings.{patch_embedding, class_embedding, position_embedding} and
// vision_model.encoder.layers.N.{attn.qkv, attn.proj, attn.q_norm / k_norm, mlp.fc1, mlp.fc2,
// norm1, norm2, ls1, ls2}; the projector mlp1.{0, 1, 3}. Other language models are not named.
Naming internvl_chat_naming(const std::string& text_type) {
  Naming naming{.label = "InternVL (language_model.*, vision_model.encoder.layers.N, mlp1)",
                .root = "language_model.model.",
                .vision_root = "",
                .vision_layers = "layers"};
  if (text_type == "internlm2") {
    naming.embedding = "tok_embeddings";
    naming.renames = {{"", ".attention.qkv_proj.", ".attention.wqkv."},
                      {"", ".attention.o_proj.", ".attention.wo."},
                      {"", ".mlp.gate_proj.", ".feed_forward.w1."},
                      {"", ".mlp.up_proj.", ".feed_forward.w3."},
                      {"", ".mlp.down_proj.", ".feed_forward.w2."},
                      {"", "lm_head.", "language_model.output."}};
  } else if (text_type == "qwen2" || text_type == "qwen3" || text_type == "llama" ||
             text_type == "phi3") {
    naming.renames = {{"", "lm_head.", "language_model.lm_head."}};
  } else {
    naming.known = false;
  }
  // The tower's first: the text model's MLP renames would match its mlp.up_proj too.
  const std::vector<Rename> tower = tower_renames("vision_model.", ".mlp.fc1.", ".mlp.fc2.");
  naming.renames.insert(naming.renames.begin(), tower.begin(), tower.end());
  return naming;
}

// modeling_t5.py, modeling_mt5.py and modeling_umt5.py, whose classes save without a wrapper:
// shared, {encoder,decoder}.block.N.layer.K — K 0: SelfAttention.{q,k,v,o} (with
// relative_attention_bias [buckets, heads] in block 0; umT5: every block) and layer_norm; in the
// decoder K 1: EncDecAttention.{q,k,v,o} and layer_norm; last: DenseReluDense.{wi | wi_0, wi_1},
// wo and layer_norm — {encoder,decoder}.final_layer_norm, lm_head where untied (v1.1, mT5,
// umT5). T5EncoderModel (FLUX's, SD3's text encoder) and UMT5EncoderModel (Wan's) hold shared and
// the encoder alone under the same names. Uploads saved before safetensors dropped tied
// duplicates keep encoder.embed_tokens / decoder.embed_tokens (and lm_head, tied): optional.
Naming t5_naming() {
  return {.label = "T5 (shared, encoder/decoder.block.N.layer.K, DenseReluDense)",
          .root = "",
          .embedding = "shared",
          .renames = {{"", ".mlp.gate_proj.", ".mlp.wi_0."},
                      {"", ".mlp.up_proj.", ".mlp.wi_1."},
                      {"", ".mlp.down_proj.", ".mlp.wo."},
                      {"encoder.", ".mlp.", ".layer.1.DenseReluDense."},
                      {"decoder.", ".mlp.", ".layer.2.DenseReluDense."},
                      {"", ".SelfAttention.", ".layer.0.SelfAttention."},
                      {"", ".EncDecAttention.", ".layer.1.EncDecAttention."},
                      {"", "Attention.q_proj.", "Attention.q."},
                      {"", "Attention.k_proj.", "Attention.k."},
                      {"", "Attention.v_proj.", "Attention.v."},
                      {"", "Attention.o_proj.", "Attention.o."}},
          .layers = "block",
          .stack_layers = true,
          .buffers = Buffers::seq2seq,
          .plain_mlp_up = Rename{"", ".mlp.up_proj.", ".mlp.wi."},
          .relative_bias = "relative_attention_bias"};
}

// modeling_albert.py, as albert/albert-*-v2 store it: albert.embeddings.* (embedding_size wide),
// albert.encoder.embedding_hidden_mapping_in, the shared layers as albert.encoder.
// albert_layer_groups.G.albert_layers.K.{attention.{query,key,value,dense,LayerNorm}, ffn,
// ffn_output, full_layer_layer_norm}, albert.pooler (a bare Linear), the MLM head at top level
// (predictions.{dense, LayerNorm, bias}). albert-base-v2 also stores predictions.decoder.bias, a
// second copy of predictions.bias (Hub total = parameters + vocab_size), and uploads saved by
// transformers < 4.31 the position_ids buffer: both are the description's StoredExtras.
Naming albert_naming() {
  return {.label = "ALBERT (albert.encoder.albert_layer_groups.G.albert_layers.K, ffn)",
          .root = "albert.",
          .embedding = "embeddings.word_embeddings",
          .renames = {{"", ".attention.q_proj.", ".attention.query."},
                      {"", ".attention.k_proj.", ".attention.key."},
                      {"", ".attention.v_proj.", ".attention.value."},
                      {"", ".attention.o_proj.", ".attention.dense."},
                      {"", ".mlp.up_proj.", ".ffn."},
                      {"", ".mlp.down_proj.", ".ffn_output."}},
          .layers = "encoder.albert_layer_groups",
          .positions = "embeddings.position_embeddings",
          .token_types = "embeddings.token_type_embeddings",
          .encoder_heads = true,
          .buffers = Buffers::stored_extras,
          .inner_layers = "albert_layers",
          .under_root = {"encoder.", "pooler"}};
}

// modeling_deberta.py / modeling_deberta_v2.py, as microsoft/deberta-base and deberta-v3-base
// store them (their load warnings list the unused keys): deberta.embeddings.*,
// deberta.encoder.{rel_embeddings, LayerNorm, conv}, deberta.encoder.layer.N.attention.self.
// {query,key,value}_proj (v2) or in_proj + q_bias + v_bias (v1), pos_key_proj / pos_query_proj
// (v1: pos_proj / pos_q_proj), then BERT's output names; LayerNorm weight/bias. The heads sit at
// top level: lm_predictions.lm_head.*, mask_predictions.* (v3's RTD head), cls.predictions.*
// (legacy MaskedLM), pooler.dense, classifier, qa_outputs. Microsoft's uploads keep an unused
// absolute position table (the description's StoredExtra); fine-tunes saved by transformers
// < 4.31 hold deberta.embeddings.position_ids. deberta-v3-base holds neither position_ids nor
// the tied MLM decoder (210 tensors).
Naming deberta_naming(bool v2) {
  std::vector<Rename> renames = {{"", ".attention.k_proj.", ".attention.self.key_proj."},
                                 {"", ".attention.v_proj.", ".attention.self.value_proj."},
                                 {"", ".attention.o_proj.", ".attention.output.dense."},
                                 {"", ".mlp.up_proj.", ".intermediate.dense."},
                                 {"", ".mlp.down_proj.", ".output.dense."},
                                 {"", "cls.predictions.transform.bias.", "cls.predictions.bias."}};
  renames.push_back(v2 ? Rename{"", ".attention.q_proj.", ".attention.self.query_proj."}
                       : Rename{"", ".attention.qkv_proj.", ".attention.self.in_proj."});
  return {.label = v2 ? "DeBERTa-v2 (deberta.encoder.layer.N, attention.self.query_proj)"
                      : "DeBERTa (deberta.encoder.layer.N, attention.self.in_proj, q_bias)",
          .root = "deberta.",
          .embedding = "embeddings.word_embeddings",
          .renames = std::move(renames),
          .layers = "encoder.layer",
          .positions = "embeddings.position_embeddings",
          .token_types = "embeddings.token_type_embeddings",
          .encoder_heads = true,
          .buffers = Buffers::stored_extras,
          .under_root = {"embeddings.", "encoder."},
          .split_qkv_bias = !v2,
          .position_ids = "embeddings.position_ids"};
}

// modeling_modernbert.py, as answerdotai/ModernBERT-* store it (base_model_prefix "model"):
// model.embeddings.{tok_embeddings, norm}, model.layers.N.{attn_norm (not in layer 0), attn.Wqkv,
// attn.Wo, mlp_norm, mlp.Wi (GeGLU input and gate fused), mlp.Wo}, model.final_norm; the heads at
// top level: head.{dense, norm}, decoder.bias (its weight is the tied tok_embeddings: not in
// ModernBERT-base's header; the ettin uploads store it, hence a buffer), classifier.
Naming modernbert_naming() {
  return {.label = "ModernBERT (model.layers.N, attn.Wqkv, mlp.Wi, head, decoder)",
          .embedding = "embeddings.tok_embeddings",
          .renames = {{"", ".attn.qkv_proj.", ".attn.Wqkv."},
                      {"", ".attn.o_proj.", ".attn.Wo."},
                      {"", ".mlp.gate_up_proj.", ".mlp.Wi."},
                      {"", ".mlp.down_proj.", ".mlp.Wo."},
                      {"", "lm_head.", "decoder."}},
          .encoder_heads = true,
          .buffers = Buffers::tied_head_copy,
          .bias_optional = true};
}

// modeling_mpnet.py, as microsoft/mpnet-base (MPNetForMaskedLM) stores it: mpnet.embeddings.
// {word_embeddings, position_embeddings, LayerNorm} (no token types), mpnet.encoder.
// relative_attention_bias [buckets, heads], mpnet.encoder.layer.N.{attention.attn.{q,k,v,o},
// attention.LayerNorm, intermediate.dense, output.dense, output.LayerNorm}, mpnet.pooler where
// the class builds one, the heads at top level (lm_head.{dense, layer_norm, bias}: the decoder
// weight is the tied word table; classifier.*, qa_outputs); the position_ids buffer uploads
// saved by transformers < 4.31 hold. A bare MPNetModel (sentence-transformers) has no "mpnet.".
Naming mpnet_naming() {
  return {.label = "MPNet (mpnet.encoder.layer.N, attention.attn.q, relative_attention_bias)",
          .root = "mpnet.",
          .embedding = "embeddings.word_embeddings",
          .renames = {{"", ".attention.q_proj.", ".attention.attn.q."},
                      {"", ".attention.k_proj.", ".attention.attn.k."},
                      {"", ".attention.v_proj.", ".attention.attn.v."},
                      {"", ".attention.o_proj.", ".attention.attn.o."},
                      {"", ".mlp.up_proj.", ".intermediate.dense."},
                      {"", ".mlp.down_proj.", ".output.dense."}},
          .layers = "encoder.layer",
          .positions = "embeddings.position_embeddings",
          .encoder_heads = true,
          .buffers = Buffers::stored_extras,
          .under_root = {"encoder.", "pooler"}};
}

// modeling_gpt_oss.py GptOssMLP: mlp.router (weight, bias), mlp.experts holding every expert in
// gate_up_proj / down_proj (+ _bias); openai's MXFP4 upload stores them as _blocks / _scales.
Naming gpt_oss_naming() {
  return {.label = "gpt-oss (model.*, mlp.router, stacked experts)",
          .renames = {{"", ".mlp.gate.", ".mlp.router."}},
          .stacked_experts = StackedExperts::in_out};
}

// The Qwen vision towers' spellings of trace's module names (visual.blocks.N): the fused
// attn.qkv and attn.proj; a plain MLP's two Linears as `fc1` / `fc2` (Qwen2-VL's "fc1", Qwen3-VL's
// "linear_fc1"); a gated MLP (Qwen2.5-VL) keeps gate_proj / up_proj / down_proj: `fc1` empty.

// The CLIP and SigLIP towers' spellings (encoder.layers.N under `scope`): self_attn.out_proj,
// mlp.fc1 / fc2, and post_layernorm beside the encoder, not inside it.
std::vector<Rename> clip_tower_renames(std::string_view scope) {
  return {{scope, ".encoder.post_layernorm", ".post_layernorm"},
          {scope, ".self_attn.o_proj.", ".self_attn.out_proj."},
          {scope, ".mlp.up_proj.", ".mlp.fc1."},
          {scope, ".mlp.down_proj.", ".mlp.fc2."}};
}

// LlavaForConditionalGeneration (and LLaVA-NeXT, LLaVA-NeXT-Video, LLaVA-OneVision) as the
// llava-hf uploads store it (transformers' convert_llava*_weights_to_hf.py, 4.36 to 4.51;
// OneVision's tower SigLIP: no class_embedding or pre_layrnorm, a biased patch Conv2d, the
// pooling head only where vision_use_head says so): the text model under
// language_model.model.* with language_model.lm_head, the CLIP tower under
// vision_tower.vision_model.{embeddings.{patch_embedding, class_embedding,
// position_embedding}, pre_layrnorm, encoder.layers.N (self_attn.q/k/v/out_proj, layer_norm1 /
// 2, mlp.fc1 / fc2, all biased), post_layernorm}, multi_modal_projector.linear_1 / linear_2 and
// (NeXT) a bare image_newline. modeling_llava(_next).py, modeling_clip.py; llava-1.5-7b-hf's
// 686 tensors (docs/checkpoint.md). Saves by transformers >= 4.52 (model.language_model.*):
// totals only.
// pixtral-12b's Pixtral tower (mistral-community/pixtral-12b, written by transformers'
// convert_pixtral_weights_to_hf.py, 4.45: "vision_encoder" -> "vision_tower",
// transformer.layers.N.{attention_norm, attention.{q,k,v,o}_proj, ffn_norm,
// feed_forward.{gate,up,down}_proj}) sits under vision_tower.* beside vision_tower.patch_conv and
// vision_tower.ln_pre, all bias-free; the CLIP renames are scoped to vision_tower.vision_model.
Naming llava_naming() {
  std::vector<Rename> renames = clip_tower_renames("vision_tower.vision_model.");
  renames.insert(renames.begin(), {"", "lm_head.", "language_model.lm_head."});
  renames.push_back({"vision_tower.transformer.", ".mlp.", ".feed_forward."});
  return {.label = "LLaVA (language_model.model.*, vision_tower.vision_model.*)",
          .root = "language_model.model.",
          .renames = std::move(renames),
          .vision_root = "",
          .vision_layers = "layers",
          .vision_stack = "vision_tower.vision_model.encoder",
          .other_towers = {{"vision_tower", "transformer.layers"}}};
}

// IBM Granite MoE (modular_granitemoe.py, modular_granitemoeshared.py,
// modular_granitemoehybrid.py; the experts are JetMoe's ParallelExperts, weight [E, out, in]):
// block_sparse_moe.router.layer [E, H], block_sparse_moe.input_linear.weight [E, 2I, H] (gate and
// up fused), block_sparse_moe.output_linear.weight [E, H, I]; Granite 4.0's shared_mlp.
// input_linear [2S, H] / output_linear [H, S] on every layer (the whole FFN of a dense
// granite-4.0-micro / -1b / -h-micro), its Mamba-2 mixer as `mamba` (BambaMixer: in_proj,
// conv1d, A_log, D, dt_bias, norm, out_proj) on mamba layers, `self_attn` on attention layers.
// The checkpoint names are those public loaders read from the Hub uploads (MLX's
// granitemoehybrid.py sanitize, a Granite 4.0 Swift port, a Go loader:
// model.layers.N.block_sparse_moe.{router.layer, input_linear, output_linear}.weight,
// model.layers.N.shared_mlp.{input_linear, output_linear}.weight). Transformers >= 5 renames the
// experts at load (experts.gate_up_proj); the uploads keep the names above.
Naming granite_moe_naming(bool hybrid) {
  return {.label = hybrid ? "Granite 4.0 (model.*, mamba, shared_mlp, block_sparse_moe)"
                          : "Granite MoE (model.*, block_sparse_moe.input_linear / output_linear)",
          .renames = {{"", ".mlp.experts.gate_up_proj.", ".block_sparse_moe.input_linear.weight."},
                      {"", ".mlp.experts.down_proj.", ".block_sparse_moe.output_linear.weight."},
                      {"", ".mlp.gate.", ".block_sparse_moe.router.layer."},
                      {"", ".mlp.shared_experts.gate_up_proj.", ".shared_mlp.input_linear."},
                      {"", ".mlp.shared_experts.down_proj.", ".shared_mlp.output_linear."},
                      {"", ".mlp.gate_up_proj.", ".shared_mlp.input_linear."},
                      {"", ".mlp.down_proj.", ".shared_mlp.output_linear."}},
          .stacked_experts = StackedExperts::out_in};
}

// transformers' Mamba and Mamba-2 (modeling_mamba.py, modeling_mamba2.py; base_model_prefix
// "backbone"): backbone.embeddings, backbone.layers.N.{norm, mixer.*}, backbone.norm_f, lm_head.
// Mamba-1's mixer: in_proj, conv1d, x_proj, dt_proj (biased), A_log [d_inner, N], D, out_proj;
// Mamba-2's: in_proj, conv1d, A_log, D, dt_bias [heads], norm [d_inner], out_proj. The names of
// state-spaces' *-hf uploads and of Mamba2ForCausalLM checkpoints as public loaders read them
// (backbone.embeddings.weight, backbone.layers.0.mixer.A_log / dt_bias / norm.weight,
// backbone.norm_f.weight). A tied head may be stored again as lm_head.weight: a buffer.
Naming mamba_naming(bool mamba2) {
  return {.label = mamba2 ? "Mamba-2 (backbone.layers.N.mixer, backbone.embeddings)"
                          : "Mamba (backbone.layers.N.mixer, backbone.embeddings)",
          .root = "backbone.",
          .embedding = "embeddings",
          .buffers = Buffers::tied_head_copy};
}

// DBRX (modeling_dbrx.py, transformers 4.40 to 4.57; the remote modeling_dbrx.py of the
// databricks uploads builds the same modules): transformer.wte, transformer.blocks.N.
// {norm_attn_norm.{norm_1, attn.Wqkv, attn.out_proj, norm_2}, ffn.router.layer,
// ffn.experts.mlp.{w1, v1, w2}}, transformer.norm_f, lm_head; every LayerNorm bias-free, no
// Linear biased. DbrxExpertGLU holds w1 (gate), v1 (up) and w2 (down) as bare nn.Parameters of
// shape [moe_num_experts x ffn_hidden_size, d_model] each (w2 used transposed). The module list
// AutoGPTQ's DbrxGPTQForCausalLM quantizes (transformer.blocks, norm_attn_norm.{norm_1, norm_2,
// attn.Wqkv, attn.out_proj}, ffn.router.layer, outside transformer.wte / transformer.norm_f)
// names the same modules; llama.cpp's 323-tensor dbrx-instruct GGUF (40 x 8 + 3) the same set
// (SOURCES-phimoe-dbrx.md).
Naming dbrx_naming() {
  return {.label = "DBRX (transformer.blocks.N, norm_attn_norm, ffn.experts.mlp.w1/v1/w2)",
          .root = "transformer.",
          .embedding = "wte",
          .renames = {{"", ".attn.qkv_proj.", ".attn.Wqkv."},
                      {"", ".attn.o_proj.", ".attn.out_proj."},
                      {"", ".mlp.gate.", ".ffn.router.layer."},
                      {"", ".mlp.experts.gate_proj.", ".ffn.experts.mlp.w1."},
                      {"", ".mlp.experts.up_proj.", ".ffn.experts.mlp.v1."},
                      {"", ".mlp.experts.down_proj.", ".ffn.experts.mlp.w2."}},
          .layers = "blocks",
          .stacked_experts = StackedExperts::rows_2d};
}

}  // namespace

Naming naming_for(const std::string& type, const std::string& text_type) {
  // Families whose checkpoint uses transformers' module names under model.* unchanged:
  // modeling_{llama,mistral,qwen2,qwen3,olmo2,qwen3_moe,gemma,gemma2,gemma3,phi3}.py.
  // Also modeling_{granite,smollm3,olmo,olmo3,cohere2,glm,glm4,seed_oss,arcee,exaone4,nemotron,
  // hunyuan_v1_dense,ernie4_5}.py and DeepSeekMoE's remote modeling_deepseek.py (GLM's fused
  // gate_up_proj is Phi-3's; OLMo's LayerNorms store nothing; Hunyuan's QK-norms are
  // query_layernorm / key_layernorm in the description already).
  // Also modular_helium.py, modular_ministral.py (Qwen2's modules without q/k/v bias) and
  // modeling_olmoe.py (OlmoeSparseMoeBlock: mlp.gate, mlp.experts.E.{gate,up,down}_proj;
  // q_norm / k_norm over all heads).
  for (const char* plain : {"llama",
                            "llama3",
                            "mistral",
                            "qwen2",
                            "qwen3",
                            "olmo2",
                            "qwen3_moe",
                            "gemma",
                            "gemma2",
                            "gemma3_text",
                            "phi3",
                            "granite",
                            "smollm3",
                            "olmo",
                            "olmo3",
                            "cohere2",
                            "glm",
                            "glm4",
                            "seed_oss",
                            "arcee",
                            "exaone4",
                            "nemotron",
                            "hunyuan_v1_dense",
                            "ernie4_5",
                            "deepseek",
                            "helium",
                            "ministral",
                            "olmoe"}) {
    if (type == plain) return plain_naming();
  }
  if (type == "nemotron-nas") {
    // NVIDIA's remote modeling_decilm.py (Llama-3.x-Nemotron Super / Ultra / Nano): Llama's names
    // per block; a no_op attention has neither self_attn nor input_layernorm, a no_op FFN neither
    // mlp nor post_attention_layernorm (TensorRT-LLM AutoDeploy's DeciLMDecoderLayer: "matches
    // the checkpoint weight structure exactly"); replace_with_linear holds self_attn.linear_attn
    // or mlp.linear_mlp, one bias-free [h, h] Linear ("matches HF checkpoint key mlp.linear_mlp").
    return {.label = "DeciLM / Nemotron-NAS (model.*, no-op blocks hold no tensors)",
            .renames = {{"", ".mlp.linear.", ".mlp.linear_mlp."}}};
  }
  if (type == "cohere") {
    // modeling_cohere.py: Llama's module names, one input_layernorm (CohereLayerNorm, weight
    // only) per layer, a tied head; with use_qk_norm, q_norm / k_norm are CohereLayerNorm((heads,
    // head_dim)): one [heads, head_dim] weight each.
    return {.label = "transformers Cohere (model.*, QK-norm [heads, head_dim])",
            .qk_norm_layout = QkNormLayout::head_matrix};
  }
  if (type == "stablelm") {
    // modeling_stablelm.py: Llama's module names with LayerNorms (weight and bias); with
    // qk_layernorm, q_layernorm / k_layernorm are StableLmLayerNormPerHead, a ModuleList `norms`
    // of one bias-free LayerNorm(head_dim) per head.
    return {.label = "transformers StableLM (model.*, q_layernorm.norms.H)",
            .qk_norm_layout = QkNormLayout::head_modules};
  }
  if (type == "apertus") {
    // modular_apertus.py: Llama's attention with q_norm / k_norm, attention_layernorm and
    // feedforward_layernorm, mlp.up_proj / down_proj; XIELUActivation (activations.py) holds
    // mlp.act_fn.alpha_p / alpha_n ([1] parameters) and the persistent 0-dim buffers beta / eps
    // the checkpoints store (SOURCES-apertus.md: public loaders' tensor lists).
    return {.label = "transformers Apertus (model.*, mlp.act_fn xIELU)",
            .buffers = Buffers::stored_extras};
  }
  if (type == "minicpm") {
    // openbmb's remote modeling_minicpm.py: Llama's module names; MiniCPMMoE (num_experts > 0)
    // keeps mlp.gate and names its experts' Linears w1 (gate), w3 (up), w2 (down), as vLLM's
    // models/minicpm.py loads them (SOURCES-minicpm.md).
    return {.label = "MiniCPM remote code (model.*, experts w1/w2/w3)",
            .renames = {{".mlp.experts.", ".gate_proj.", ".w1."},
                        {".mlp.experts.", ".up_proj.", ".w3."},
                        {".mlp.experts.", ".down_proj.", ".w2."}}};
  }
  if (type == "internlm2") {
    // InternLM2's remote modeling_internlm2.py: model.tok_embeddings, layers.N.attention.wqkv
    // (q, k and v interleaved per kv group: (heads + 2 kv heads) x head_dim rows), attention.wo,
    // feed_forward.w1 (gate) / w3 (up) / w2 (down), attention_norm, ffn_norm, model.norm and a
    // top-level `output` head; internlm2_5-7b-chat's 227 BF16 tensors (SOURCES-internlm2.md).
    return {.label = "InternLM2 remote code (model.tok_embeddings, attention.wqkv, feed_forward)",
            .embedding = "tok_embeddings",
            .renames = {{"", ".attention.qkv_proj.", ".attention.wqkv."},
                        {"", ".attention.o_proj.", ".attention.wo."},
                        {"", ".mlp.gate_proj.", ".feed_forward.w1."},
                        {"", ".mlp.up_proj.", ".feed_forward.w3."},
                        {"", ".mlp.down_proj.", ".feed_forward.w2."},
                        {"", "lm_head.", "output."}}};
  }
  if (type == "minimax_m2") {
    // MiniMax-M2's remote modeling_minimax_m2.py (transformers' modular_minimax_m2.py builds the
    // same): Mixtral's block_sparse_moe.{gate, experts.E.w1/w3/w2} plus the router's
    // e_score_correction_bias on the block itself, not under gate (GPTQModel's module tree of
    // the checkpoint: block_sparse_moe.{gate, e_score_correction_bias, experts.#.{w1,w3,w2}}).
    Naming naming = mixtral_naming();
    naming.label = "MiniMax-M2 (model.*, block_sparse_moe, w1/w2/w3)";
    naming.renames.insert(naming.renames.begin(), {"", ".mlp.gate.e_score_correction_bias",
                                                   ".block_sparse_moe.e_score_correction_bias"});
    return naming;
  }
  if (type == "granitemoehybrid" || type == "granitemoe") {
    return granite_moe_naming(type == "granitemoehybrid");
  }
  if (type == "mamba" || type == "mamba2") return mamba_naming(type == "mamba2");
  if (type == "bamba") {
    // modeling_bamba.py BambaDecoderLayer: input_layernorm, `mamba` (BambaMixer: in_proj,
    // conv1d, A_log, D, dt_bias, norm, out_proj) or `self_attn` (q/k/v/o_proj), pre_ff_layernorm,
    // feed_forward.{gate,up,down}_proj; BambaModel's final_layernorm; an untied lm_head.
    return {.label = "Bamba (model.*, mamba, feed_forward)",
            .renames = {{"", ".mlp.", ".feed_forward."}}};
  }
  if (type == "jamba") {
    // modeling_jamba.py: JambaAttentionDecoderLayer / JambaMambaDecoderLayer hold
    // input_layernorm, `self_attn` or `mamba` (JambaMambaMixer: in_proj, conv1d, x_proj,
    // dt_proj, A_log, D, out_proj, dt_layernorm, b_layernorm, c_layernorm), pre_ff_layernorm and
    // feed_forward: JambaMLP (gate/up/down_proj) or JambaSparseMoeBlock (router, experts.E.
    // {gate,up,down}_proj); model.final_layernorm, lm_head. The names a Jamba loader documents
    // as "HF transformers' Jamba checkpoint" (model.layers.{i}.feed_forward.router.weight,
    // model.layers.{i}.mamba.dt_layernorm.weight, ...).
    return {
        .label = "Jamba (model.*, mamba, feed_forward.router / experts)",
        .renames = {{"", ".mlp.gate.", ".feed_forward.router."}, {"", ".mlp.", ".feed_forward."}}};
  }
  if (type == "bailing_moe") {
    // inclusionAI's remote modeling_bailing_moe.py (Ling v1: BailingMoeModel.word_embeddings,
    // layers.N.attention.{query_key_value, dense}, mlp.gate.weight (BailingMoeGate's bare
    // Parameter), mlp.experts.E.* and mlp.shared_experts.*, model.norm) and
    // modeling_bailing_moe_v2.py (Ling 2.0, the same model_type: adds attention.query_layernorm /
    // key_layernorm and the router's F32 mlp.gate.expert_bias buffer; SOURCES-bailing_moe_v2.md,
    // the Megatron-Bridge mapping and a Ling 2.0 port's list of the Hub checkpoint names).
    return {.label = "Bailing MoE / Ling (model.word_embeddings, attention.query_key_value)",
            .embedding = "word_embeddings",
            .renames = {{"", ".attention.qkv_proj.", ".attention.query_key_value."},
                        {"", ".attention.o_proj.", ".attention.dense."},
                        {"", ".mlp.gate.e_score_correction_bias", ".mlp.gate.expert_bias"}}};
  }
  if (type == "bloom") return bloom_naming();
  if (type == "gpt_bigcode") return gpt_bigcode_naming();
  if (type == "gptj" || type == "codegen") return gptj_naming(type == "codegen");
  if (type == "gpt_neo") return gpt_neo_naming();
  if (type == "mixtral") return mixtral_naming();
  if (type == "internvl_chat") return internvl_chat_naming(text_type);
  if (type == "internvl") {
    // InternVLForConditionalGeneration as the -hf uploads store it, the legacy layout
    // transformers saves (InternVL3_5-8B-HF's index, 841 tensors; SOURCES-internvl_hf.md): the
    // text model under language_model.model.*, language_model.lm_head; the tower as
    // vision_tower.embeddings.{cls_token, patch_embeddings.projection, position_embeddings} and
    // vision_tower.encoder.layer.N.{attention.{q,k,v}_proj, attention.projection_layer,
    // attention.q_norm / k_norm, layernorm_before, layernorm_after, mlp.fc1, mlp.fc2, lambda_1,
    // lambda_2}; multi_modal_projector.{layer_norm, linear_1, linear_2}.
    return {.label = "InternVL-HF (language_model.model.*, vision_tower.encoder.layer.N)",
            .root = "language_model.model.",
            .renames = {{"vision_tower.", ".attention.o_proj.", ".attention.projection_layer."},
                        {"vision_tower.", ".mlp.up_proj.", ".mlp.fc1."},
                        {"vision_tower.", ".mlp.down_proj.", ".mlp.fc2."},
                        {"", "lm_head.", "language_model.lm_head."}},
            .vision_root = "",
            .vision_layers = "layer"};
  }
  if (type == "deepseek_vl_v2") {
    if (text_type == "deepseek_ocr") return deepseek_ocr_naming();  // naming_dots_ocr.cpp
    // DeepSeek-VL2's remote code as its uploads store it (SOURCES-deepseek_vl_v2.md): the
    // DeepSeek-V2 text model under language.model.*, language.lm_head; the SigLIP tower in
    // timm's names under vision.* (patch_embed.proj, pos_embed, blocks.N.{norm1, attn.qkv,
    // attn.proj, norm2, mlp.fc1, mlp.fc2}, norm, attn_pool.*); projector.layers.N;
    // image_newline and view_seperator at the top. DeepSeek-OCR (its family's tag
    // "deepseek_ocr") is named apart.
    std::vector<Rename> renames = tower_renames("vision.", ".mlp.fc1.", ".mlp.fc2.");
    renames.insert(renames.begin(), {"", "lm_head.", "language.lm_head."});
    return {.label = "DeepSeek-VL2 (language.model.*, vision.blocks.N, projector.layers)",
            .root = "language.model.",
            .renames = std::move(renames),
            .vision_root = "",
            .vision_stack = "vision"};
  }
  if (type == "lfm2" || type == "lfm2_moe") {
    // transformers' modeling_lfm2.py / modeling_lfm2_moe.py (SOURCES-lfm2-kimi-linear.md,
    // SOURCES-lfm2_moe.md): operator_norm, ffn_norm, the short conv's conv.{in_proj, conv,
    // out_proj}, self_attn.{q,k,v}_proj and out_proj with q_layernorm / k_layernorm,
    // feed_forward.w1 / w3 / w2 (LFM2-MoE: feed_forward.{gate, expert_bias, experts.E.w1/w3/w2}),
    // the final embedding_norm; the head tied.
    return {.label = "LFM2 (model.*, conv, self_attn.out_proj, feed_forward.w1/w2/w3)",
            .renames = {{"", ".self_attn.o_proj.", ".self_attn.out_proj."},
                        {"", ".mlp.gate.e_score_correction_bias", ".feed_forward.expert_bias"},
                        {"", ".mlp.gate.", ".feed_forward.gate."},
                        {"", ".mlp.experts.", ".feed_forward.experts."},
                        {"", ".gate_proj.", ".w1."},
                        {"", ".up_proj.", ".w3."},
                        {"", ".down_proj.", ".w2."},
                        {"", ".mlp.", ".feed_forward."}}};
  }
  if (type == "mimo") {
    // XiaomiMiMo's remote modeling_mimo.py (MiMoModel(Qwen2Model) + mtp_layers): Qwen2's names,
    // each MTP layer stored as model.mtp_layers.N with a decoder layer's tensors and
    // token_layernorm, hidden_layernorm, input_proj [h, 2h], final_layernorm: 16 tensors, the
    // count a public MTP loader quotes for the released layout (SOURCES-mimo.md).
    return {.label = "MiMo (model.*, MTP as model.mtp_layers.N)",
            .renames = {{"", "mtp.layers.", "model.mtp_layers."}}};
  }
  if (type == "minimax_m1") {
    // MiniMax-AI/MiniMax-M1's modeling_minimax_m1.py and the index beside it (8,243 tensors,
    // SOURCES-minimax.md): Mixtral's block_sparse_moe with its gate in F32 (the index's bytes
    // hold exactly the routers at 4 bytes); lightning layers' self_attn.{qkv_proj, output_gate,
    // norm, out_proj}, softmax layers' q/k/v/o_proj.
    Naming naming = mixtral_naming();
    naming.label = "MiniMax-M1 (model.*, lightning self_attn, block_sparse_moe, w1/w2/w3)";
    naming.routers_f32 = true;
    return naming;
  }
  if (type == "kimi_linear") {
    // moonshotai's remote modeling_kimi.py as Kimi-Linear-48B-A3B's headers list it (20,493
    // tensors, SOURCES-lfm2-kimi-linear.md): Mixtral's block_sparse_moe.{gate, experts.E.w1/w3/w2}
    // with the router's e_score_correction_bias under gate and the shared experts beside them
    // (block_sparse_moe.shared_experts.{gate,up,down}_proj); KDA and MLA under self_attn; layer
    // 0's dense mlp.
    Naming naming = mixtral_naming();
    naming.label = "Kimi-Linear (model.*, KDA / MLA self_attn, block_sparse_moe, w1/w2/w3)";
    naming.renames.insert(naming.renames.begin(),
                          {"", ".mlp.shared_experts.", ".block_sparse_moe.shared_experts."});
    return naming;
  }
  if (type == "phimoe") {
    // modeling_phimoe.py as the Phi-3.5-MoE upload stores it: Mixtral's block_sparse_moe names.
    Naming naming = mixtral_naming();
    naming.label = "transformers Phi-MoE (model.*, block_sparse_moe, w1/w2/w3)";
    return naming;
  }
  if (type == "starcoder2") {
    // modeling_starcoder2.py Starcoder2MLP: c_fc -> c_proj.
    return {
        .label = "transformers StarCoder2 (model.*, mlp.c_fc/c_proj)",
        .renames = {{"", ".mlp.up_proj.", ".mlp.c_fc."}, {"", ".mlp.down_proj.", ".mlp.c_proj."}}};
  }
  if (type == "baichuan") {
    // Baichuan's remote code packs q, k and v into self_attn.W_pack.
    return {.label = "Baichuan remote code (model.*, self_attn.W_pack)",
            .renames = {{"", ".self_attn.qkv_proj.", ".self_attn.W_pack."}}};
  }
  if (type == "mpt") {
    // MPT's remote code: transformer.wte, blocks.N.{norm_1, attn.Wqkv, attn.out_proj, norm_2,
    // ffn.up_proj, ffn.down_proj}, norm_f; the head is the tied wte.
    return {.label = "MPT remote code (transformer.blocks.N, attn.Wqkv, ffn)",
            .root = "transformer.",
            .embedding = "wte",
            .renames = {{"", ".attn.qkv_proj.", ".attn.Wqkv."},
                        {"", ".attn.o_proj.", ".attn.out_proj."},
                        {"", ".mlp.", ".ffn."}},
            .layers = "blocks"};
  }
  if (type == "exaone") {
    // EXAONE's remote code: transformer.wte, h.N.{ln_1, attn.attention.{q,k,v,out}_proj, ln_2,
    // mlp.c_fc_0 (gate) / c_fc_1 (up) / c_proj (down)}, ln_f.
    return {.label = "EXAONE remote code (transformer.h.N, attn.attention, mlp.c_fc_0/c_fc_1)",
            .root = "transformer.",
            .embedding = "wte",
            .renames = {{"", ".attention.o_proj.", ".attention.out_proj."},
                        {"", ".mlp.gate_proj.", ".mlp.c_fc_0."},
                        {"", ".mlp.up_proj.", ".mlp.c_fc_1."},
                        {"", ".mlp.down_proj.", ".mlp.c_proj."}},
            .layers = "h"};
  }
  if (type == "qwen2_moe") {
    // Qwen2MoeSparseMoeBlock: one shared_expert (singular) behind shared_expert_gate.
    return {.label = "transformers Qwen2-MoE (model.*, shared_expert)",
            .renames = {{"", ".mlp.shared_experts.", ".mlp.shared_expert."}}};
  }
  // glm4_moe (modeling_glm4_moe.py; GLM-4.5 / GLM-4.5-Air): DeepSeek-V3's layout, the MTP layer
  // stored as model.layers.{num_hidden_layers} with enorm, hnorm, eh_proj, shared_head and its
  // own embed_tokens (SOURCES-moe-families.md, the Hub totals to the parameter). glm_moe_dsa
  // (modular_glm_moe_dsa.py; GLM-5, GLM-5.x): DeepSeek-V3.2's layout with its indexer, the MTP
  // layer without embed_tokens or shared_head.head copies (Megatron-Bridge's GLM-5 card: 59,079
  // tensors in 78 layers and 791 under model.layers.78; SOURCES-moe-families.md).
  for (const char* deepseek :
       {"deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32", "glm4_moe", "glm_moe_dsa"}) {
    if (type == deepseek) {
      return {.label = type == "glm4_moe" ? "GLM-4.5 MoE (model.*, MTP as model.layers.N+i)"
                       : type == "glm_moe_dsa"
                           ? "GLM-5 (model.*, DSA indexer, MTP as model.layers.N+i)"
                           : "DeepSeek (model.*, MTP as model.layers.N+i)",
              .mtp_after_layers = true};
    }
  }
  if (type == "qwen3_next") {
    // modeling_qwen3_next.py as Qwen/Qwen3-Next-80B-A3B-* store it: linear_attn.{in_proj_qkvz,
    // in_proj_ba, conv1d, A_log, dt_bias, norm, out_proj}, gated q_proj (queries + gate), one
    // shared_expert behind shared_expert_gate, and mtp.{fc, pre_fc_norm_*, layers.N, norm}.
    return {.label = "Qwen3-Next (model.*, linear_attn, shared_expert, mtp.*)",
            .renames = {{"", ".mlp.shared_experts.", ".mlp.shared_expert."}},
            .mtp_norm = "mtp.norm"};
  }
  if (type == "qwen2_vl" || type == "qwen2_5_vl") {
    // Qwen2(.5)-VL as Qwen's uploads store it (saved before transformers 4.52 moved it under
    // model.visual / model.language_model, which its _checkpoint_conversion_mapping undoes at
    // load): the Qwen2 text model under model.*, the tower at the top as visual.*
    // (blocks.N.attn.qkv / proj; Qwen2-VL's mlp.fc1 / fc2, Qwen2.5-VL's gated mlp.gate_proj /
    // up_proj / down_proj, biased; merger.ln_q, merger.mlp.0 / mlp.2). modeling_qwen2_vl.py,
    // modeling_qwen2_5_vl.py.
    if (type == "qwen2_5_vl") {
      return {.label = "Qwen2.5-VL (model.*, visual.* at the top)",
              .renames = qwen_tower_renames("", ""),
              .vision_root = ""};
    }
    return {.label = "Qwen2-VL (model.*, visual.* at the top)",
            .renames = qwen_tower_renames(".mlp.fc1.", ".mlp.fc2."),
            .vision_root = ""};
  }
  if (type == "qwen3_vl" || type == "qwen3_vl_moe") {
    // Qwen3-VL(-MoE) as Qwen's uploads store it: model.language_model.*, the tower under
    // model.visual.* (Qwen3.5's names plus deepstack_merger_list.K.*), lm_head at the top; the
    // MoE's experts stacked [E, H, 2I] / [E, I, H] (llama.cpp's and Megatron-Bridge's converters,
    // transformers <= 4.57's Qwen3VLMoeTextExperts). modeling_qwen3_vl(_moe).py.
    return {.label = "Qwen3-VL (model.language_model.*, model.visual.*)",
            .root = "model.language_model.",
            .renames = qwen_tower_renames(".mlp.linear_fc1.", ".mlp.linear_fc2."),
            .stacked_experts = StackedExperts::in_out,
            .vision_root = "model."};
  }
  if (type == "llama4") {
    // Llama4ForConditionalGeneration as meta-llama's uploads store it (no conversion mapping):
    // language_model.model.layers.N with feed_forward.{router, experts.gate_up_proj [E, H, 2I],
    // experts.down_proj [E, I, H], shared_expert.*} on MoE layers and
    // feed_forward.{gate,up,down}_proj on dense ones; language_model.lm_head;
    // vision_model.model.layers.N (biased q/k/v/o_proj, mlp.fc1 / fc2) beside
    // vision_model.{patch_embedding.linear, class_embedding, positional_embedding_vlm,
    // layernorm_pre, layernorm_post, vision_adapter.mlp.*}; multi_modal_projector.linear_1.
    // modeling_llama4.py; MaxText's and vLLM's loaders.
    return {.label = "Llama 4 (language_model.model.*, feed_forward, vision_model.*)",
            .root = "language_model.model.",
            .renames = {{"", "lm_head.", "language_model.lm_head."},
                        {"language_model.", ".mlp.gate.", ".feed_forward.router."},
                        {"language_model.", ".mlp.shared_experts.", ".feed_forward.shared_expert."},
                        {"language_model.", ".mlp.", ".feed_forward."},
                        {"vision_model.", ".mlp.up_proj.", ".mlp.fc1."},
                        {"vision_model.", ".mlp.down_proj.", ".mlp.fc2."}},
            .stacked_experts = StackedExperts::in_out,
            .vision_root = "",
            .vision_layers = "model.layers"};
  }
  if (type == "qwen3_5" || type == "qwen3_5_moe") {
    // Qwen3_5(Moe)ForConditionalGeneration as Qwen/Qwen3.5-* store it: the text model under
    // model.language_model.*, lm_head at the top, DeltaNet input projections split (in_proj_qkv,
    // in_proj_z, in_proj_b, in_proj_a), the main layers' experts stacked (mlp.experts.gate_up_proj
    // [E, 2I, H], down_proj [E, H, I]), the MTP layer's one per expert, the Qwen3-VL tower under
    // model.visual.* (blocks.N.attn.qkv / proj, mlp.linear_fc1 / linear_fc2, merger.*).
    // transformers modeling_qwen3_5(_moe).py; vLLM qwen3_5.py, qwen3_5_mtp.py; 27B and 397B-A17B
    // headers (docs/checkpoint.md).
    Naming naming{.label = "Qwen3.5 (model.language_model.*, model.visual.*, mtp.*)",
                  .root = "model.language_model.",
                  .renames = qwen_tower_renames(".mlp.linear_fc1.", ".mlp.linear_fc2."),
                  .mtp_norm = "mtp.norm",
                  .stacked_experts = StackedExperts::out_in,
                  .mtp_experts_per_expert = true,
                  .vision_root = "model.",
                  .delta_vectors_also_f32 = true,
                  .qwen_fp8_block = true};
    naming.renames.push_back({"", ".mlp.shared_experts.", ".mlp.shared_expert."});
    return naming;
  }
  if (type == "nemotron_h" || type == "nemotron_h_puzzle") {
    return {.label = "Nemotron-H (backbone.*, mixer, MTP as mtp.layers.*)",
            .root = "backbone.",
            .embedding = "embeddings"};
  }
  // Gemma3ForConditionalGeneration as Google's uploads store it (written by transformers'
  // convert_gemma3_weights_orbax_to_hf.py): the text model under language_model.model.* (the head
  // tied), the SigLIP tower under vision_tower.vision_model.{embeddings.*, encoder.layers.N
  // (layer_norm1 / 2, q/k/v/out_proj, mlp.fc1 / fc2, all biased), post_layernorm}, and
  // multi_modal_projector.{mm_input_projection_weight [vision d, text d], mm_soft_emb_norm}.
  // Fine-tunes saved by transformers >= 4.52 may use model.language_model.* instead: totals only.
  if (type == "gemma3") {
    std::vector<Rename> renames = clip_tower_renames("vision_tower.");
    renames.insert(renames.begin(),
                   {"vision_tower.", "vision_tower.", "vision_tower.vision_model."});
    return {.label = "Gemma 3 (language_model.model.*, vision_tower.vision_model.*)",
            .root = "language_model.model.",
            .renames = std::move(renames),
            .vision_root = "",
            .vision_layers = "encoder.layers"};
  }
  if (type == "llava" || type == "llava_next" || type == "llava_next_video" ||
      type == "llava_onevision") {
    return llava_naming();
  }
  // PaliGemmaForConditionalGeneration as Google's uploads store it (transformers 4.41 to 4.47):
  // the Gemma / Gemma 2 text model under language_model.model.* (the head tied: no lm_head), the
  // SigLIP tower under vision_tower.vision_model.* as LLaVA-OneVision's, and one biased
  // multi_modal_projector.linear. modeling_paligemma.py; SOURCES-paligemma-idefics3.md.
  if (type == "paligemma") {
    Naming naming = llava_naming();
    naming.label = "PaliGemma (language_model.model.*, vision_tower.vision_model.*)";
    return naming;
  }
  // AyaVisionForConditionalGeneration as CohereForAI's uploads store it (modeling_aya_vision.py's
  // _checkpoint_conversion_mapping maps ^language_model.model, ^vision_tower,
  // ^multi_modal_projector and ^language_model.lm_head onto the new layout, so the uploads keep
  // the old names, which PaddleFormers' Aya Vision loader reads): the Cohere2 text model under
  // language_model.model.* (the head tied: no lm_head), the SigLIP tower under
  // vision_tower.vision_model.* as LLaVA-OneVision's, multi_modal_projector.{layernorm,
  // linear_1, linear_2}, all biased. SOURCES-vlm-wrappers.md.
  if (type == "aya_vision") {
    Naming naming = llava_naming();
    naming.label = "Aya Vision (language_model.model.*, vision_tower.vision_model.*)";
    return naming;
  }
  // Idefics3ForConditionalGeneration and SmolVLM's: the Llama text model under
  // model.text_model.* with a top-level lm_head, the SigLIP tower under model.vision_model.*
  // (post_layernorm beside the encoder) and the bias-free
  // model.connector.modality_projection.proj. modeling_idefics3.py, modeling_smolvlm.py;
  // SOURCES-paligemma-idefics3.md, SOURCES-vlm-wrappers.md.
  if (type == "idefics3" || type == "smolvlm") {
    return {.label = "Idefics3 (model.text_model.*, model.vision_model.*, model.connector)",
            .root = "model.text_model.",
            .renames = clip_tower_renames("vision_model."),
            .vision_root = "",
            .vision_layers = "layers",
            .vision_stack = "model.vision_model.encoder"};
  }
  if (type == "phi") return phi_naming();
  if (type == "gpt2") return gpt2_naming();
  if (type == "falcon") return falcon_naming();
  if (type == "gpt_neox") return gpt_neox_naming();
  if (type == "bert") return bert_naming();
  if (type == "roberta" || type == "xlm-roberta" || type == "camembert") return roberta_naming();
  if (type == "electra") return electra_naming();
  if (type == "distilbert") return distilbert_naming();
  if (type == "bart" || type == "mbart") return bart_naming();
  if (type == "t5" || type == "mt5" || type == "umt5") return t5_naming();
  if (type == "whisper") {
    // modeling_whisper.py copies BART's layer modules (k_proj without a bias, the description's):
    // model.encoder.{conv1, conv2, embed_positions, layers.N, layer_norm},
    // model.decoder.{embed_tokens, embed_positions, layers.N, layer_norm}; no model.shared, and
    // proj_out, tied to embed_tokens, is never stored (SOURCES-whisper.md).
    Naming naming = bart_naming();
    naming.label = "Whisper (model.encoder/decoder.layers.N, BART's layer names, conv1/conv2)";
    naming.embedding = "decoder.embed_tokens";
    naming.buffers = Buffers::none;
    return naming;
  }
  if (type == "marian" || type == "pegasus" || type == "m2m_100") {
    // modeling_{marian,pegasus,m2m_100}.py copy BART's modules ("Copied from ... Bart"): the same
    // names, no layernorm_embedding; the description holds the per-stack tables Marian and
    // Pegasus keep as frozen parameters (m2m_100's are a non-persistent buffer: none), Pegasus's
    // and M2M100's final layer_norm, and final_logits_bias where the class registers it.
    // convert_pegasus_tf_to_pytorch.py pops both sinusoidal tables before saving, so the
    // google/pegasus-* uploads lack those two parameters; MarianMTModel lists both in
    // _keys_to_ignore_on_save. Whichever an upload holds reconciles.
    Naming naming = bart_naming();
    naming.droppable_positions = type != "m2m_100";
    naming.label = type == "marian"    ? "Marian (model.shared, BART's layer names, sinusoids)"
                   : type == "pegasus" ? "Pegasus (model.shared, BART's layer names, layer_norm)"
                                       : "M2M100 (model.shared, BART's layer names, layer_norm)";
    return naming;
  }
  if (type == "albert") return albert_naming();
  if (type == "deberta" || type == "deberta-v2") return deberta_naming(type == "deberta-v2");
  if (type == "modernbert") return modernbert_naming();
  if (type == "mpnet") return mpnet_naming();
  if (type == "gpt_oss") return gpt_oss_naming();
  if (type == "dbrx") return dbrx_naming();
  if (std::optional<Naming> naming = decoder_naming(type)) return *naming;
  if (std::optional<Naming> naming = custom_layout_naming(type)) return *naming;
  if (std::optional<Naming> naming = mistral3_mllama_naming(type)) return *naming;
  if (std::optional<Naming> naming = glm4v_naming(type)) return *naming;
  if (std::optional<Naming> naming = t5gemma_kimi_vl_naming(type)) return *naming;
  if (std::optional<Naming> naming = minicpmv_naming(type)) return *naming;
  if (std::optional<Naming> naming = chatglm_naming(type, text_type)) return *naming;
  if (std::optional<Naming> naming = qwen_vl_audio_naming(type)) return *naming;
  if (std::optional<Naming> naming = afmoe_naming(type)) return *naming;
  if (std::optional<Naming> naming = longcat_naming(type)) return *naming;
  if (std::optional<Naming> naming = ernie_moe_naming(type)) return *naming;
  if (std::optional<Naming> naming = glm5_next_naming(type)) return *naming;
  if (std::optional<Naming> naming = deepseek_v4_naming(type)) return *naming;
  if (std::optional<Naming> naming = dots_ocr_naming(type)) return *naming;
  if (std::optional<Naming> naming = gemma3n_naming(type)) return *naming;
  if (std::optional<Naming> naming = qwen_omni_naming(type)) return *naming;
  return {.label = "transformers (model.*), unchecked for this family", .known = false};
}

}  // namespace trace::checkpoint
