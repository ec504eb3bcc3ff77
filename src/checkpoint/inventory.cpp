// The expected tensor table. Linear weights and their names come from layout::named_linears (the
// same table ModelOpt storage uses); this file adds what is not a Linear (norms, biases, Mamba
// vectors, router buffers, MTP extras), the wrapper prefix each family's checkpoint uses, and
// each quantization format's tensors per Linear (the rules of estimate/storage.cpp, written out
// tensor by tensor). How each family spells the names (rename tables and layout switches: GPT-2's
// Conv1D, BERT's gamma/beta, gpt-oss's stacked experts, the encoders' top-level heads, BART's
// per-stack layers) is naming.cpp's; families not listed there yield a partial inventory.
#include "trace/checkpoint/inventory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "../estimate/checkpoint_layout.hpp"
#include "naming.hpp"
#include "trace/checked_math.hpp"
#include "trace/checkpoint/safetensors.hpp"

namespace trace::checkpoint {

BaseDtype base_dtype(const ModelDescription& model) {
  if (model.stored_dtype() == "float32") return {"F32", 32};
  if (model.torch_dtype == "float16") return {"F16", 16};
  return {"BF16", 16};  // storage.cpp's default too
}

void add_gap(Inventory& inventory, std::string why) {
  if (std::find(inventory.gaps.begin(), inventory.gaps.end(), why) == inventory.gaps.end()) {
    inventory.gaps.push_back(std::move(why));
  }
}

void add_tensor(Inventory& inventory, std::string name, std::vector<std::int64_t> shape,
                std::string_view dtype, bool parameter, std::int64_t logical) {
  ExpectedTensor tensor{std::move(name), std::move(shape), dtype, 0};
  tensor.logical_params = !parameter ? 0 : logical >= 0 ? logical : tensor.elements();
  inventory.tensors.push_back(std::move(tensor));
}

namespace {

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

// Elements of a tensor of this shape (1 for a scalar's empty one).
std::int64_t shape_elements(const std::vector<std::int64_t>& shape) {
  std::int64_t elements = 1;
  for (const std::int64_t dim : shape) elements = checked_mul(elements, dim, "a stored tensor");
  return elements;
}

class Builder {
 public:
  Builder(const ModelDescription& model, Inventory& inventory)
      : model_(model),
        inventory_(inventory),
        naming_(naming_for(model.model_type, model.text_model_type)),
        base_(base_dtype(model)) {
    inventory_.naming = std::string(naming_.label);
    inventory_.bare_prefix = std::string(naming_.bare_prefix);
    if (naming_.plain_mlp_up && !model.stacks.empty() && !model.stacks.front().blocks.empty() &&
        model.stacks.front().blocks.front().mlp.kind == MlpKind::plain) {
      naming_.renames.insert(naming_.renames.begin(), *naming_.plain_mlp_up);
    }
    inventory_.layer_prefix = fmt::format("{}{}.", naming_.root, naming_.layers);
    if (!naming_.known) {
      gap(fmt::format("checkpoint names of model_type '{}' are not modelled tensor by tensor",
                      model.model_type));
    }
    if (model.quantization && model.quantization->compressed_tensors) {
      ct_matcher_.emplace(*model.quantization->compressed_tensors);
    }
    if (model.quantization && model.quantization->format == QuantFormat::modelopt) {
      for (const Stack& stack : model.stacks) {
        for (const Block& block : stack.blocks) {
          if (block.moe && block.moe->router_fp32) fp32_routers_ = true;
        }
      }
    }
    if (!naming_.inner_layers.empty()) read_layer_groups();
    // gamma/beta survive only in Google's TF conversions, which hold the pre-training heads:
    // transformers renames them at load, so a fine-tune or a sentence-transformers BertModel
    // it saved stores weight/bias.
    if (naming_.gamma_beta &&
        std::none_of(model.extra_parameters.begin(), model.extra_parameters.end(),
                     [](const ExtraParameter& extra) { return extra.name.starts_with("cls."); })) {
      naming_.gamma_beta = false;
      inventory_.naming =
          "BERT (bert.encoder.layer.N, attention.self.query, LayerNorm weight/bias)";
    }
  }

  void build() {
    if (naming_.family_tensors != nullptr) {
      // Naming::family_tensors: the family's own list, nothing of the builder's beside it.
      naming_.family_tensors(model_, inventory_);
      inventory_.main_layers = 0;
      inventory_.complete = inventory_.gaps.empty();
      return;
    }
    if (naming_.router_rows_extra) read_router_rows();
    if (!naming_.mhc_sites.empty() || naming_.indexer_kpool) read_glm5_next_extras();
    std::int64_t rows = model_.vocab_size;  // Mllama's: vocab_size + the folded extra's rows
    for (const ExtraParameter& extra : model_.extra_parameters) rows += folded_rows(extra);
    add(root(naming_.embedding) + ".weight", {rows, model_.embedding_dim}, base_.name, true);
    emit_embedding_extras();
    if (naming_.stack_layers) {
      emit_named_stacks();
    } else {
      emit_stacks();
    }
    for (const ExtraParameter& extra : model_.extra_parameters) emit_extra(extra);
    if (naming_.bias_optional && model_.has_lm_head && model_.tie_word_embeddings &&
        model_.lm_head_bias) {
      // The tied head's weight is the token embedding; its bias is a tensor of its own.
      add(renamed("lm_head") + ".bias", {model_.vocab_size}, base_.name, true);
    }
    emit_buffers();
    if (model_.bare_base_model && !naming_.stack_layers) strip_root();
    if (naming_.droppable_positions) {
      for (ExpectedTensor& tensor : inventory_.tensors) {
        if (tensor.name == "model.encoder.embed_positions.weight" ||
            tensor.name == "model.decoder.embed_positions.weight") {
          tensor.droppable = true;
        }
      }
    }
    if (!naming_.mtp_after_layers) inventory_.main_layers = 0;
    inventory_.complete = inventory_.gaps.empty();
  }

 private:
  // A bare *Model's state dict has no wrapper prefix: "bert.encoder.layer.0..." is stored as
  // "encoder.layer.0..."; the heads it lacks never carried one.
  void strip_root() {
    const std::string_view prefix = naming_.root;
    if (prefix.empty()) return;
    for (ExpectedTensor& tensor : inventory_.tensors) {
      if (tensor.name.starts_with(prefix)) tensor.name.erase(0, prefix.size());
    }
    if (inventory_.layer_prefix.starts_with(prefix))
      inventory_.layer_prefix.erase(0, prefix.size());
    inventory_.naming += " (bare base model: no wrapper prefix)";
  }

  const Stack* main_stack() const {
    const Stack* main = nullptr;
    for (const Stack& stack : model_.stacks) {
      if (!stack.mtp && !stack.vision) main = &stack;
    }
    return main;
  }

  // ALBERT: run i of group g owns weights only when it is the group's first (albert.cpp), so the
  // stack reads owner blocks [0, inner), shared ones up to `period` (the next group's first run),
  // and so on. A stack whose every run owns weights does not tell groups from inner layers.
  void read_layer_groups() {
    const Stack* main = main_stack();
    if (main == nullptr || main->blocks.empty()) return;
    const std::vector<Block>& blocks = main->blocks;
    std::size_t inner = 0;
    while (inner < blocks.size() && !blocks[inner].shared_weights) ++inner;
    std::size_t period = inner;
    while (period < blocks.size() && blocks[period].shared_weights) ++period;
    if (inner == blocks.size() && blocks.size() > 1) {
      gap("ALBERT layers that all own weights do not tell num_hidden_groups from inner_group_num");
      inner = period = 1;
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (inner == 0 || blocks[b].shared_weights != (b % period >= inner)) {
        gap("the ALBERT layer runs do not follow the group pattern");
        break;
      }
    }
    group_period_ = static_cast<std::int64_t>(std::max<std::size_t>(period, 1));
  }

  void emit_stacks() {
    for (const layout::NamedLinear& linear : layout::named_linears(model_)) emit_linear(linear);
    for (const Stack& stack : model_.stacks) {
      if (stack.vision) {
        emit_vision_stack(stack);
        continue;
      }
      for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
        emit_block(stack, fmt::format("{}.{}", stack.mtp ? "mtp.layers" : "layers", i),
                   stack.blocks[i]);
      }
      if (stack.final_norm) {
        if (stack.mtp && !naming_.mtp_norm.empty()) {
          norm(std::string(naming_.mtp_norm), *stack.final_norm, false);
        } else if (stack.mtp) {
          gap("an MTP stack's own final norm is not named");
        } else {
          const std::string_view at =
              naming_.final_norm_root.empty() ? naming_.root : naming_.final_norm_root;
          norm(std::string(at) + stack.final_norm->name, *stack.final_norm, false);
        }
      }
    }
  }

