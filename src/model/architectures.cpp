// The model_type table: one row per supported config dialect. Adding a family means one file in
// families/ and one row here.
#include <array>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config_reader.hpp"
#include "families/family.hpp"
#include "quantization.hpp"
#include "trace/error.hpp"
#include "trace/model/model_config.hpp"

namespace trace {

namespace {

using Builder = ModelDescription (*)(const ConfigReader&);

struct ArchitectureRow {
  ArchitectureInfo info;
  Builder build;
};

constexpr ArchitectureRow k_architectures[] = {
    {{"llama", "Llama 2/3/3.1/3.2/3.3, SmolLM2, TinyLlama, CodeLlama, Yi"}, family::build_llama},
    {{"mistral", "Mistral"}, family::build_mistral},
    // MinistralConfig: Mistral's tensors (no biases), per-layer windows from layer_types.
    {{"ministral", "Ministral-8B-Instruct-2410 as transformers' ministral type"},
     family::build_mistral},
    {{"mistral3",
      "Mistral Small 3.1 / 3.2, Magistral Small 2509, Ministral 3 3B / 8B / 14B (text + Pixtral "
      "vision)"},
     family::build_mistral3},
    {{"ministral3", "Ministral 3 3B / 8B / 14B text model (Ministral3ForCausalLM)"},
     family::build_ministral3},
    {{"qwen", "Qwen-1.8B / 7B / 14B / 72B (-Chat), Qwen-VL (-Chat) (first generation)"},
     family::build_qwen},
    {{"qwen2", "Qwen2, Qwen2.5"}, family::build_qwen2},
    {{"qwen3", "Qwen3 (dense)"}, family::build_qwen3},
    {{"olmo2", "OLMo 2"}, family::build_olmo2},
    {{"gemma", "Gemma"}, family::build_gemma},
    {{"gemma2", "Gemma 2"}, family::build_gemma2},
    {{"gemma3_text", "Gemma 3 (text)"}, family::build_gemma3_text},
    {{"gemma3", "Gemma 3 (multimodal wrapper)"}, family::build_gemma3},
    {{"phi", "Phi-1, Phi-1.5, Phi-2"}, family::build_phi},
    {{"phi3", "Phi-3, Phi-3.5"}, family::build_phi3},
    {{"gpt2", "GPT-2"}, family::build_gpt2},
    {{"gpt_bigcode", "SantaCoder, StarCoder"}, family::build_gpt_bigcode},
    {{"gpt_neox", "GPT-NeoX, Pythia, StableLM-alpha"}, family::build_gpt_neox},
    {{"gptj", "GPT-J"}, family::build_gptj},
    {{"stablelm", "StableLM-3B-4E1T, StableLM 2"}, family::build_stablelm},
    {{"falcon", "Falcon"}, family::build_falcon},
    {{"bloom", "BLOOM"}, family::build_bloom},
    {{"opt", "OPT"}, family::build_opt},
    {{"bert", "BERT"}, family::build_bert},
    {{"roberta", "RoBERTa (roberta-base, roberta-large, distilroberta)"}, family::build_roberta},
    {{"xlm-roberta", "XLM-RoBERTa base / large (and fine-tunes: bge-m3, e5)"},
     family::build_xlm_roberta},
    {{"camembert", "CamemBERT"}, family::build_camembert},
    {{"mpnet", "MPNet (microsoft/mpnet-base; all-mpnet-base-v2, multi-qa-mpnet-base)"},
     family::build_mpnet},
    {{"electra", "ELECTRA discriminators and generators"}, family::build_electra},
    {{"distilbert", "DistilBERT (base uncased / cased / multilingual, fine-tuned heads)"},
     family::build_distilbert},
    {{"albert", "ALBERT v1 / v2 (base, large, xlarge, xxlarge; shared layers)"},
     family::build_albert},
    {{"deberta-v2", "DeBERTa-v2, DeBERTa-v3, mDeBERTa-v3"}, family::build_deberta_v2},
    {{"deberta", "DeBERTa (v1)"}, family::build_deberta},
    {{"modernbert",
      "ModernBERT base, large and fine-tunes (encoder-only, RoPE, local/global attention, GeGLU)"},
     family::build_modernbert},
    {{"t5", "T5, T0, Flan-T5, T5EncoderModel text encoders (FLUX, SD3)"}, family::build_t5},
    {{"bart", "BART (bart-base, bart-large, bart-large-cnn, bart-large-mnli)"}, family::build_bart},
    {{"mbart", "mBART (mbart-large-cc25, mbart-large-50 and its -mmt variants)"},
     family::build_mbart},
    {{"marian", "MarianMT (Helsinki-NLP/opus-mt-*)"}, family::build_marian},
    {{"pegasus", "Pegasus (pegasus-large, pegasus-xsum, pegasus-cnn_dailymail)"},
     family::build_pegasus},
    {{"m2m_100", "M2M100 (m2m100_418M, m2m100_1.2B), NLLB-200 dense"}, family::build_m2m_100},
    {{"mt5", "mT5"}, family::build_t5},
    {{"umt5", "umT5 small .. xxl, Wan 2.x's UMT5EncoderModel text encoder"}, family::build_umt5},
    {{"t5gemma", "T5Gemma 2B-2B, 9B-2B, 9B-9B, S..XL (Gemma 2 encoder-decoder)"},
     family::build_t5gemma},
    {{"llama3", "(alias of llama)"}, family::build_llama},
    {{"mixtral", "Mixtral"}, family::build_mixtral},
    {{"qwen2_moe", "Qwen1.5-MoE, Qwen2-MoE"}, family::build_qwen2_moe},
    {{"qwen3_moe", "Qwen3-MoE"}, family::build_qwen3_moe},
    {{"deepseek_v2", "DeepSeek-V2 (MLA, MoE)"}, family::build_deepseek},
    {{"deepseek_v3", "DeepSeek-V3, R1 (MLA, MoE, MTP)"}, family::build_deepseek},
    {{"kimi_k2", "Kimi K2 (DeepSeek-V3 layout)"}, family::build_deepseek},
    {{"deepseek_v32", "DeepSeek-V3.2 (MLA + sparse indexer)"}, family::build_deepseek},
    {{"deepseek_v4", "DeepSeek-V4-Flash (sliding + compressed attention, mHC, MoE, MTP)"},
     family::build_deepseek_v4},
    {{"longcat_flash", "LongCat-Flash-Chat / -Thinking (two MLA sub-layers + shortcut MoE, MTP)"},
     family::build_longcat_flash},
    {{"gpt_oss", "gpt-oss"}, family::build_gpt_oss},
    {{"minimax_m2", "MiniMax-M2"}, family::build_minimax_m2},
    {{"minimax_m1", "MiniMax-M1-40k / -80k (lightning + softmax attention, MoE)"},
     family::build_minimax},
    {{"minimax_text_01", "MiniMax-Text-01 (lightning + softmax attention, MoE)"},
     family::build_minimax},
    {{"minimax", "MiniMax-Text-01 / M1 in transformers' port (-hf repos)"}, family::build_minimax},
    {{"llama4", "Llama 4 Scout, Maverick (text + vision)"}, family::build_llama4},
    {{"llama4_text", "Llama 4 (text only)"}, family::build_llama4_text},
    {{"nemotron-nas", "Llama-Nemotron Super/Ultra/Nano, Nemotron-51B (block_configs)"},
     family::build_decilm},
    {{"deci", "DeciLM"}, family::build_decilm},
    {{"olmoe", "OLMoE"}, family::build_olmoe},
    {{"flex_olmo", "FlexOlmo-7x7B-1T (-RT; OLMo 2 layers, 7-expert sparse FFN)"},
     family::build_flex_olmo},
    {{"glm4_moe", "GLM-4.5, GLM-4.5-Air, GLM-4.6"}, family::build_glm4_moe},
    {{"glm_moe_dsa", "GLM-5 (MLA + DSA indexer)"}, family::build_deepseek},
    {{"glm5_next", "GLM-5.3-Flash (KDA + NoPE MLA/DSA hybrid, mHC, MoE, MTP, vision)"},
     family::build_glm5_next},
    {{"glm5_next_text", "GLM-5.3-Flash text model"}, family::build_glm5_next},
    {{"glm4_moe_lite", "GLM-4.7-Flash (MLA, MoE, MTP)"}, family::build_deepseek},
    {{"chatglm", "ChatGLM-6B, ChatGLM2-6B, ChatGLM3-6B (-32k), GLM-4-9B (remote code)"},
     family::build_chatglm},
    {{"ernie4_5_moe", "ERNIE-4.5-21B-A3B, ERNIE-4.5-300B-A47B (MoE, shared experts)"},
     family::build_ernie4_5_moe},
    {{"nemotron_h", "Nemotron-H, Nemotron Nano v2, Nemotron 3 Nano / Super (hybrid Mamba-2)"},
     family::build_nemotron_h},
    {{"nemotron_h_puzzle", "Nemotron-Labs-3 Puzzle (per-layer block_configs)"},
     family::build_nemotron_h},
    {{"mamba", "Mamba"}, family::build_mamba},
    {{"falcon_mamba", "Falcon-Mamba"}, family::build_mamba},
    {{"mamba2", "Mamba-2, Mamba-Codestral"}, family::build_mamba},
    {{"jamba", "Jamba-v0.1, Jamba-1.5-Mini / Large (hybrid Mamba-1 / attention, MoE)"},
     family::build_jamba},
    {{"granitemoehybrid", "Granite 4.0 H-Small / H-Tiny / H-Micro, Granite 4.0 Micro"},
     family::build_granite_hybrid},
    {{"qwen3_next",
      "Qwen3-Next-80B-A3B, Qwen3-Coder-Next (gated DeltaNet + gated attention, MoE, MTP)"},
     family::build_qwen3_next},
    {{"qwen3_5", "Qwen3.5 / 3.6 dense (gated DeltaNet hybrid, MTP, vision encoder)"},
     family::build_qwen3_5},
    {{"qwen3_5_moe", "Qwen3.5 / 3.6 MoE (gated DeltaNet hybrid, MoE, MTP, vision encoder)"},
     family::build_qwen3_5_moe},
    {{"qwen3_5_text", "Qwen3.5 dense text model"}, family::build_qwen3_5_text},
    {{"qwen3_5_moe_text", "Qwen3.5 MoE text model"}, family::build_qwen3_5_moe_text},
    {{"falcon_h1", "Falcon-H1 (parallel attention + Mamba-2 hybrid)"}, family::build_falcon_h1},
    {{"zamba2", "Zamba2 (Mamba-2 with shared transformer blocks)"}, family::build_zamba2},
    {{"lfm2", "LFM2, LFM2.5 (gated short convolutions + GQA attention)"}, family::build_lfm2},
    {{"lfm2_moe", "LFM2-8B-A1B, LFM2-24B-A2B (short convolutions + GQA attention, MoE)"},
     family::build_lfm2_moe},
    {{"kimi_linear", "Kimi-Linear-48B-A3B (Kimi Delta Attention + MLA, MoE)"},
     family::build_kimi_linear},
    {{"mllama", "Llama 3.2 Vision (cross-attention text decoder + tiled ViT)"},
     family::build_mllama},
    {{"qwen2_vl", "Qwen2-VL (Qwen2 decoder + ViT)"}, family::build_qwen2_vl},
    {{"qwen2_5_vl", "Qwen2.5-VL (Qwen2 decoder + windowed ViT)"}, family::build_qwen2_5_vl},
    {{"qwen3_vl", "Qwen3-VL dense (Qwen3 decoder + ViT with DeepStack)"}, family::build_qwen3_vl},
    {{"qwen3_vl_moe", "Qwen3-VL MoE (Qwen3-MoE decoder + ViT with DeepStack)"},
     family::build_qwen3_vl_moe},
    {{"qwen3_omni_moe",
      "Qwen3-Omni-30B-A3B Instruct / Thinking / Captioner (thinker, audio and vision towers, "
      "talker, code2wav)"},
     family::build_qwen3_omni_moe},
    {{"qwen2_5_omni",
      "Qwen2.5-Omni-7B / -3B (thinker, audio and vision towers, talker, token2wav)"},
     family::build_qwen2_5_omni},
    {{"phimoe", "Phi-3.5-MoE (16 experts top-2, LayerNorm, attention and head biases)"},
     family::build_phimoe},
    {{"dbrx", "DBRX base / instruct (132B, 16 experts top-4, fused Wqkv)"}, family::build_dbrx},
    {{"granite", "Granite 3.0/3.1/3.2/3.3 dense (2B, 8B), PowerLM-3b"}, family::build_granite},
    {{"granitemoe", "Granite 3.0/3.1 MoE 1B-A400M, 3B-A800M, PowerMoE-3b"},
     family::build_granitemoe},
    {{"granitemoeshared", "Granite MoE with a shared MLP (moe-7b-1b-active-shared-experts)"},
     family::build_granitemoeshared},
    {{"internlm2", "InternLM2 / InternLM2.5 1.8B/7B/20B (base, chat, 1m)"},
     family::build_internlm2},
    {{"baichuan", "Baichuan-7B/13B, Baichuan2-7B/13B Base/Chat"}, family::build_baichuan},
    {{"starcoder2", "StarCoder2-3B/7B/15B"}, family::build_starcoder2},
    {{"cohere", "Command-R, Command-R+, Aya-23, Aya Expanse"}, family::build_cohere},
    {{"cohere2", "Command R7B, Command A"}, family::build_cohere2},
    {{"smollm3", "SmolLM3-3B, SmolLM3-3B-Base"}, family::build_smollm3},
    {{"olmo", "OLMo-1B-hf, OLMo-7B-hf, OLMo-7B-0424-hf / 0724-hf"}, family::build_olmo},
    {{"olmo3", "Olmo-3-1025-7B, Olmo-3-1125-32B"}, family::build_olmo3},
    {{"glm", "GLM-4-9B / glm-4-9b-chat-hf (transformers layout)"}, family::build_glm},
    {{"glm4", "GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1-0414"}, family::build_glm4},
    {{"exaone", "EXAONE 3.0 7.8B, EXAONE 3.5 2.4B/7.8B/32B, EXAONE-Deep"}, family::build_exaone},
    {{"nemotron", "Minitron-4B/8B-Base, Nemotron-Mini-4B-Instruct, nemotron-3-8b-hf"},
     family::build_nemotron},
    {{"gpt_neo", "GPT-Neo 125M / 1.3B / 2.7B"}, family::build_gpt_neo},
    {{"mpt", "MPT-7B (-instruct, -chat, -storywriter, -8k), MPT-30B"}, family::build_mpt},
    {{"codegen", "CodeGen 350M / 2B / 6B / 16B (nl, multi, mono)"}, family::build_codegen},
    {{"seed_oss", "Seed-OSS-36B (-Instruct, -Base)"}, family::build_seed_oss},
    {{"hunyuan_v1_dense", "Hunyuan 0.5B / 1.8B / 4B / 7B (-Instruct), Hy-MT"},
     family::build_hunyuan_v1_dense},
    {{"exaone4", "EXAONE 4.0 1.2B / 32B"}, family::build_exaone4},
    {{"arcee", "AFM-4.5B (-Base)"}, family::build_arcee},
    {{"afmoe", "Trinity Nano / Mini / Large (Arcee; gated attention, sigmoid-routed MoE)"},
     family::build_afmoe},
    {{"deepseek", "DeepSeekMoE 16B base / chat (routed + shared experts, remote code)"},
     family::build_deepseek_moe},
    {{"ernie4_5", "ERNIE-4.5-0.3B (-PT, -Base-PT; dense)"}, family::build_ernie4_5},
    {{"internvl_chat",
      "InternVL-Chat-V1-5, InternVL2 / 2.5 / 3 / 3.5 (InternViT + Qwen2 / "
      "InternLM2 / Llama / Phi-3 / Qwen3 / Qwen3-MoE / gpt-oss)"},
     family::build_internvl_chat},
    {{"bamba", "Bamba-9B (-v1, -v2; hybrid Mamba-2 / attention, SwiGLU FFN)"}, family::build_bamba},
    {{"hunyuan_v1_moe", "Hunyuan-A13B (-Instruct, -Pretrain)"}, family::build_hunyuan_v1_moe},
    {{"dots1", "dots.llm1 (base, inst)"}, family::build_dots1},
    {{"bailing_moe",
      "Ling-lite / -1.5, Ling-plus, Ling-Coder-lite; Ling / Ring 2.0 "
      "(BailingMoeV2ForCausalLM)"},
     family::build_bailing_moe},
    {{"minicpm",
      "MiniCPM-1B / 2B (-sft, -dpo), MiniCPM-MoE-8x2B, MiniCPM4-0.5B / 8B, MiniCPM4.1-8B"},
     family::build_minicpm},
    {{"minicpm3", "MiniCPM3-4B (MLA)"}, family::build_minicpm3},
    {{"llava", "LLaVA-1.5 7B / 13B, BakLLaVA (text + CLIP ViT)"}, family::build_llava},
    {{"llava_next", "LLaVA-NeXT / 1.6 (text + CLIP ViT, image_newline)"}, family::build_llava_next},
    {{"llava_next_video", "LLaVA-NeXT-Video 7B / 34B (llava_next + video pooler)"},
     family::build_llava_next_video},
    {{"helium", "Helium-1 2B, Helium-1-preview 2B (Kyutai)"}, family::build_helium},
    {{"cwm", "Code World Model 32B (Meta)"}, family::build_cwm},
    {{"vaultgemma", "VaultGemma 1B"}, family::build_vaultgemma},
    {{"paligemma", "PaliGemma, PaliGemma 2 (Gemma / Gemma 2 + SigLIP)"}, family::build_paligemma},
    {{"idefics3", "Idefics3, SmolVLM (Llama + SigLIP + pixel-shuffle projector)"},
     family::build_idefics3},
    {{"whisper", "Whisper tiny ... large-v3, large-v3-turbo, distil-whisper (encoder-decoder)"},
     family::build_whisper},
    {{"qwen2_audio", "Qwen2-Audio-7B, -Instruct (Qwen2 text + Whisper audio encoder)"},
     family::build_qwen2_audio},
    {{"minicpmv",
      "MiniCPM-Llama3-V-2_5, MiniCPM-V-2_6, MiniCPM-V-4, MiniCPM-V-4_5 (SigLIP + "
      "resampler + Llama 3 / Qwen2 / Qwen3)"},
     family::build_minicpmv},
    {{"glm4v", "GLM-4.1V-9B-Thinking / -Base, GLM-4.6V-Flash (GLM-4-0414 decoder + ViT)"},
     family::build_glm4v},
    {{"glm4v_moe", "GLM-4.5V, GLM-4.6V (GLM-4.5-Air MoE decoder without MTP + ViT)"},
     family::build_glm4v_moe},
    {{"glm46v", "transformers' GLM-4.6V wrapper (decoder chosen by text_config.model_type)"},
     family::build_glm46v},
    {{"apertus", "Apertus-8B-2509, Apertus-70B-2509 (+ -Instruct)"}, family::build_apertus},
    {{"mimo", "MiMo-7B-Base, -SFT, -RL, -RL-Zero, -RL-0530 (Qwen2 layout + MTP layer)"},
     family::build_mimo},
    {{"bailing_moe_v2", "Ling / Ring 2.0 under the type third-party ports give it"},
     family::build_bailing_moe_v2},
    {{"gemma3n", "Gemma 3n E2B / E4B (text + USM audio + MobileNetV5 vision)"},
     family::build_gemma3n},
    {{"gemma3n_text", "Gemma 3n text model on its own"}, family::build_gemma3n_text},
    {{"internvl",
      "InternVL3 / InternVL3.5 -hf / -HF, InternVL2_5-MPO-hf (transformers-native "
      "InternViT + Qwen2 / Qwen3 / Qwen3-MoE / gpt-oss / Llama)"},
     family::build_internvl},
    {{"kimi_vl",
      "Kimi-VL-A3B-Instruct / -Thinking / -Thinking-2506 (MoonViT + DeepSeek-V3 "
      "layout MoE)"},
     family::build_kimi_vl},
    {{"deepseek_vl_v2",
      "DeepSeek-VL2 Tiny / Small / base (SigLIP-SO400M + DeepSeek MoE), DeepSeek-OCR (SAM + CLIP)"},
     family::build_deepseek_vl_v2},
    {{"dots_ocr", "dots.ocr (Qwen2 text + dots_vit vision encoder)"}, family::build_dots_ocr},
    {{"smolvlm", "SmolVLM2-2.2B-Instruct, SmolVLM2-256M / 500M-Video-Instruct"},
     family::build_smolvlm},
    {{"llava_onevision", "LLaVA-OneVision Qwen2 0.5B / 7B / 72B (text + SigLIP ViT)"},
     family::build_llava_onevision},
    {{"aya_vision", "Aya Vision 8B / 32B (Cohere2 / Cohere text + SigLIP ViT)"},
     family::build_aya_vision},
};

// The dropout probabilities under the names the config dialects use (BERT, GPT-2, GPT-NeoX,
// Llama, T5, Falcon, ...), read the same way for every family: they only change training
// activations. A nested text_config is read when the outer config names none.
void read_dropout(const nlohmann::json& config, ModelDescription& model) {
  const auto first = [](const nlohmann::json& object, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      const auto it = object.find(key);
      if (it != object.end() && it->is_number()) {
        const double value = it->get<double>();
        if (value > 0.0 && value < 1.0) return value;
      }
    }
    return 0.0;
  };
  const std::initializer_list<const char*> attention_keys = {
      "attention_probs_dropout_prob", "attention_dropout", "attn_pdrop", "attn_dropout"};
  const std::initializer_list<const char*> hidden_keys = {
      "hidden_dropout_prob", "hidden_dropout", "resid_pdrop", "dropout_rate", "dropout"};
  const auto text = config.find("text_config");
  const bool nested = text != config.end() && text->is_object();
  model.attention_dropout = first(config, attention_keys);
  if (model.attention_dropout == 0.0 && nested) model.attention_dropout = first(*text, attention_keys);
  model.hidden_dropout = first(config, hidden_keys);
  if (model.hidden_dropout == 0.0 && nested) model.hidden_dropout = first(*text, hidden_keys);
}

std::string supported_list() {
  std::string names;
  for (const ArchitectureRow& row : k_architectures) {
    if (!names.empty()) names += ", ";
    names += row.info.model_type;
  }
  return names;
}

constexpr std::size_t k_architecture_count = std::size(k_architectures);

std::array<ArchitectureInfo, k_architecture_count> make_infos() {
  std::array<ArchitectureInfo, k_architecture_count> infos{};
  for (std::size_t i = 0; i < k_architecture_count; ++i) infos[i] = k_architectures[i].info;
  return infos;
}

const std::array<ArchitectureInfo, k_architecture_count> k_infos = make_infos();

}  // namespace

