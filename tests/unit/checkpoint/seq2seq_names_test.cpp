// T5, mT5, umT5 and Whisper checkpoint names (src/checkpoint/naming.cpp), written by hand from
// transformers' modeling_t5.py / modeling_umt5.py (T5Block.layer = [T5LayerSelfAttention,
// (T5LayerCrossAttention,) T5LayerFF]; T5Attention's q, k, v, o and relative_attention_bias
// nn.Embedding(buckets, heads); T5DenseActDense wi / wo, T5DenseGatedActDense wi_0, wi_1, wo) and
// each fixture's hyperparameters. tests/data/configs/SOURCES-llama-encoder-families.md holds the
// published counts (t5-small 60,506,624 parameters, 60,506,880 stored with the unused table);
// SOURCES-whisper.md Whisper's module layout and counts.
#include <algorithm>
#include <string>
#include <vector>

#include "catch.hpp"
#include "inventory_lookup.hpp"
#include "trace/checkpoint/inventory.hpp"

namespace {

using trace::checkpoint::Inventory;
using trace::test::check_absent;
using trace::test::check_tensor;
using trace::test::find_tensor;
using trace::test::fixture_inventory;
using trace::test::inventory_params;

}  // namespace

TEST_CASE("T5 v1.0: shared, block.N.layer.K, ReLU wi / wo, one bias table per stack",
          "[checkpoint][names]") {
  // t5-small: d_model 512, 8 heads x d_kv 64 = 512, d_ff 2048, 6 + 6 blocks, 32 buckets, the
  // head tied to shared [32128, 512].
  const Inventory inventory = fixture_inventory("google-t5--t5-small.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "shared.weight", {32128, 512});
  check_tensor(inventory, "encoder.block.0.layer.0.SelfAttention.q.weight", {512, 512});
  check_tensor(inventory, "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
               {32, 8});
  check_absent(inventory, "encoder.block.1.layer.0.SelfAttention.relative_attention_bias.weight");
  check_tensor(inventory, "encoder.block.5.layer.0.layer_norm.weight", {512});
  check_tensor(inventory, "encoder.block.5.layer.1.DenseReluDense.wi.weight", {2048, 512});
  check_tensor(inventory, "encoder.block.5.layer.1.DenseReluDense.wo.weight", {512, 2048});
  check_tensor(inventory, "encoder.block.5.layer.1.layer_norm.weight", {512});
  check_tensor(inventory, "encoder.final_layer_norm.weight", {512});
  check_tensor(inventory, "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
               {32, 8});
  check_tensor(inventory, "decoder.block.3.layer.1.EncDecAttention.k.weight", {512, 512});
  check_tensor(inventory, "decoder.block.3.layer.1.EncDecAttention.o.weight", {512, 512});
  check_tensor(inventory, "decoder.block.5.layer.2.DenseReluDense.wo.weight", {512, 2048});
  check_tensor(inventory, "decoder.block.5.layer.2.layer_norm.weight", {512});
  check_tensor(inventory, "decoder.final_layer_norm.weight", {512});
  check_absent(inventory, "decoder.block.5.layer.1.DenseReluDense.wo.weight");
  check_absent(inventory, "encoder.block.0.layer.1.DenseReluDense.wi_0.weight");
  // The unused cross-attention table the v1.0 uploads keep, listed as may-be-stored.
  const auto* unused = find_tensor(
      inventory, "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight");
  REQUIRE(unused != nullptr);
  CHECK(unused->shape == std::vector<std::int64_t>{32, 8});
  CHECK(unused->logical_params == 0);
  // 131 parameter tensors: shared; 6 encoder blocks x 8 + the table + the final norm (50); 6
  // decoder blocks x 13 + the table + the final norm (80). They hold 60,506,624 parameters.
  CHECK(inventory_params(inventory) == 60'506'624);
  CHECK(std::count_if(inventory.tensors.begin(), inventory.tensors.end(),
                      [](const auto& tensor) { return tensor.logical_params > 0; }) == 131);
}

TEST_CASE("T5 v1.1 and mT5: gated wi_0 / wi_1, an untied lm_head", "[checkpoint][names]") {
  // t5-v1_1-small: 6 heads x 64 = 384 inner width, d_ff 1024, gated-gelu, 8 + 8 blocks, untied.
  const Inventory inventory = fixture_inventory("google--t5-v1_1-small.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "encoder.block.7.layer.0.SelfAttention.q.weight", {384, 512});
  check_tensor(inventory, "encoder.block.7.layer.0.SelfAttention.o.weight", {512, 384});
  check_tensor(inventory, "encoder.block.7.layer.1.DenseReluDense.wi_0.weight", {1024, 512});
  check_tensor(inventory, "encoder.block.7.layer.1.DenseReluDense.wi_1.weight", {1024, 512});
  check_tensor(inventory, "decoder.block.7.layer.2.DenseReluDense.wo.weight", {512, 1024});
  check_tensor(inventory, "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
               {32, 6});
  check_tensor(inventory, "lm_head.weight", {32128, 512});
  check_absent(inventory, "encoder.block.7.layer.1.DenseReluDense.wi.weight");
  // untied: no unused v1.0 table
  check_absent(inventory, "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight");
}

TEST_CASE("umT5: a relative-position bias table in every self-attention", "[checkpoint][names]") {
  // umt5-small: 8 + 8 blocks, 6 heads, 32 buckets, vocabulary 256,384, untied.
  const Inventory inventory = fixture_inventory("google--umt5-small.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "shared.weight", {256384, 512});
  for (const char* stack : {"encoder", "decoder"}) {
    for (int block = 0; block < 8; ++block) {
      check_tensor(inventory,
                   std::string(stack) + ".block." + std::to_string(block) +
                       ".layer.0.SelfAttention.relative_attention_bias.weight",
                   {32, 6});
    }
  }
  // cross-attention holds none
  check_absent(inventory, "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight");
  check_tensor(inventory, "lm_head.weight", {256384, 512});
}

TEST_CASE("T5EncoderModel: shared and the encoder alone, under the same names",
          "[checkpoint][names]") {
  // FLUX.1-dev's text_encoder_2 (T5-XXL's encoder): d_model 4096, 64 heads x 64, d_ff 10240,
  // gated-gelu, 24 blocks; no decoder and no head, whatever num_decoder_layers says.
  const Inventory inventory =
      fixture_inventory("black-forest-labs--FLUX.1-dev--text_encoder_2.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "shared.weight", {32128, 4096});
  check_tensor(inventory, "encoder.block.23.layer.0.SelfAttention.v.weight", {4096, 4096});
  check_tensor(inventory, "encoder.block.23.layer.1.DenseReluDense.wi_1.weight", {10240, 4096});
  check_tensor(inventory, "encoder.block.23.layer.1.DenseReluDense.wo.weight", {4096, 10240});
  check_tensor(inventory, "encoder.final_layer_norm.weight", {4096});
  check_absent(inventory, "decoder.final_layer_norm.weight");
  check_absent(inventory, "lm_head.weight");
}

TEST_CASE("Whisper: BART's layer names, conv1 / conv2, no shared table, proj_out not stored",
          "[checkpoint][names]") {
  // whisper-tiny: d_model 384, 4 + 4 layers, ffn 1536, 80 mel bins, 1,500 source and 448 target
  // positions, vocabulary 51,865, F32. modeling_whisper.py: k_proj has no bias.
  const Inventory inventory = fixture_inventory("openai--whisper-tiny.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.encoder.conv1.weight", {384, 80, 3});
  check_tensor(inventory, "model.encoder.conv1.bias", {384});
  check_tensor(inventory, "model.encoder.conv2.weight", {384, 384, 3});
  check_tensor(inventory, "model.encoder.embed_positions.weight", {1500, 384});
  check_tensor(inventory, "model.encoder.layers.3.self_attn.k_proj.weight", {384, 384});
  check_absent(inventory, "model.encoder.layers.3.self_attn.k_proj.bias");
  check_tensor(inventory, "model.encoder.layers.3.self_attn.q_proj.bias", {384});
  check_tensor(inventory, "model.encoder.layers.3.fc1.weight", {1536, 384});
  check_tensor(inventory, "model.encoder.layer_norm.bias", {384});
  check_tensor(inventory, "model.decoder.embed_tokens.weight", {51865, 384});
  check_tensor(inventory, "model.decoder.embed_positions.weight", {448, 384});
  check_tensor(inventory, "model.decoder.layers.3.encoder_attn.out_proj.weight", {384, 384});
  check_tensor(inventory, "model.decoder.layers.3.encoder_attn_layer_norm.weight", {384});
  check_tensor(inventory, "model.decoder.layer_norm.weight", {384});
  check_absent(inventory, "model.shared.weight");
  check_absent(inventory, "proj_out.weight");
  check_absent(inventory, "lm_head.weight");
  // encoder: 2 convs (4) + positions + 4 x 15 + the final norm (2) = 67; decoder: embed_tokens
  // + positions + 4 x 24 + the final norm (2) = 100: 167 tensors, 37,760,640 parameters.
  CHECK(inventory.tensors.size() == 167);
  CHECK(inventory_params(inventory) == 37'760'640);
}

TEST_CASE("Whisper large-v3-turbo: 32 encoder layers, 4 decoder layers, F16",
          "[checkpoint][names]") {
  const Inventory inventory =
      fixture_inventory("openai--whisper-large-v3-turbo.reconstructed.json");
  CHECK(inventory.complete);
  check_tensor(inventory, "model.encoder.conv1.weight", {1280, 128, 3});
  check_tensor(inventory, "model.encoder.layers.31.fc2.weight", {1280, 5120});
  check_tensor(inventory, "model.decoder.layers.3.fc2.weight", {1280, 5120});
  check_absent(inventory, "model.decoder.layers.4.fc2.weight");
  const auto* conv = find_tensor(inventory, "model.encoder.conv2.weight");
  REQUIRE(conv != nullptr);
  CHECK(conv->dtype == "F16");
}