  // A vision tower's blocks under vision_root + "<stack>.blocks.N" ("model.visual.", "visual."),
  // their Linears with biases as trace names them, respelled by the family's "visual." renames.
  // Every upload trace names keeps its tower unquantized; a quantized one stays partial.
  void emit_vision_stack(const Stack& stack) {
    if (!naming_.vision_root) {
      gap("vision tower tensors are not named");
      return;
    }
    // (FP8Linear per tensor, Ministral 3's, and Qwen3.5's block FP8: the tower is in
    // modules_to_not_convert.)
    const bool kept =
        model_.quantization &&
        ((naming_.fp8_tensor_scale_inv && model_.quantization->format == QuantFormat::fp8_tensor) ||
         (naming_.qwen_fp8_block && model_.quantization->format == QuantFormat::fp8_block));
    if (model_.quantization && !kept) gap("a quantized checkpoint's vision tower is not named");
    std::string_view layers = naming_.vision_layers;
    if (!naming_.vision_stack.empty() && stack.name != naming_.vision_stack) {
      const auto other =
          std::find_if(naming_.other_towers.begin(), naming_.other_towers.end(),
                       [&](const Naming::OtherTower& tower) { return tower.stack == stack.name; });
      if (other == naming_.other_towers.end()) {
        gap(fmt::format("a vision tower '{}' is not named by {}", stack.name, naming_.label));
      } else {
        layers = other->layers;
      }
    }
    const std::string at = fmt::format("{}{}", *naming_.vision_root, stack.name);
    for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
      const std::string prefix = fmt::format("{}.{}.{}", at, layers, i);
      std::vector<layout::NamedLinear> linears;
      layout::block_linears(prefix, stack.blocks[i], false, linears);
      for (const layout::NamedLinear& linear : linears) {
        const std::string name = renamed(linear.name);
        if (linear.bias) add(name + ".bias", {linear.rows}, base_.name, true);
        add(name + ".weight", {linear.rows, linear.cols}, base_.name, true);
      }
      emit_block(stack, prefix, stack.blocks[i]);
    }
    if (stack.final_norm)
      norm(renamed(at + "." + stack.final_norm->name), *stack.final_norm, false);
  }

  // A vision tower's parameters outside its blocks ("visual.patch_embed.proj", "visual.merger.*"):
  // the weight at the shape its family gives, a bias where the count holds shape[0] more;
  // LayerNorms as weight and bias; a bare nn.Parameter under its own name.
  void emit_vision_extra(const ExtraParameter& extra) {
    if (extra.op == "LayerScale" && extra.name.find(".*.") != std::string::npos) {
      emit_layer_scales(extra);
      return;
    }
    // An extra the family already spells under the root (GLM-4V's "model.visual.*") keeps it.
    const std::string_view under = *naming_.vision_root;
    const std::string name =
        renamed(extra.name.starts_with(under) ? extra.name : std::string(under) + extra.name);
    if (extra.op == "LayerNorm" && extra.shape.empty() && extra.params % 2 == 0) {
      norm(name, Norm{"", NormKind::layer_norm, extra.params / 2}, false);
      return;
    }
    if (extra.op == "RMSNorm" && extra.shape.empty()) {
      norm(name, Norm{"", NormKind::rms_norm, extra.params}, false);
      return;
    }
    if (!emit_shaped(name, extra)) {
      gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
    }
  }

  // A tower's layer scales as one extra (layout::layer_scales): a bare vector per leaf in every
  // layer of the stack the prefix names.
  void emit_layer_scales(const ExtraParameter& extra) {
    const std::optional<layout::LayerScales> scales = layout::layer_scales(model_, extra);
    if (!scales) {
      gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
      return;
    }
    for (std::int64_t i = 0; i < scales->layers; ++i) {
      for (const std::string& leaf : scales->leaves) {
        add(renamed(
                fmt::format("{}{}.{}.{}", *naming_.vision_root, scales->layers_prefix, i, leaf)),
            {scales->width}, base_.name, true);
      }
    }
  }

  // An extra at the shape its family gives: the weight, a bias where the count holds shape[0]
  // more, a bare nn.Parameter under its own name. False (nothing added) without a shape or where
  // the count disagrees with it.
  bool emit_shaped(const std::string& name, const ExtraParameter& extra) {
    if (extra.shape.empty()) return false;
    const bool bias = extra.shape_has_bias();
    if (!bias && extra.params != extra.weight_elements()) return false;
    if (extra.bare && !bias) {
      add(name, extra.shape, base_.name, true);
      return true;
    }
    if (bias) add(name + ".bias", {extra.shape.front()}, base_.name, true);
    add(name + ".weight", extra.shape, base_.name, true);
    return true;
  }

  // Encoder-decoders: layout::named_linears names every stack's layers "layers.N", so each
  // stack's Linears are taken from a description holding that stack alone, then the lm_head.
  void emit_named_stacks() {
    // A bare *Model saves its modules without the "model." wrapper; which spelling the bare
    // uploads (facebook/bart-base, bart-large) hold is not established, so a family names it
    // by Naming::bare_prefix, which reconciles either.
    const bool head = model_.has_lm_head ||
                      std::any_of(model_.extra_parameters.begin(), model_.extra_parameters.end(),
                                  [](const ExtraParameter& extra) {
                                    return extra.name.starts_with("classification_head.") ||
                                           extra.name == "qa_outputs";
                                  });
    // (A family saved without a wrapper, T5's, spells its bare classes alike; one with a
    // bare_prefix reconciles either spelling.)
    if (!head && !naming_.root.empty() && naming_.bare_prefix.empty()) {
      gap("the tensor names of a bare encoder-decoder (*Model) upload are not known");
    }
    for (const Stack& stack : model_.stacks) {
      if (stack.vision || stack.mtp) {
        gap("vision and MTP stacks of an encoder-decoder are not named");
        continue;
      }
      stack_ = stack.name;
      ModelDescription alone;
      alone.has_lm_head = false;
      alone.stacks.push_back(stack);
      for (const layout::NamedLinear& linear : layout::named_linears(alone)) emit_linear(linear);
      for (std::size_t i = 0; i < stack.blocks.size(); ++i) {
        emit_block(stack, fmt::format("layers.{}", i), stack.blocks[i]);
      }
      if (stack.final_norm) {
        norm(fmt::format("{}{}.{}", naming_.root, stack.name, stack.final_norm->name),
             *stack.final_norm, false);
      }
    }
    stack_.clear();
    for (const layout::NamedLinear& linear : layout::named_linears(model_)) {
      if (linear.kind == layout::LinearKind::head) emit_linear(linear);
    }
  }

  void gap(std::string why) { add_gap(inventory_, std::move(why)); }

  std::string root(std::string_view module) const {
    return fmt::format("{}{}", naming_.root, module);
  }

  // Learned positions, BERT's token types and embedding norm: named where the family says how.
  void emit_embedding_extras() {
    const std::int64_t width = model_.position_width();
    if (model_.learned_positions > 0) {
      if (naming_.positions.empty()) {
        gap("position embeddings are not named for this family");
      } else {
        add(root(naming_.positions) + ".weight", {model_.learned_positions, width}, base_.name,
            true);
      }
    }
    if (model_.token_types > 0) {
      if (naming_.token_types.empty()) {
        gap("token-type embeddings are not named for this family");
      } else {
        add(root(naming_.token_types) + ".weight", {model_.token_types, width}, base_.name, true);
      }
    }
    if (model_.embedding_norm) {
      norm(root(model_.embedding_norm->name), *model_.embedding_norm, false);
    }
  }