std::span<const ArchitectureInfo> supported_architectures() { return k_infos; }

namespace {

// hf_quant_config.json (ModelOpt exports): {"producer": {...}, "quantization": {...}}.
Quantization parse_hf_quant_config(std::string_view text, const std::string& model_type) {
  const std::string file = "hf_quant_config.json";
  try {
    nlohmann::json root;
    try {
      root = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
      throw ConfigError(fmt::format("{} is not valid JSON ({})", file, error.what()));
    }
    if (!root.is_object() || !root.contains("quantization") || !root["quantization"].is_object()) {
      throw ConfigError(fmt::format("{} has no \"quantization\" object; ModelOpt writes one", file));
    }
    if (root.contains("producer") && !root["quantization"].contains("producer")) {
      root["quantization"]["producer"] = root["producer"];
    }
    const ConfigReader reader(root["quantization"], "quantization", model_type);
    return parse_modelopt(reader, file);
  } catch (const ConfigError& error) {
    std::string message = error.what();
    if (message.starts_with("config.json")) message.replace(0, 11, file);
    throw ConfigError(message);
  }
}

}  // namespace

ModelDescription parse_model_config(std::string_view json_text) {
  return parse_model_config(json_text, {});
}

ModelDescription parse_model_config(std::string_view json_text,
                                    std::string_view hf_quant_config_text) {
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& error) {
    // parse_error, and out_of_range 406 for a number beyond double range such as 1e400.
    // nlohmann's message starts with "[json.exception.<kind>.<id>] "; keep what follows.
    const std::string what = error.what();
    const std::size_t bracket = what.find("] ");
    const std::size_t detail = bracket == std::string::npos ? bracket : bracket + 2;
    throw ConfigError(fmt::format("config.json is not valid JSON: {}",
                                  detail == std::string::npos ? what : what.substr(detail)));
  }
  if (!config.is_object()) {
    throw ConfigError(fmt::format(
        "config.json must be a JSON object with a 'model_type' key, got a JSON {}",
        config.type_name()));
  }
  const auto type_it = config.find("model_type");
  if (type_it == config.end() && config.contains("quantization") && config.contains("producer")) {
    throw ConfigError(
        "this is an hf_quant_config.json (ModelOpt's quantization map), not a config.json; pass "
        "the checkpoint folder or its config.json and trace reads both");
  }
  if (type_it == config.end() || !type_it->is_string()) {
    throw ConfigError(fmt::format(
        "config.json has no 'model_type' string; add the model's type (supported: {})",
        supported_list()));
  }
  const std::string model_type = type_it->get<std::string>();
  for (const ArchitectureRow& row : k_architectures) {
    if (row.info.model_type != model_type) continue;
    const ConfigReader reader(config, "", model_type);
    try {
      ModelDescription model = row.build(reader);
      model.model_type = model_type;
      read_dropout(config, model);
      // A family that derives its checkpoint's layout has read the quantization already.
      if (!model.quantization) model.quantization = parse_quantization(reader);
      if (!model.quantization && !hf_quant_config_text.empty()) {
        model.quantization = parse_hf_quant_config(hf_quant_config_text, model_type);
      }
      return model;
    } catch (const nlohmann::json::type_error& error) {
      // A reader that missed a type check: still the input's fault, said as bad input.
      const std::string what = error.what();
      const std::size_t bracket = what.find("] ");
      const std::string detail = bracket == std::string::npos ? what : what.substr(bracket + 2);
      throw ConfigError(fmt::format("config.json holds a value of the wrong type: {}", detail));
    }
  }
  throw ConfigError(fmt::format(
      "model_type '{}' is not supported; supported model types: {}", model_type,
      supported_list()));
}

}  // namespace trace
