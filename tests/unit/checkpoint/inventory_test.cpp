// The inventory against trace's own totals, over every fixture config and every bundled catalog
// model: where the inventory is complete, its tensors hold exactly the parameter count, and their
// elements and bytes are the storage estimate's (two derivations of the same checkpoint that must
// not drift apart). Buffers (stored by some uploads, not parameters) are outside both.
#include "trace/checkpoint/inventory.hpp"

#include <filesystem>
#include <string>

#include "catch.hpp"
#include "estimate/checkpoint_layout.hpp"
#include "test_data.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/catalog.hpp"
#include "trace/model/model_config.hpp"

namespace {

// Returns whether the inventory is complete (and then checks it against the estimates).
bool check_complete_inventory(const trace::ModelDescription& model) {
  const trace::ParameterCount params = trace::count_parameters(model);
  const trace::StorageEstimate storage = trace::estimate_storage(model, params);
  const trace::checkpoint::Inventory inventory = trace::checkpoint::build_inventory(model);
  if (!inventory.complete) return false;
  std::int64_t logical = 0;
  std::int64_t elements = 0;
  std::int64_t bytes = 0;
  std::int64_t tensors = 0;
  for (const auto& tensor : inventory.tensors) {
    if (tensor.buffer) {
      CHECK(tensor.logical_params == 0);
      continue;
    }
    logical += tensor.logical_params;
    elements += tensor.elements();
    bytes += tensor.bytes();
    ++tensors;
  }
  CHECK(logical == params.total);
  CHECK(elements == storage.stored_elements);
  CHECK(bytes == storage.bytes);
  if (storage.tensors > 0) CHECK(tensors == storage.tensors);
  // layout::tensor_count counts each extra head as one tensor; the encoders' heads are biased
  // Linears (weight + bias), DeBERTa v1 stores q_bias and v_bias for one fused bias, ModernBERT's
  // head.norm has no bias, so their counts are checked by hand in checkpoint_names_test.cpp,
  // encoder_names_test.cpp and encoder_names_more_test.cpp instead.
  const bool biased_heads = model.model_type == "bert" || model.model_type == "roberta" ||
                            model.model_type == "xlm-roberta" || model.model_type == "camembert" ||
                            model.model_type == "distilbert" || model.model_type == "electra" ||
                            model.model_type == "bart" || model.model_type == "mbart" ||
                            model.model_type == "albert" || model.model_type == "deberta" ||
                            model.model_type == "deberta-v2" || model.model_type == "modernbert" ||
                            model.model_type == "mpnet";
  // tensor_count counts routed experts one tensor per expert and projection; gpt-oss,
  // Qwen3.5-MoE, Qwen3-VL-MoE, Llama 4, Granite's MoE and DBRX stack them (their counts are
  // checked by hand in checkpoint_names_test.cpp, qwen3_5_names_test.cpp, vlm_names_test.cpp,
  // ssm_moe_vlm_names_test.cpp and wrapper_names_test.cpp).
  const bool stacked_experts = model.model_type == "gpt_oss" || model.model_type == "qwen3_5_moe" ||
                               model.model_type == "qwen3_vl_moe" || model.model_type == "llama4" ||
                               model.model_type == "granitemoe" ||
                               model.model_type == "granitemoehybrid" || model.model_type == "dbrx";
  // Mllama's inventory folds its 8-row embedding extra into embed_tokens and spreads its two gate
  // extras over one [1] tensor per gated layer (counted by hand in mistral3_mllama_names_test.cpp).
  const bool spread_extras = model.model_type == "mllama";
  // AFMoE stores each attention's output gate as a gate_proj of its own, which tensor_count
  // counts inside q_proj (counted by hand in afmoe_names_test.cpp).
  const bool split_gate = model.model_type == "afmoe";
  // LongCat-Flash folds its zero-computation experts' router extra into each layer's router
  // (counted by hand in longcat_names_test.cpp).
  const bool folded_router = model.model_type == "longcat_flash";
  // GLM-5.3-Flash names its mHC extras as three tensors per layer and site and its k-pool
  // extras as two per indexer, Gemma 3n its per-module extras (AltUp, LAuReL, the conformer,
  // the timm tower), Qwen2.5-Omni its token2wav and the vision tower's separate q / k / v, and
  // Qwen3-Omni its audio stem, talker tables and code2wav tensor by tensor (counted by hand in
  // glm5_next_names_test.cpp, gemma3n_names_test.cpp and qwen_omni_names_test.cpp).
  const bool named_extras = model.model_type == "glm5_next" || model.model_type == "gemma3n" ||
                            model.model_type == "qwen2_5_omni" ||
                            model.model_type == "qwen3_omni_moe";
  if (!model.quantization && !biased_heads && !stacked_experts && !spread_extras && !split_gate &&
      !folded_router && !named_extras) {
    CHECK(tensors == trace::layout::tensor_count(model));
  }
  return true;
}

}  // namespace