  // Buffers some uploads store: name and shape known, dtype the upload's (docs/checkpoint.md).
  void emit_buffers() {
    const Stack* main = nullptr;
    for (const Stack& stack : model_.stacks) {
      if (!stack.mtp && !stack.vision) main = &stack;
    }
    const std::int64_t layers = main ? static_cast<std::int64_t>(main->blocks.size()) : 0;
    if (!naming_.position_ids.empty() && model_.max_position_embeddings > 0) {
      add_buffer(root(naming_.position_ids), {1, model_.max_position_embeddings}, "I64");
    }
    switch (naming_.buffers) {
      case Buffers::none:
        return;
      case Buffers::gpt2_masks: {
        // GPT2Attention: bias = tril(ones(n_positions, n_positions)).view(1, 1, n, n).
        const std::int64_t n = model_.learned_positions;
        for (std::int64_t i = 0; i < layers; ++i) {
          add_buffer(full_name(fmt::format("layers.{}.attn.bias", i)), {1, 1, n, n}, "F32");
        }
        return;
      }
      case Buffers::neox_masks: {
        // GPTNeoXAttention (transformers < 4.31): bias bool [1, 1, max_pos, max_pos], masked_bias
        // a scalar, rotary_emb.inv_freq [rotary_dim / 2].
        const std::int64_t n = model_.max_position_embeddings;
        for (std::int64_t i = 0; i < layers; ++i) {
          const std::string at = full_name(fmt::format("layers.{}.attention", i));
          const Block& block = main->blocks[static_cast<std::size_t>(i)];
          const std::int64_t rotary = block.attention.rotary_dim;
          add_buffer(at + ".bias", {1, 1, n, n}, "BOOL");
          add_buffer(at + ".masked_bias", {}, "F32");
          add_buffer(at + ".rotary_emb.inv_freq", {rotary / 2}, "F32");
        }
        return;
      }
      case Buffers::tied_head_copy:
        if (model_.has_lm_head && model_.tie_word_embeddings) {
          add_buffer(renamed("lm_head.weight"), {model_.vocab_size, model_.embedding_dim},
                     base_.name);  // ModernBERT's head is "decoder"
        }
        return;
      case Buffers::stored_extras:
        for (const StoredExtra& extra : model_.stored_extras) emit_stored_extra(extra);
        return;
      case Buffers::seq2seq:
        for (const StoredExtra& extra : model_.stored_extras) emit_stored_extra(extra);
        if (model_.tie_word_embeddings) {
          // Saved before safetensors dropped tied duplicates: each stack's embed_tokens and the
          // lm_head hold model.shared again.
          const std::vector<std::int64_t> table{model_.vocab_size, model_.embedding_dim};
          for (const char* copy : {"encoder.embed_tokens.weight", "decoder.embed_tokens.weight"}) {
            // Marian without shared embeddings holds the decoder's table as a parameter.
            if (!listed(root(copy))) add_buffer(root(copy), table, base_.name);
          }
          if (model_.has_lm_head) add_buffer("lm_head.weight", table, base_.name);
        }
        return;
    }
  }

  // A StoredExtra carries its full name and element count; its shape is the module's.
  void emit_stored_extra(const StoredExtra& extra) {
    // The tensor's dtype must be static storage; the description's string is not.
    const SafetensorsDtype* dtype = find_safetensors_dtype(extra.dtype);
    const std::string_view stored = dtype != nullptr ? dtype->name : base_.name;
    if (extra.name.find(".*.") != std::string::npos) {
      emit_layer_buffers(extra, stored);
    } else if (extra.count == 1 && ends_with(extra.name, ".position_ids")) {
      add_buffer(extra.name, {1, extra.elements_each}, stored);  // arange(n).expand((1, -1))
    } else if (extra.count == 1 && ends_with(extra.name, "embeddings_project.weight")) {
      add_buffer(extra.name, {model_.hidden_size, model_.embedding_dim}, stored);
    } else if (extra.count == 1 && ends_with(extra.name, "embeddings_project.bias")) {
      add_buffer(extra.name, {extra.elements_each}, stored);
    } else if (extra.count == 1 && extra.name == "final_logits_bias") {
      add_buffer(extra.name, {1, extra.elements_each}, stored);  // register_buffer(zeros(1, V))
    } else if (extra.count == 1 && ends_with(extra.name, ".position_embeddings.weight") &&
               model_.embedding_dim > 0 && extra.elements_each % model_.embedding_dim == 0) {
      // DeBERTa's unused absolute table: [max_position_embeddings, embedding_size].
      add_buffer(extra.name, {extra.elements_each / model_.embedding_dim, model_.embedding_dim},
                 stored);
    } else if (extra.count == 1 && ends_with(extra.name, ".bias")) {
      add_buffer(extra.name, {extra.elements_each}, stored);  // ALBERT's predictions.decoder.bias
    } else if (extra.count == 1 && !extra.shape.empty() &&
               shape_elements(extra.shape) == extra.elements_each) {
      add_buffer(extra.name, extra.shape, stored);  // T5 v1.0's unused cross-attention table
    } else {
      gap(fmt::format("stored tensor '{}' is not named", extra.name));
    }
  }

  // A per-layer StoredExtra ("transformer.h.*.attn.causal_mask"): one buffer in every layer of
  // the main stack, or in each global-attention layer when it counts those (GPT-Neo's masks);
  // a scalar (masked_bias, Apertus's xIELU beta / eps) or a causal mask at the family's shape.
  void emit_layer_buffers(const StoredExtra& extra, std::string_view dtype) {
    const Stack* main = main_stack();
    std::vector<std::size_t> layers;
    if (main != nullptr && extra.count == static_cast<std::int64_t>(main->blocks.size())) {
      for (std::size_t i = 0; i < main->blocks.size(); ++i) layers.push_back(i);
    } else if (main != nullptr) {
      for (std::size_t i = 0; i < main->blocks.size(); ++i) {
        if (main->blocks[i].attention.sliding_window == 0) layers.push_back(i);
      }
    }
    // The family gives a mask's shape; a one-element tensor is a scalar.
    if (static_cast<std::int64_t>(layers.size()) != extra.count ||
        shape_elements(extra.shape) != extra.elements_each) {
      gap(fmt::format("stored tensor '{}' is not named", extra.name));
      return;
    }
    const std::size_t star = extra.name.find(".*.");
    const std::string head = extra.name.substr(0, star + 1);
    const std::string tail = extra.name.substr(star + 2);
    for (const std::size_t i : layers) {
      add_buffer(fmt::format("{}{}{}", head, i, tail), extra.shape, dtype);
    }
  }

  bool listed(std::string_view name) const {
    return std::any_of(inventory_.tensors.begin(), inventory_.tensors.end(),
                       [&](const ExpectedTensor& tensor) { return tensor.name == name; });
  }

  void add_buffer(std::string name, std::vector<std::int64_t> shape, std::string_view dtype) {
    add(std::move(name), std::move(shape), dtype, false);
    inventory_.tensors.back().buffer = true;
  }

  std::string renamed(std::string name) const {
    if (naming_.renames.empty()) return name;
    name += '.';  // so a rename can match a module name at the end ("...mlp.gate" + ".weight")
    for (const Rename& rename : naming_.renames) {
      if (!rename.scope.empty() && name.find(rename.scope) == std::string::npos) continue;
      const std::size_t at = name.find(rename.from);
      if (at != std::string::npos) name.replace(at, rename.from.size(), rename.to);
    }
    name.pop_back();
    return name;
  }

  // trace's layout name ("layers.3.self_attn.q_proj.weight") -> the checkpoint's.
  std::string full_name(const std::string& layout_name) const {
    std::string name;
    if (layout_name.starts_with("layers.") && !stack_.empty()) {
      name = fmt::format("{}{}.{}{}", naming_.root, stack_, naming_.layers, layout_name.substr(6));
    } else if (layout_name.starts_with("layers.") && !naming_.inner_layers.empty()) {
      const std::size_t digits = std::string_view("layers.").size();
      const std::size_t dot = layout_name.find('.', digits);
      const std::int64_t block = std::stoll(layout_name.substr(digits, dot - digits));
      name = fmt::format("{}{}.{}.{}.{}{}", naming_.root, naming_.layers, block / group_period_,
                         naming_.inner_layers, block % group_period_,
                         dot == std::string::npos ? "" : layout_name.substr(dot));
    } else if (layout_name.starts_with("layers.") && !naming_.sub_layers.empty()) {
      // Naming::sub_layers: block b is sub-layer b % n of the stored layer b / n.
      const std::size_t digits = std::string_view("layers.").size();
      const std::size_t dot = layout_name.find('.', digits);
      const std::int64_t block = std::stoll(layout_name.substr(digits, dot - digits));
      const auto n = static_cast<std::int64_t>(naming_.sub_layers.size());
      name = fmt::format("{}{}.{}{}.", naming_.root, naming_.layers, block / n,
                         dot == std::string::npos ? "" : layout_name.substr(dot));
      for (const Rename& rename : naming_.sub_layers[static_cast<std::size_t>(block % n)]) {
        const std::size_t at = name.find(rename.from);
        if (at != std::string::npos) name.replace(at, rename.from.size(), rename.to);
      }
      name.pop_back();
    } else if (layout_name.starts_with("layers.")) {
      name = fmt::format("{}{}{}", naming_.root, naming_.layers, layout_name.substr(6));
    } else if (layout_name.starts_with("mtp.layers.") && naming_.mtp_after_layers) {
      const std::size_t digits = std::string_view("mtp.layers.").size();
      const std::size_t dot = layout_name.find('.', digits);
      const std::int64_t index = std::stoll(layout_name.substr(digits, dot - digits));
      name = fmt::format("{}layers.{}{}", naming_.root, inventory_.main_layers + index,
                         dot == std::string::npos ? "" : layout_name.substr(dot));
    } else if (layout_name.starts_with("mtp.layers.") && !naming_.mtp_root.empty()) {
      name = fmt::format("{}{}", naming_.mtp_root, layout_name);  // Naming::mtp_root
    } else {
      name = layout_name;
    }
    return renamed(std::move(name));
  }

  void add(std::string name, std::vector<std::int64_t> shape, std::string_view dtype,
           bool parameter, std::int64_t logical = -1) {
    add_tensor(inventory_, std::move(name), std::move(shape), dtype, parameter, logical);
  }

  void norm(const std::string& at, const Norm& norm, bool layout) {
    const std::string name = layout ? full_name(at) : at;
    switch (norm.kind) {
      case NormKind::layer_norm_no_affine:
        return;
      case NormKind::layer_norm:
        add(name + (naming_.gamma_beta ? ".gamma" : ".weight"), {norm.dim}, base_.name, true);
        add(name + (naming_.gamma_beta ? ".beta" : ".bias"), {norm.dim}, base_.name, true);
        return;
      case NormKind::rms_norm:
      case NormKind::layer_norm_no_bias:
        add(name + ".weight", {norm.dim}, base_.name, true);
        return;
    }
  }

  // A QK-norm over all `heads` of a layer, spelled as the family stores it (Naming::
  // qk_norm_layout): Cohere's [heads, head_dim] weight, StableLM's norms.{h} modules.
  void qk_norm(const std::string& at, const Norm& n, std::int64_t heads, std::int64_t head_dim) {
    const bool full_width = heads > 1 && head_dim > 0 && n.dim == heads * head_dim;
    if (naming_.qk_norm_layout == QkNormLayout::flat || !full_width) {
      norm(at, n, true);
      return;
    }
    if (n.kind != NormKind::rms_norm && n.kind != NormKind::layer_norm_no_bias) {
      gap("a biased per-head QK-norm is not named");
      norm(at, n, true);
      return;
    }
    const std::string name = full_name(at);
    if (naming_.qk_norm_layout == QkNormLayout::head_matrix) {
      add(name + ".weight", {heads, head_dim}, base_.name, true);
      return;
    }
    for (std::int64_t h = 0; h < heads; ++h) {
      add(fmt::format("{}.norms.{}.weight", name, h), {head_dim}, base_.name, true);
    }
  }

  bool quantizes(const layout::NamedLinear& linear, const Quantization& q) const {
    // A checkpoint whose SSM projections are converted too, but those it names (Qwen's block
    // FP8: every DeltaNet projection but the per-head in_proj_a / in_proj_b).
    if (linear.kind == layout::LinearKind::ssm && q.ssm_quantized) {
      return q.converts_ssm_projection(linear.name);
    }
    if (linear.router || linear.kind == layout::LinearKind::ssm ||
        linear.kind == layout::LinearKind::latent || linear.kind == layout::LinearKind::head) {
      return false;
    }
    if (q.format == QuantFormat::mxfp4) return linear.expert;
    if (linear.kind == layout::LinearKind::attention) return q.attention_quantized;
    return true;
  }

  void emit_linear(const layout::NamedLinear& linear) {
    if (linear.expert && naming_.stacked_experts != StackedExperts::none &&
        !(linear.mtp && naming_.mtp_experts_per_expert)) {
      emit_stacked_experts(linear);
      return;
    }
    if (naming_.split_output_gate && linear.count == 1 &&
        linear.kind == layout::LinearKind::attention && ends_with(linear.name, ".q_proj") &&
        linear.rows % 2 == 0) {
      // Naming::split_output_gate: the q_proj layout counts twice as wide holds the query and
      // the output gate, stored apart at half the rows each (the gate without a bias).
      layout::NamedLinear half = linear;
      half.rows /= 2;
      emit_one(half, linear.name);
      half.bias = false;
      emit_one(half, linear.name.substr(0, linear.name.size() - 6) + "gate_proj");
      return;
    }
    if (linear.count == 1) {
      emit_one(linear, linear.name);
      return;
    }
    const std::size_t star = linear.name.find('*');
    const std::string head = linear.name.substr(0, star);
    const std::string tail = linear.name.substr(star + 1);
    for (std::int64_t e = 0; e < linear.count; ++e)
      emit_one(linear, fmt::format("{}{}{}", head, e, tail));
  }

  // gpt-oss: every expert of a projection in one tensor, gate and up fused ("gate_up_proj").
  // MXFP4 (openai's upload): _blocks U8 [E, out, in/32, 16] (two 4-bit values a byte), _scales U8
  // [E, out, in/32] (one E8M0 exponent per 32), _bias [E, out]. Unquantized: GptOssExperts's
  // parameters, [E, in, out]. Qwen3.5-MoE: gate_up_proj [E, 2I, H] (gate rows first) and
  // down_proj [E, H, I], nn.Linear's [out, in] per expert.
  void emit_stacked_experts(const layout::NamedLinear& linear) {
    const std::size_t star = linear.name.find(".*.");
    const std::string leaf = linear.name.substr(star + 3);
    if (naming_.stacked_experts == StackedExperts::rows_2d) {
      // DBRX: w1 / v1 / w2, each [E x I, H]; the down projection's [H, I] stored transposed.
      const std::string at = full_name(linear.name.substr(0, star) + "." + leaf);
      const bool down = leaf == "down_proj";
      const std::int64_t rows =
          checked_mul(linear.count, down ? linear.cols : linear.rows, "the tensor inventory");
      if (model_.quantization || linear.bias) {
        gap("DBRX's stacked experts are modelled unquantized and bias-free only");
      }
      add(at, {rows, down ? linear.rows : linear.cols}, base_.name, true);
      return;
    }
    if (leaf == "up_proj") return;  // stored inside gate_up_proj, emitted with gate_proj
    const std::string projection = leaf == "down_proj" ? ".down_proj" : ".gate_up_proj";
    // Renamed as a whole: Granite's experts.gate_up_proj is block_sparse_moe.input_linear.weight.
    const std::string at = full_name(linear.name.substr(0, star) + projection);
    const std::int64_t experts = linear.count;
    const std::int64_t rows = leaf == "gate_proj" ? 2 * linear.rows : linear.rows;
    const std::int64_t cols = linear.cols;
    const std::int64_t values = checked_mul(checked_mul(experts, rows, "the tensor inventory"),
                                            cols, "the tensor inventory");
    const std::vector<std::int64_t> unquantized =
        naming_.stacked_experts == StackedExperts::out_in
            ? std::vector<std::int64_t>{experts, rows, cols}
            : std::vector<std::int64_t>{experts, cols, rows};
    if (!model_.quantization) {
      add(at, unquantized, base_.name, true);
    } else if (model_.quantization->format == QuantFormat::mxfp4 && cols % 32 == 0 &&
               naming_.stacked_experts == StackedExperts::in_out) {
      add(at + "_blocks", {experts, rows, cols / 32, 16}, "U8", true, values);
      add(at + "_scales", {experts, rows, cols / 32}, "U8", false);
    } else {
      gap("stacked experts are modelled unquantized (and gpt-oss's MXFP4) only");
      add(at, unquantized, base_.name, true);
    }
    if (linear.bias) add(at + "_bias", {experts, rows}, base_.name, true);
  }