TEST_CASE("complete inventories agree with the parameter count and the storage estimate",
          "[checkpoint][inventory]") {
  int complete = 0;
  int fixtures = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(trace::test::data_dir() + "/configs")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    INFO(name);
    ++fixtures;
    if (check_complete_inventory(trace::test::fixture(name))) ++complete;
  }
  int catalog_complete = 0;
  for (const trace::CatalogEntry& entry : trace::catalog_entries()) {
    INFO(entry.repo_id);
    if (check_complete_inventory(trace::parse_model_config(entry.config_text))) ++catalog_complete;
  }
  // 35 fixture configs were complete before the Gemma, Phi, GPT-2, Falcon, GPT-NeoX, BERT and
  // gpt-oss namings; those add 18 (gemma 2, gemma3_text 2, phi3 3, phi 2, gpt2 2, falcon 2,
  // gpt_neox 2, bert 2, gpt_oss 1); the encoder and seq2seq namings since (roberta to mbart,
  // then albert, deberta, deberta-v2, modernbert, marian, pegasus, m2m_100) bring it to 108, a
  // ratchet; 117 with Qwen3.5's naming (its five unquantized fixtures, the 397B-A17B's new), 123
  // with Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's (six fixtures, the Qwen2.5-VL-3B's new), 126
  // with Gemma 3's and Llama 4's, 130 with the LLaVA wrappers' (llava-1.5, LLaVA-NeXT,
  // LLaVA-NeXT-Video, LLaVA-OneVision), 135 with PaliGemma's (2) and Idefics3 / SmolVLM's (3),
  // 162 with cohere (1), helium (1), ministral (1), apertus (2), olmoe (1), internlm2 (2),
  // stablelm (2), minicpm (3), glm4_moe (3), minimax_m2 (1), bloom (2), gpt_bigcode (4), gptj
  // (1), codegen (1) and gpt_neo (2); 176 with granitemoehybrid's dense and expert-free hybrid
  // fixtures (5), bamba (1), jamba (3), mamba (1), mamba2 (1) and bailing_moe (3); 179 with
  // Granite's stacked MoE experts (granite-3.1-1b-a400m, granite-4.0-h-tiny, -h-small); 181
  // with pixtral-12b's Pixtral tower in the llava naming (1) and Aya Vision (1); 182 with DBRX
  // (1); 221 with t5 (5), mt5 (2), umt5 (2), whisper (3), glm_moe_dsa (3), nemotron-nas (2),
  // kimi_linear (2), minimax_m1 (1), deepseek_vl_v2 (3), internvl_chat (5), bare BART (2), opt
  // (1), falcon_h1 (1), minicpm3 (1), vaultgemma (1), cwm (1), hunyuan_v1_moe (1), dots1 (1),
  // flex_olmo (1) and glm4_moe_lite (1); 228 with lfm2 (2), lfm2_moe (1), opt-350m (1), mimo (1)
  // and internvl (2); + 4 with mistral3 (3) and mllama (1); + 3 with t5gemma (2) and kimi_vl (1);
  // + 3 with glm4v (2) and glm4v_moe (1); + 3 with minicpmv (3); + 2 with chatglm (2); + 2 with
  // qwen (Qwen-VL-Chat) and qwen2_audio (1 each); + 2 with afmoe (2); + 1 with longcat_flash (1);
  // + 1 with ernie4_5_moe (1); + 4 with glm5_next (1), deepseek_v4 (1), dots_ocr (1) and
  // DeepSeek-OCR's DeepEncoder (1); + 3 with gemma3n (2) and Qwen's block FP8 of Qwen3.6 (1);
  // + 4 with qwen2_5_omni (2) and qwen3_omni_moe (2): every fixture, which a new one must keep.
  CHECK(complete >= 260);
  CHECK(complete == fixtures);
  // Every bundled model is complete: Llama 4 Scout since its naming, DeepSeek-V4-Flash since its.
  CHECK(catalog_complete == static_cast<int>(trace::catalog_entries().size()));
}