  void emit_one(const layout::NamedLinear& linear, const std::string& layout_name) {
    const std::string name = full_name(layout_name);
    const std::int64_t r = linear.rows;
    const std::int64_t c = linear.cols;
    const std::int64_t values = checked_mul(r, c, "the tensor inventory");
    if (linear.bias && naming_.split_qkv_bias && ends_with(layout_name, ".qkv_proj")) {
      // DeBERTa v1: no key bias; q_bias and v_bias hang off the attention module, a third each.
      const std::string at = name.substr(0, name.rfind('.'));
      add(at + ".q_bias", {r / 3}, base_.name, true);
      add(at + ".v_bias", {r / 3}, base_.name, true);
    } else if (linear.bias) {
      add(name + ".bias", {r}, base_.name, true);
    }
    if (!model_.quantization) {
      add(name + ".weight", naming_.conv1d ? std::vector<std::int64_t>{c, r} : std::vector{r, c},
          naming_.routers_f32 && linear.router ? std::string_view("F32") : base_.name, true);
      if (linear.router) finish_router_tensor(0);
      return;
    }
    if (naming_.conv1d) gap("quantized Conv1D (GPT-2) weights are not modelled tensor by tensor");
    const Quantization& q = *model_.quantization;
    if (q.format == QuantFormat::modelopt) {
      const ModeloptScheme& scheme = *q.modelopt;
      switch (layout::modelopt_format(scheme, layout_name, linear.mtp, linear.router)) {
        case ModuleFormat::unquantized: {
          const bool fp32 = fp32_routers_ && linear.router && ends_with(layout_name, ".gate");
          add(name + ".weight", {r, c}, fp32 ? "F32" : base_.name, true);
          return;
        }
        case ModuleFormat::nvfp4:
          add(name + ".weight", {r, ceil_div(c, 2)}, "U8", true, values);
          add(name + ".weight_scale", {r, ceil_div(c, scheme.group_size)}, "F8_E4M3", false);
          add(name + ".weight_scale_2", {}, "F32", false);
          add(name + ".input_scale", {}, "F32", false);
          return;
        case ModuleFormat::fp8:
          add(name + ".weight", {r, c}, "F8_E4M3", true);
          add(name + ".weight_scale", {}, "F32", false);
          add(name + ".input_scale", {}, "F32", false);
          return;
      }
    }
    if (ct_matcher_) {
      // compressed-tensors: the tensors the matching group's compressor writes (storage.cpp
      // counts the same list), or the plain weight when no group takes this Linear.
      const CtGroup* group = ct_matcher_->group_for(layout_name, linear.router);
      if (group == nullptr) {
        add(name + ".weight", {r, c}, base_.name, true);
        return;
      }
      for (const layout::StoredTensor& tensor :
           layout::ct_tensors(*group, r, c, base_.name, base_.bits / 8)) {
        add(fmt::format("{}.{}", name, tensor.suffix), tensor.shape, tensor.dtype,
            tensor.holds_values, values);
      }
      return;
    }
    if (!quantizes(linear, q)) {
      add(name + ".weight", {r, c}, base_.name, true);
      return;
    }
    const std::int64_t groups = q.group_size < 0 ? 1 : ceil_div(c, q.group_size);
    const std::int64_t per_int32 = 32 / q.bits;
    switch (q.format) {
      case QuantFormat::fp8_block:
        add(name + ".weight", {r, c}, "F8_E4M3", true);
        add(name + ".weight_scale_inv", {ceil_div(r, q.block_rows), ceil_div(c, q.block_cols)},
            q.block_scales_bf16 ? "BF16" : "F32", false);
        // (BF16 read from Qwen3.6-27B-FP8's shard sizes; its Qwen3.5 siblings' not established)
        if (q.block_scales_bf16) inventory_.tensors.back().also_stored_as = "F32";
        if (q.static_activation_scale) add(name + ".activation_scale", {}, "F32", false);
        return;
      case QuantFormat::gptq:  // AutoGPTQ: input dimension packed into int32 rows
        add(name + ".qweight", {ceil_div(c, per_int32), r}, "I32", true, values);
        add(name + ".qzeros", {groups, ceil_div(r, per_int32)}, "I32", false);
        add(name + ".scales", {groups, r}, "F16", false);
        add(name + ".g_idx", {c}, "I32", false);
        return;
      case QuantFormat::awq:  // AutoAWQ: output dimension packed
        add(name + ".qweight", {c, ceil_div(r, per_int32)}, "I32", true, values);
        add(name + ".qzeros", {groups, ceil_div(r, per_int32)}, "I32", false);
        add(name + ".scales", {groups, r}, "F16", false);
        return;
      case QuantFormat::fp8_tensor:  // FP8Linear, block size null (Naming::fp8_tensor_scale_inv)
        if (naming_.fp8_tensor_scale_inv) {
          add(name + ".weight", {r, c}, "F8_E4M3", true);
          add(name + ".weight_scale_inv", {}, "F32", false);
          inventory_.tensors.back().also_stored_as = "BF16";
          if (q.static_activation_scale) {
            add(name + ".activation_scale", {}, "F32", false);
            inventory_.tensors.back().also_stored_as = "BF16";
          }
          return;
        }
        [[fallthrough]];
      default:
        gap(
            fmt::format("the {} tensor layout is not modelled tensor by tensor; totals come from "
                        "the storage estimate",
                        q.method.empty() ? "quantized" : q.method));
        add(name + ".weight", {r, c}, base_.name, true);
        return;
    }
  }

  void emit_block(const Stack& stack, const std::string& prefix, const Block& block) {
    if (block.shared_weights) return;
    const layout::ModuleNames names = layout::module_names(prefix, block);
    for (const Norm& n : block.norms) norm(prefix + "." + n.name, n, true);
    const Attention& a = block.attention;
    if (a.q_norm) {
      qk_norm(names.attention + "." + a.q_norm->name, *a.q_norm, a.num_heads, a.head_dim);
    }
    if (a.k_norm) {
      qk_norm(names.attention + "." + a.k_norm->name, *a.k_norm, a.num_kv_heads, a.head_dim);
    }
    if (a.sinks) add(full_name(names.attention + ".sinks"), {a.num_heads}, base_.name, true);
    if (a.relative_attention_buckets > 0 && naming_.relative_bias.empty()) {
      gap("relative-position bias tables are not named");
    } else if (a.relative_attention_buckets > 0) {
      add(full_name(fmt::format("{}.{}.weight", names.attention, naming_.relative_bias)),
          {a.relative_attention_buckets, a.num_heads}, base_.name, true);
    }
    if (a.kind == AttentionKind::mla) {
      if (a.mla.q_lora_rank > 0) {
        add(full_name(names.attention + ".q_a_layernorm.weight"), {a.mla.q_lora_rank}, base_.name,
            true);
      }
      add(full_name(names.attention + ".kv_a_layernorm.weight"), {a.mla.kv_lora_rank}, base_.name,
          true);
      if (a.indexer) {
        add(full_name(names.attention + ".indexer.k_norm.weight"), {a.indexer->head_dim},
            base_.name, true);
        add(full_name(names.attention + ".indexer.k_norm.bias"), {a.indexer->head_dim}, base_.name,
            true);
        if (naming_.indexer_kpool && kpool_ > 0) {
          // Naming::indexer_kpool: bare nn.Parameters of Glm5NextTextIndexer.
          add(full_name(names.attention + ".indexer.index_kpool_compress_ape"),
              {kpool_, a.indexer->head_dim}, base_.name, true);
          add(full_name(names.attention + ".indexer.index_kpool_compress_gate"),
              {a.indexer->head_dim, a.input_dim}, base_.name, true);
        }
      }
    }
    const bool kv_scales = model_.quantization && model_.quantization->modelopt &&
                           model_.quantization->modelopt->kv_scales_stored && !stack.mtp &&
                           stack.causal &&
                           (a.kind == AttentionKind::standard || a.kind == AttentionKind::mla);
    if (kv_scales) {
      add(full_name(names.attention + ".k_proj.k_scale"), {}, "F32", false);
      add(full_name(names.attention + ".v_proj.v_scale"), {}, "F32", false);
    }
    if (block.cross_attention) {
      // BART's encoder_attn is its four biased Linears alone; norms or bias tables are not named.
      const Attention& cross = *block.cross_attention;
      if (!naming_.stack_layers || cross.q_norm || cross.k_norm ||
          cross.relative_attention_buckets > 0) {
        gap("cross-attention tensors beyond the Linears are not named");
      }
    }
    if (block.ssm) emit_ssm(names.ssm, *block.ssm);
    if (block.residual_streams > 1 && !stack.mtp && !stack.vision) {
      // Naming::mhc_sites: each site's bare fn, base and scale (base and scale F32).
      const std::int64_t n = block.residual_streams;
      const std::int64_t mix = (2 + n) * n;
      for (const std::string_view site : naming_.mhc_sites) {
        const std::string at = full_name(fmt::format("{}.hc_{}_", prefix, site));
        add(at + "fn", {mix, checked_mul(n, model_.hidden_size)}, base_.name, true);
        add(at + "base", {mix}, "F32", true);
        add(at + "scale", {3}, "F32", true);
      }
    }
    if (block.moe) {
      const Moe& moe = *block.moe;
      const std::int64_t hidden = moe.hidden_dim > 0 ? moe.hidden_dim : moe.expert.input_dim;
      if (moe.router_correction_bias) {
        // A buffer, stored F32 (Kimi-Linear's at the checkpoint's dtype); trace counts it as a
        // parameter.
        add(full_name(names.ffn + ".gate.e_score_correction_bias"),
            naming_.router_bias_row ? std::vector<std::int64_t>{1, moe.num_experts}
                                    : std::vector<std::int64_t>{moe.num_experts},
            model_.router_bias_at_checkpoint_dtype ? base_.name : std::string_view("F32"), true);
        finish_router_tensor(inventory_.tensors.back().shape.size() - 1);
      }
      if (moe.shared_expert_gate) {
        add(full_name(names.ffn + ".shared_expert_gate.weight"), {1, hidden}, base_.name, true);
      }
    }
  }

  // GLM-5.3-Flash's k-pool extras: "<layers>.self_attn.indexer.index_kpool_compress_ape, ...".
  static bool is_kpool_extra(const ExtraParameter& extra) {
    return extra.op == "Parameter" &&
           extra.name.find(".indexer.index_kpool_compress_ape") != std::string::npos;
  }

  // Naming::mhc_sites and Naming::indexer_kpool: the description counts the mHC sites and the
  // k-pool tensors as extras over many layers; the tensors emit_block names per layer must add up
  // to them, and kpool is what the k-pool extras hold beyond each indexer's gate [Id, H].
  void read_glm5_next_extras() {
    std::int64_t mhc_named = 0;
    std::int64_t indexers = 0;
    std::int64_t index_dim = 0;
    std::int64_t gate_elements = 0;
    for (const Stack& stack : model_.stacks) {
      if (stack.vision) continue;
      for (const Block& block : stack.blocks) {
        const std::int64_t n = block.residual_streams;
        if (!stack.mtp && n > 1) {
          const std::int64_t mix = (2 + n) * n;
          const std::int64_t site = checked_add(
              checked_mul(checked_mul(mix, n), model_.hidden_size, "the tensor inventory"),
              mix + 3);
          mhc_named = checked_add(
              mhc_named, checked_mul(site, static_cast<std::int64_t>(naming_.mhc_sites.size())));
        }
        if (block.attention.kind == AttentionKind::mla && block.attention.indexer) {
          ++indexers;
          index_dim = block.attention.indexer->head_dim;
          gate_elements = checked_mul(index_dim, block.attention.input_dim, "the tensor inventory");
        }
      }
    }
    std::int64_t mhc_counted = 0;
    std::int64_t kpool_counted = 0;
    for (const ExtraParameter& extra : model_.extra_parameters) {
      if (extra.op == "mHC") mhc_counted = checked_add(mhc_counted, extra.params);
      if (is_kpool_extra(extra)) kpool_counted = checked_add(kpool_counted, extra.params);
    }
    if (!naming_.mhc_sites.empty() && mhc_named != mhc_counted) {
      gap("the mHC tensors per layer do not add up to the description's mHC parameters");
    }
    if (!naming_.indexer_kpool || kpool_counted == 0) return;
    if (indexers == 0 || index_dim == 0 || kpool_counted % indexers != 0 ||
        kpool_counted / indexers <= gate_elements ||
        (kpool_counted / indexers - gate_elements) % index_dim != 0) {
      gap("the k-pool tensors do not divide among the indexers");
      return;
    }
    kpool_ = (kpool_counted / indexers - gate_elements) / index_dim;
  }

  // Naming::router_rows_extra: the rows the "router" Linear extras add to each MoE layer's
  // router, their params over the main stack's MoE blocks at H + 1 a row (weight row and
  // correction-bias entry).
  void read_router_rows() {
    const Stack* main = main_stack();
    std::int64_t layers = 0;
    std::int64_t hidden = 0;
    if (main != nullptr) {
      for (const Block& block : main->blocks) {
        if (!block.moe) continue;
        ++layers;
        hidden = block.moe->hidden_dim > 0 ? block.moe->hidden_dim : block.moe->expert.input_dim;
      }
    }
    for (const ExtraParameter& extra : model_.extra_parameters) {
      if (extra.component != "router" || extra.op != "Linear") continue;
      const std::int64_t per_row = checked_mul(layers, hidden + 1, "the tensor inventory");
      if (per_row == 0 || extra.params % per_row != 0) {
        gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
        continue;
      }
      router_extra_rows_ += extra.params / per_row;
    }
    if (model_.quantization && router_extra_rows_ > 0) {
      gap("a quantized checkpoint's routers with extra rows are not modelled tensor by tensor");
    }
  }

  // The router tensor just added (weight or correction bias): widened along `dim` by the
  // Naming::router_rows_extra rows; under Naming::routers_either_dtype, F32 or the checkpoint's
  // dtype, whichever it is not expected in, reconciles too.
  void finish_router_tensor(std::size_t dim) {
    ExpectedTensor& tensor = inventory_.tensors.back();
    if (router_extra_rows_ > 0 && dim < tensor.shape.size()) {
      tensor.shape[dim] += router_extra_rows_;
      tensor.logical_params = tensor.elements();
    }
    if (naming_.routers_either_dtype) {
      tensor.also_stored_as = tensor.dtype == base_.name ? std::string_view("F32") : base_.name;
    }
  }

  void emit_ssm(const std::string& at, const Ssm& ssm) {
    if (ssm.kind == SsmKind::gated_delta_net) {
      // Qwen3NextGatedDeltaNet: a bias-free depthwise conv over q, k and v; A_log and dt_bias per
      // value head; the gated RMSNorm over one value head.
      add(full_name(at + ".conv1d.weight"), {ssm.conv_channels(), 1, ssm.conv_kernel}, base_.name,
          true);
      add(full_name(at + ".A_log"), {ssm.num_heads}, base_.name, true);
      if (naming_.delta_vectors_also_f32) inventory_.tensors.back().also_stored_as = "F32";
      add(full_name(at + ".dt_bias"), {ssm.num_heads}, base_.name, true);
      if (ssm.gated_norm) {
        add(full_name(at + ".norm.weight"), {ssm.head_dim}, base_.name, true);
        if (naming_.delta_vectors_also_f32) inventory_.tensors.back().also_stored_as = "F32";
      }
      return;
    }
    if (ssm.kind == SsmKind::kimi_delta) {
      // Kimi Delta Attention (moonshotai's remote modeling_kimi.py, Kimi-Linear's headers):
      // bias-free depthwise convs over q, k and v apart, [channels, 1, kernel]; A_log
      // [1, 1, heads, 1] and dt_bias per channel, F32 where the checkpoint keeps them so;
      // o_norm over one value head.
      const std::string_view decay = ssm.decay_fp32 ? std::string_view("F32") : base_.name;
      const std::int64_t keys = checked_mul(ssm.groups, ssm.state);
      add(full_name(at + ".q_conv1d.weight"), {keys, 1, ssm.conv_kernel}, base_.name, true);
      add(full_name(at + ".k_conv1d.weight"), {keys, 1, ssm.conv_kernel}, base_.name, true);
      add(full_name(at + ".v_conv1d.weight"), {ssm.inner, 1, ssm.conv_kernel}, base_.name, true);
      add(full_name(at + ".A_log"),
          naming_.kda_a_log_vector ? std::vector<std::int64_t>{ssm.num_heads}
                                   : std::vector<std::int64_t>{1, 1, ssm.num_heads, 1},
          decay, true);
      add(full_name(at + ".dt_bias"), {ssm.inner}, decay, true);
      add(full_name(at + ".o_norm.weight"), {ssm.head_dim}, base_.name, true);
      return;
    }
    if (ssm.kind == SsmKind::short_conv) {
      // LFM2's Lfm2ShortConv: a depthwise conv over its hidden channels, `conv.conv`
      // [H, 1, L_cache], biased only with conv_bias.
      add(full_name(at + ".conv.weight"), {ssm.inner, 1, ssm.conv_kernel}, base_.name, true);
      if (ssm.conv_bias) add(full_name(at + ".conv.bias"), {ssm.inner}, base_.name, true);
      return;
    }
    if (ssm.kind == SsmKind::lightning) {
      // MiniMax's lightning attention: the RMSNorm over its heads' output before the gate
      // (modeling_minimax_m1.py); no convolution, no learned decay.
      add(full_name(at + ".norm.weight"), {ssm.inner}, base_.name, true);
      return;
    }
    if (ssm.kind == SsmKind::mamba1) {
      // MambaMixer / JambaMambaMixer: a depthwise conv over d_inner, A_log [d_inner, N], D
      // [d_inner]; Jamba's dt_layernorm [dt_rank], b_layernorm and c_layernorm [N].
      add(full_name(at + ".conv1d.weight"), {ssm.inner, 1, ssm.conv_kernel}, base_.name, true);
      if (ssm.conv_bias) add(full_name(at + ".conv1d.bias"), {ssm.inner}, base_.name, true);
      add(full_name(at + ".A_log"), {ssm.inner, ssm.state}, base_.name, true);
      add(full_name(at + ".D"), {ssm.inner}, base_.name, true);
      if (ssm.dt_bc_norms) {
        add(full_name(at + ".dt_layernorm.weight"), {ssm.dt_rank}, base_.name, true);
        add(full_name(at + ".b_layernorm.weight"), {ssm.state}, base_.name, true);
        add(full_name(at + ".c_layernorm.weight"), {ssm.state}, base_.name, true);
      }
      return;
    }
    if (ssm.kind != SsmKind::mamba2) {
      gap("non-Linear tensors of this SSM kind are not named");
      return;
    }
    const std::int64_t conv = ssm.conv_channels();
    add(full_name(at + ".conv1d.weight"), {conv, 1, ssm.conv_kernel}, base_.name, true);
    if (ssm.conv_bias) add(full_name(at + ".conv1d.bias"), {conv}, base_.name, true);
    for (const char* leaf : {".A_log", ".D", ".dt_bias"}) {
      add(full_name(at + leaf), {ssm.num_heads}, base_.name, true);
    }
    if (ssm.gated_norm) add(full_name(at + ".norm.weight"), {ssm.inner}, base_.name, true);
  }

  // Naming::embedding_rows_extra: the rows an "embedding" Embedding extra adds to the token table
  // (Mllama's 8 past vocab_size), which build() folds into it; 0 for any other extra.
  std::int64_t folded_rows(const ExtraParameter& extra) const {
    const std::int64_t e = model_.embedding_dim;
    if (!naming_.embedding_rows_extra || extra.component != "embedding" ||
        extra.op != "Embedding" || e <= 0 || extra.params % e != 0) {
      return 0;
    }
    return extra.params / e;
  }

  // Naming::layer_gates: "<layers>.*.<a> + <b>" (Mllama's), one bare [width] tensor per leaf in
  // every layer of the stack <layers> names (a tower's "<stack>.layers", the main stack's root +
  // layers), or in its cross-attention layers where the count says so.
  void emit_layer_gates(const ExtraParameter& extra) {
    const std::size_t star = extra.name.find(".*.");
    const std::string prefix = extra.name.substr(0, star);
    std::vector<std::string> leaves;
    for (std::size_t at = star + 3; at <= extra.name.size();) {
      const std::size_t plus = std::min(extra.name.find(" + ", at), extra.name.size());
      leaves.push_back(extra.name.substr(at, plus - at));
      at = plus + 3;
    }
    const Stack* stack =
        prefix == fmt::format("{}{}", naming_.root, naming_.layers) ? main_stack() : nullptr;
    for (const Stack& candidate : model_.stacks) {
      if (candidate.vision && candidate.name + ".layers" == prefix) stack = &candidate;
    }
    std::vector<std::size_t> every;
    std::vector<std::size_t> cross;
    for (std::size_t i = 0; stack != nullptr && i < stack->blocks.size(); ++i) {
      every.push_back(i);
      if (stack->blocks[i].attention.is_cross) cross.push_back(i);
    }
    const auto leaves_in = [&](const std::vector<std::size_t>& layers) {
      return static_cast<std::int64_t>(layers.size() * leaves.size());
    };
    const std::vector<std::size_t>* layers = nullptr;
    if (!every.empty() && extra.params % leaves_in(every) == 0) {
      layers = &every;
    } else if (!cross.empty() && extra.params % leaves_in(cross) == 0) {
      layers = &cross;
    }
    if (layers == nullptr) {
      gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
      return;
    }
    const std::int64_t width = extra.params / leaves_in(*layers);
    const std::string_view at = extra.component == "vision" && naming_.vision_root
                                    ? *naming_.vision_root
                                    : std::string_view();
    for (const std::size_t i : *layers) {
      for (const std::string& leaf : leaves) {
        add(renamed(fmt::format("{}{}.{}.{}", at, prefix, i, leaf)), {width}, base_.name, true);
      }
    }
  }

  // MTP extras carry their full checkpoint names already (families/moe_common.cpp, nemotron_h.cpp).
  void emit_extra(const ExtraParameter& extra) {
    if (folded_rows(extra) > 0) return;  // inside the token table (build)
    if ((!naming_.mhc_sites.empty() && extra.op == "mHC") ||
        (naming_.indexer_kpool && is_kpool_extra(extra))) {
      return;  // per layer in emit_block (read_glm5_next_extras)
    }
    if (naming_.router_rows_extra && extra.component == "router" && extra.op == "Linear") {
      return;  // inside each layer's router (read_router_rows)
    }
    if (naming_.layer_gates && extra.op == "Parameter" &&
        extra.name.find(".*.") != std::string::npos) {
      emit_layer_gates(extra);
      return;
    }
    const std::int64_t h = model_.hidden_size;
    const std::string& name = extra.name;
    if (extra.component == "vision" && naming_.vision_root) {
      emit_vision_extra(extra);
    } else if (naming_.encoder_heads && name.find(".*.") != std::string::npos) {
      emit_per_layer(extra);
    } else if (ends_with(name, ".enorm") || ends_with(name, ".hnorm") ||
               ends_with(name, ".shared_head.norm") || ends_with(name, ".final_layernorm") ||
               ends_with(name, ".token_layernorm") || ends_with(name, ".hidden_layernorm")) {
      add(name + ".weight", {extra.params}, base_.name, true);
    } else if (extra.op == "xIELU" && naming_.known) {
      add(name, {extra.params}, base_.name, true);  // Apertus's alpha_p / alpha_n, shape [1]
    } else if (ends_with(name, ".eh_proj") || name == "mtp.fc" ||
               (name.find(".mtp_layers.") != std::string::npos && ends_with(name, ".input_proj"))) {
      // DeepSeek's eh_proj, Qwen3-Next's fc, MiMo's input_proj: [h, 2h] over the two states
      add(name + ".weight", {h, 2 * h}, base_.name, true);
    } else if (name == "mtp.pre_fc_norm_embedding" || name == "mtp.pre_fc_norm_hidden") {
      add(name + ".weight", {extra.params}, base_.name, true);
    } else if (ends_with(name, ".shared_head.head") || ends_with(name, ".embed_tokens")) {
      // [V, h]; a table of another width (T5Gemma's encoder embed_tokens) at the width it holds.
      const std::int64_t v = model_.vocab_size;
      add(name + ".weight", {v, v > 0 && extra.params % v == 0 ? extra.params / v : h}, base_.name,
          true);
    } else if (naming_.known && emit_shaped(renamed(name), extra)) {
      // The family gave the shape (Whisper's conv1 [d, mel bins, 3], OPT-350m's project_in /
      // project_out): it is taken before any inference from the count.
    } else if (naming_.encoder_heads || name.starts_with("pooler.") || name.starts_with("cls.") ||
               name == "classifier") {
      emit_bert_head(extra);
    } else {
      gap(fmt::format("tensor '{}' ({}) is not named", name, extra.op));
    }
  }

  // BERT's heads (families/bert.cpp) and those of the encoders built like it: biased Linears
  // from the hidden width, the transform's LayerNorm and the MLM decoder's bias (its weight is
  // the tied word embedding, not stored). ELECTRA's embeddings_project reads the embedding
  // width; an untied MLM decoder stores a weight alone (its bias is the head's Bias entry).
  void emit_bert_head(const ExtraParameter& extra) {
    const std::int64_t h = model_.hidden_size;
    const std::int64_t e = model_.embedding_dim;
    std::string name = renamed(extra.name);
    const std::string_view untied = " (untied)";  // DistilBERT's label of vocab_projector.weight
    if (ends_with(name, untied)) name.erase(name.size() - untied.size());
    for (const std::string_view prefix : naming_.under_root) {
      if (name.starts_with(prefix)) {
        name = root(name);
        break;
      }
    }
    // Linears from the embedding width: ELECTRA's embeddings_project, ALBERT's
    // embedding_hidden_mapping_in, DeBERTa's embed_proj (nn.Linear(E, hidden, bias=False)).
    const bool embed_proj = ends_with(name, "embed_proj");
    const bool from_embedding = embed_proj || ends_with(name, "embeddings_project") ||
                                ends_with(name, "embedding_hidden_mapping_in");
    const std::int64_t in = from_embedding ? e : h;
    const bool decoder = ends_with(name, "decoder") || ends_with(name, "lm_head") ||
                         ends_with(name, "projector.weight") || ends_with(name, "decoder.weight");
    // DeBERTa's position and token-type tables, when extras, are embedding_size wide like the
    // word table; other tables (BART's encoder positions, DeBERTa's rel_embeddings) hidden_size.
    const std::int64_t width = name.find(".embeddings.") != std::string::npos ? e : h;
    const Stack* main = main_stack();
    const std::int64_t heads =
        main != nullptr && !main->blocks.empty() ? main->blocks.front().attention.num_heads : 0;
    if (extra.op == "Linear" && decoder &&
        extra.params == checked_mul(model_.vocab_size, e, "the tensor inventory")) {
      add(ends_with(name, ".weight") ? name : name + ".weight", {model_.vocab_size, e}, base_.name,
          true);
    } else if (extra.op == "Linear" && embed_proj && extra.params == checked_mul(h, e)) {
      add(name + ".weight", {h, e}, base_.name, true);
    } else if (extra.op == "Linear" && extra.params % (in + 1) == 0) {
      const std::int64_t out = extra.params / (in + 1);
      add(name + ".weight", {out, in}, base_.name, true);
      add(name + ".bias", {out}, base_.name, true);
    } else if (extra.op == "Linear" && naming_.bias_optional && extra.params % in == 0) {
      add(name + ".weight", {extra.params / in, in}, base_.name, true);  // classifier_bias false
    } else if (extra.op == "Embedding" && ends_with(name, "relative_attention_bias") && heads > 0 &&
               extra.params % heads == 0) {
      // MPNet's Embedding(relative_attention_num_buckets, heads): one bias per bucket and head.
      add(name + ".weight", {extra.params / heads, heads}, base_.name, true);
    } else if (extra.op == "Embedding" && extra.params % width == 0) {
      add(name + ".weight", {extra.params / width, width}, base_.name, true);
    } else if (extra.op == "Conv1d" && extra.params > h &&
               (extra.params - h) % checked_mul(h, h) == 0) {
      // DeBERTa-v2's encoder.conv.conv, Conv1d(h, h, kernel) with a bias; conv_groups is 1 in
      // every release (a grouped conv has the same count at another kernel, not told apart).
      add(name + ".weight", {h, h, (extra.params - h) / (h * h)}, base_.name, true);
      add(name + ".bias", {h}, base_.name, true);
    } else if (extra.op == "LayerNorm" && naming_.bias_optional && extra.params == h) {
      add(name + ".weight", {h}, base_.name, true);  // norm_bias false
    } else if (extra.op == "LayerNorm") {
      norm(name, Norm{"", NormKind::layer_norm, extra.params / 2}, false);
    } else if (extra.op == "Bias") {
      add(name, {extra.params}, base_.name, true);
    } else {
      gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
    }
  }

  // DeBERTa's per-layer position projections (and v1's talking-head mixers), one extra for all
  // layers: "encoder.layer.*.attention.self.pos_key_proj", "...head_logits_proj+head_weights_proj".
  // Each layer's share is [inner, hidden] with or without a bias, or [heads, heads] per mixer.
  void emit_per_layer(const ExtraParameter& extra) {
    const Stack* main = main_stack();
    const std::int64_t layers = main ? static_cast<std::int64_t>(main->blocks.size()) : 0;
    if (layers == 0 || extra.params % layers != 0) {
      gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
      return;
    }
    const Attention& a = main->blocks.front().attention;
    const std::int64_t each = extra.params / layers;
    const std::int64_t inner = checked_mul(a.num_heads, a.head_dim, "the tensor inventory");
    const std::int64_t in = a.input_dim;
    const std::size_t star = extra.name.find('*');
    const std::size_t leaf = extra.name.rfind('.') + 1;
    std::vector<std::string> modules;
    for (std::size_t at = leaf; at <= extra.name.size();) {
      const std::size_t plus = std::min(extra.name.find('+', at), extra.name.size());
      modules.push_back(extra.name.substr(at, plus - at));
      at = plus + 1;
    }
    const std::int64_t mixers = static_cast<std::int64_t>(modules.size());
    const bool talking = mixers > 1 && each == mixers * a.num_heads * a.num_heads;
    const bool biased = mixers == 1 && each == checked_mul(inner, in + 1, "the tensor inventory");
    if (!talking && !biased && !(mixers == 1 && each == inner * in)) {
      gap(fmt::format("tensor '{}' ({}) is not named", extra.name, extra.op));
      return;
    }
    for (std::int64_t i = 0; i < layers; ++i) {
      const std::string at = fmt::format("{}{}{}{}", naming_.root, extra.name.substr(0, star), i,
                                         extra.name.substr(star + 1, leaf - star - 1));
      for (const std::string& module : modules) {
        if (talking) {
          add(at + module + ".weight", {a.num_heads, a.num_heads}, base_.name, true);
          continue;
        }
        add(at + module + ".weight", {inner, in}, base_.name, true);
        if (biased) add(at + module + ".bias", {inner}, base_.name, true);
      }
    }
  }

  const ModelDescription& model_;
  Inventory& inventory_;
  Naming naming_;
  BaseDtype base_;
  bool fp32_routers_ = false;
  std::int64_t router_extra_rows_ = 0;  ///< Naming::router_rows_extra: rows a router gains
  std::int64_t kpool_ = 0;              ///< Naming::indexer_kpool: each indexer's kpool
  std::string stack_;  ///< stack_layers namings: the stack being emitted ("encoder", "decoder")
  std::int64_t group_period_ = 1;  ///< inner_layers namings: blocks from one group to the next
  std::optional<layout::CtMatcher> ct_matcher_;  ///< compressed-tensors checkpoints only
};

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

}  // namespace

std::int64_t ExpectedTensor::elements() const {
  std::int64_t product = 1;
  for (const std::int64_t dim : shape) product = checked_mul(product, dim, "the tensor inventory");
  return product;
}

std::int64_t ExpectedTensor::bytes() const {
  const SafetensorsDtype* row = find_safetensors_dtype(dtype);
  const std::int64_t bits =
      checked_mul(elements(), row != nullptr ? row->bits : 16, "the tensor inventory");
  return ceil_div(bits, 8);
}

Inventory build_inventory(const ModelDescription& model) {
  Inventory inventory;
  // The layer count first: DeepSeek MTP names follow the main stack.
  for (const Stack& stack : model.stacks) {
    if (!stack.mtp && !stack.vision)
      inventory.main_layers = static_cast<std::int64_t>(stack.blocks.size());
  }
  Builder builder(model, inventory);
  builder.build();
  return inventory;
}

std::string component_of(std::string_view name, const Inventory& inventory) {
  // MTP stacks: Qwen3-Next's and Nemotron-H's mtp.*, MiMo's model.mtp_layers.*
  if (name.starts_with("mtp.") || contains(name, ".mtp_layers.")) return "mtp";
  if (name.starts_with("model.mtp.")) return "mtp";  // LongCat-Flash's model.mtp.*
  if (inventory.main_layers > 0 && name.starts_with(inventory.layer_prefix)) {
    const std::string_view rest = name.substr(inventory.layer_prefix.size());
    std::int64_t index = 0;
    std::size_t digits = 0;
    while (digits < rest.size() && digits < 12 && rest[digits] >= '0' && rest[digits] <= '9') {
      index = index * 10 + (rest[digits] - '0');
      ++digits;
    }
    if (digits > 0 && index >= inventory.main_layers) return "mtp";
  }
  // towers: a vision tower, and an audio one, which the parameter count files with them
  if (contains(name, "visual") || contains(name, "vision") || contains(name, "audio_tower")) {
    return "vision";
  }
  if (name.starts_with("lm_head")) return "head";
  if (contains(name, "embed")) return "embedding";
  // Routed experts: one tensor per expert (".experts.7."), or stacked per projection
  // (".experts.gate_up_proj", gpt-oss and Qwen3.5-MoE).
  const std::size_t experts = name.find(".experts.");
  if (experts != std::string_view::npos) {
    const std::string_view rest = name.substr(experts + 9);
    if ((!rest.empty() && rest.front() >= '0' && rest.front() <= '9') ||
        rest.starts_with("gate_up_proj") || rest.starts_with("down_proj")) {
      return "experts";
    }
  }
  if (contains(name, "norm")) return "norm";
  if (contains(name, "shared_expert")) return "mlp";
  if (contains(name, ".gate.")) return "router";
  if (contains(name, "attn") || contains(name, "attention") || contains(name, "q_proj") ||
      contains(name, "k_proj") || contains(name, "v_proj") || contains(name, "o_proj")) {
    return "attention";
  }
  if (contains(name, "mixer.") || contains(name, "mamba")) {
    if (contains(name, "up_proj") || contains(name, "down_proj") || contains(name, "latent"))
      return "mlp";
    return "ssm";
  }
  if (contains(name, "mlp") || contains(name, "block_sparse_moe") ||
      contains(name, "feed_forward") || contains(name, "proj")) {
    return "mlp";
  }
  return "other";
}

}  // namespace trace::checkpoint
