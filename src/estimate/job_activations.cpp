// What a training step saves for backward and computes over the vocabulary, per GPU, and the
// peaks above its forward pass (docs/memory.md, "Jobs": activations, logits and loss, the
// optimizer step, quantizing the base in one pass).
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <vector>

#include "job_pass.hpp"
#include "trace/checked_math.hpp"

namespace trace {

namespace {

// "model.layers.12.self_attn.q_proj" -> "model.layers.12"; names outside a layer stand alone.
std::string_view layer_of(std::string_view name) {
  const std::size_t at = name.find("layers.");
  if (at == std::string_view::npos) return name;
  std::size_t end = at + 7;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  return name.substr(0, end);
}

DropoutInputs lora_dropout_inputs(const ModelDescription& model,
                                  const std::vector<layout::NamedLinear>& linears,
                                  LoraTargets targets) {
  std::int64_t top_k = 0;
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (block.moe) top_k = std::max(top_k, block.moe->top_k);
    }
  }
  std::map<std::string_view, std::int64_t> per_layer;
  for (const layout::NamedLinear& linear : linears) {
    if (linear.mtp || linear.router || !lora_adapts(targets, linear.name)) continue;
    const std::int64_t copies = linear.expert ? top_k : linear.count;
    std::int64_t& layer = per_layer[layer_of(linear.name)];
    layer = checked_add(layer, checked_mul(linear.cols, copies, "the LoRA dropout"));
  }
  DropoutInputs inputs;
  for (const auto& [layer, values] : per_layer) {
    inputs.all_layers = checked_add(inputs.all_layers, values);
    inputs.widest_layer = std::max(inputs.widest_layer, values);
  }
  return inputs;
}

// LoRA over a frozen 16-bit base (docs/memory.md, "Frozen Linears keep no input"): the change
// to a layer's saved values when its Linear inputs are kept only where something reads them for
// backward, against the one copy of each that values_per_token counts. A frozen Linear's matmul
// keeps no input (autograd saves it for the weight's gradient alone); an adapter's lora_A keeps
// what it reads. Where each adapted Linear reads a copy of its own (LoRA dropout, or fp32
// adapters under autocast) the adapter-copies term counts them, and none is kept here but the
// attention kernel's output (SDPA and flash-attention keep it; o_proj reads it in place).
std::int64_t frozen_base_input_change(const LinearInputs& in, LoraTargets targets,
                                      bool own_adapter_copies, bool kernel_keeps_output,
                                      bool compiled) {
  // torch.compile already recomputes the down inputs (pointwise_values): not counted twice.
  const std::int64_t downs = compiled ? 0 : in.mlp_down + in.experts_down;
  const std::int64_t counted = in.attention + in.attention_output + in.mlp + downs + in.moe;
  std::int64_t kept = kernel_keeps_output ? in.attention_output : 0;
  if (!own_adapter_copies) {
    kept += in.attention;  // every target set adapts q
    if (!kernel_keeps_output && targets != LoraTargets::attention_qv) kept += in.attention_output;
    if (targets == LoraTargets::all_linear) {
      // the experts' adapters keep each routed copy's gathered input; the router is frozen,
      // so the MoE input is kept only by adapted shared experts
      kept += in.mlp + downs + in.experts_gathered + (in.moe_shared ? in.moe : 0);
    }
  }
  return kept - counted;
}

}  // namespace

void JobPass::activations_and_logits() {
  // ---- activations ----
  // Sequences kept for backward: preference pairs hold chosen and rejected together.
  const std::int64_t sequences = checked_mul(job.batch, sequences_per_item(job), "the activations");
  const std::int64_t tokens = checked_mul(job.seq_len, sequences, "the activations");
  // Bytes per saved value beyond the activation dtype's. PEFT's kbit preparation upcasts the
  // embeddings, so the residual stream (and what is computed from it outside autocast's
  // matmuls) is fp32. An eager RMSNorm keeps an fp32 copy of its input instead of the input
  // (nothing more where the stream is fp32 already), and where its weight trains the
  // normalised input as well.
  const std::int64_t to_fp32 = std::max<std::int64_t>(0, 4 - bytes.activation);
  const std::int64_t residual_extra = job.kbit_upcast ? to_fp32 : 0;
  // Autocast over fp32 weights: the fp32 embedding output starts an fp32 residual stream (each
  // branch's bf16 output is added to it), read by the norms; what that saves beyond a bf16
  // model is LayerActivation::autocast_extra_values.
  const bool autocast_stream = autocast_fp32_stream(job);
  // Autocast runs the forward (mixed precision on one GPU or DDP), whatever the weights' dtype.
  const bool autocast_on = job.autocast_fp32_weights && job.precision == Precision::mixed;
  const std::int64_t autocast_extra = autocast_stream ? to_fp32 : 0;
  const bool eager_norm = job.eager_rms_norm && !job.compiled;
  const std::int64_t norm_upcast_extra = (eager_norm && residual_extra == 0 ? to_fp32 : 0) +
                                         (eager_norm && !lora ? bytes.activation : 0);
  std::int64_t saved_bytes = 0;         // per token, all layers
  std::int64_t widest_layer_bytes = 0;  // per token, the layer recomputed under checkpointing
  std::int64_t inputs = 0;
  std::int64_t chunk_states = 0;
  std::int64_t scores = 0;               // eager attention, all layers
  std::int64_t widest_score_values = 0;  // the widest attention layer's scores
  std::int64_t position_indices = 0;     // DeBERTa's saved gather indices, all layers (bytes)
  std::int64_t widest_position_indices = 0;
  std::int64_t masks = 0;                // hidden-dropout masks per token, all layers (bytes)
  std::int64_t widest_masks = 0;
  const std::int64_t act = bytes.activation;
  // Eager attention saves the fp32 softmax output; the P.V matmul saves its input: the
  // dropped-out probabilities (+ their mask) under attention dropout, else the softmax cast to
  // the activation dtype (the softmax output itself in fp32).
  std::int64_t score_bytes = a.softmax_bytes;
  if (model.attention_dropout > 0) {
    score_bytes += a.dropout_mask_bytes + act;
  } else if (act != a.softmax_bytes) {
    score_bytes += act;
  }
  auto layers = cache.layers.find(job.seq_len);
  if (layers == cache.layers.end()) {
    layers = cache.layers.emplace(job.seq_len, layer_activations(model, job.seq_len)).first;
  }
  // transformers' Python activations (gelu_new ...), fused under torch.compile.
  const bool composed = job.composed_activations && !job.compiled;
  // flash-attn and SDPA's enable_gqa take grouped K and V; the rest repeat them to every head.
  const bool grouped_kv = job.attention == AttentionImpl::flash ||
                          (job.attention == AttentionImpl::sdpa && job.sdpa_grouped_kv);
  // A frozen base of plain 16-bit Linears keeps no Linear input (frozen_base_input_change). Not
  // modelled for bitsandbytes, quantized-checkpoint or fp32 bases (their Linears keep a copy of
  // their own, or autocast casts the fp32 stream per Linear), nor under LoRA dropout, which no
  // run of trace's own measures yet and where LitGPT's and torchtune's public rows would read
  // up to 9% low without the inputs: the count keeps them there (docs/memory.md).
  const bool plain_frozen_base =
      job.mode == JobMode::lora && !job.base_nf4 && !job.checkpoint_base && !job.kbit_upcast &&
      job.lora_dropout == 0 &&
      (!job.base_dtype || *job.base_dtype == Dtype::bf16 || *job.base_dtype == Dtype::fp16);
  // PEFT casts an adapter's input to the adapter's dtype; fp32 adapters under autocast then cast
  // it back to bf16 for lora_A, one copy per adapted Linear (counted as the dropout's copies).
  const bool adapter_casts = plain_frozen_base && autocast_on;
  const bool kernel_keeps_output =
      job.attention != AttentionImpl::eager && !model.eager_attention_only;
  for (const LayerActivation& layer : layers->second) {
    // MTP layers run only where they are trained (their weights count only then too).
    if (layer.mtp && !job.train_mtp) continue;
    // QLoRA: bitsandbytes' MatMul4Bit keeps its input A for backward (ctx.tensors = (A, B)),
    // a copy besides the LoRA branch's dropped-out input that the other terms count.
    const std::int64_t layer_values =
        layer.values_per_token + (composed ? layer.composed_activation_values : 0) +
        (grouped_kv ? 0 : layer.repeated_kv_values) +
        (holds_nf4_base(job) && job.bnb_matmul_keeps_inputs ? layer.linear_input_values : 0) -
        (job.compiled ? layer.pointwise_values : 0) +
        (lora ? 0 : layer.linear_inputs.experts_gathered) +
        (plain_frozen_base
             ? frozen_base_input_change(layer.linear_inputs, job.lora_targets, adapter_casts,
                                        kernel_keeps_output, job.compiled)
             : 0);
    // An eager RMSNorm keeps an fp32 copy of its input anyway; its fp32 normalised input is
    // the autocast extra, kept only where its weight trains. A fused one keeps its input, fp32
    // now: the extra whether or not its weight trains.
    const std::int64_t autocast_values =
        layer.autocast_extra_values - (lora && eager_norm ? layer.autocast_rms_weight_values : 0);
    const std::int64_t composed_fp32_values =
        composed && autocast_on ? layer.composed_autocast_fp32_values : 0;
    const std::int64_t layer_bytes = checked_add(
        checked_add(
            checked_add(checked_mul(layer_values, act),
                        checked_mul(layer.residual_dtype_values, residual_extra)),
            checked_mul(layer.rms_norm_input_values + layer.qk_rms_norm_values, norm_upcast_extra)),
        checked_add(checked_mul(autocast_values, autocast_extra),
                    checked_mul(composed_fp32_values, to_fp32)));
    saved_bytes = checked_add(saved_bytes, layer_bytes);
    widest_layer_bytes = std::max(widest_layer_bytes, layer_bytes);
    inputs = checked_add(inputs, layer.input_width);
    chunk_states = checked_add(chunk_states, layer.chunk_state_bytes);
    if (model.hidden_dropout > 0) {
      // one mask on each residual branch (the mixer's and the FFN's output)
      const std::int64_t layer_masks = 2 * layer.input_width * a.dropout_mask_bytes;
      masks = checked_add(masks, layer_masks);
      widest_masks = std::max(widest_masks, layer_masks);
    }
    if ((job.attention == AttentionImpl::eager || model.eager_attention_only) &&
        layer.attention_heads > 0) {
      const std::int64_t score_values =
          checked_product({layer.attention_heads, job.seq_len, layer.attended_tokens, sequences},
                          "the attention scores");
      scores = checked_add(scores, checked_mul(score_values, score_bytes, "the attention scores"));
      widest_score_values = std::max(widest_score_values, score_values);
      // DeBERTa's gathered relative positions: int64, once per layer whatever the batch.
      const std::int64_t index_bytes = checked_product(
          {model.saved_position_index_tensors, job.seq_len, layer.attended_tokens, 8},
          "the attention scores");
      position_indices = checked_add(position_indices, index_bytes, "the attention scores");
      widest_position_indices = std::max(widest_position_indices, index_bytes);
    }
  }
  scores = checked_add(scores, position_indices, "the attention scores");
  const std::int64_t widest_scores =
      checked_add(checked_mul(widest_score_values, score_bytes, "the attention scores"),
                  widest_position_indices, "the attention scores");
  // The final norm's input (residual dtype) and the head's input, per token; each trained MTP
  // depth has its own, and its input projection's (the two normed halves, 2h).
  const std::int64_t heads = 1 + (job.train_mtp ? model.mtp_depths : 0);
  saved_bytes = checked_add(
      saved_bytes, checked_mul(checked_mul(model.hidden_size, 2 * act + residual_extra), heads));
  if (job.train_mtp) {
    saved_bytes =
        checked_add(saved_bytes, checked_product({model.mtp_depths, 2 * model.hidden_size, act}));
  }
  inputs = checked_add(inputs, 2 * model.hidden_size);
  // The final RMSNorm's fp32 copy (and normalised input) is saved outside any checkpoint.
  std::int64_t final_rms_norm_values = 0;
  for (const Stack& stack : model.stacks) {
    if (!stack.vision && !stack.mtp && stack.final_norm &&
        stack.final_norm->kind == NormKind::rms_norm) {
      final_rms_norm_values += stack.final_norm->dim;
    }
  }
  // Under autocast the final RMSNorm reads the fp32 stream: as a layer's norms, 2 bytes more on
  // its normalised input (eager, its weight training) or on its input (fused).
  const std::int64_t final_norm_extra =
      checked_add(checked_mul(final_rms_norm_values, norm_upcast_extra),
                  checked_mul(lora && eager_norm ? 0 : final_rms_norm_values, autocast_extra));
  saved_bytes = checked_add(saved_bytes, final_norm_extra);
  // Checkpointed layer inputs are the residual stream; the head's input is not.
  const std::int64_t input_bytes = checked_add(
      checked_add(checked_mul(inputs, act),
                  checked_mul(inputs - model.hidden_size, residual_extra + autocast_extra)),
      final_norm_extra);
  // The embedding output's dropout mask, when the residual stream has dropout.
  const std::int64_t embedding_mask =
      model.hidden_dropout > 0 ? model.hidden_size * a.dropout_mask_bytes : 0;
  // Under checkpointing: the layer backward recomputes in full (its saved values, masks and
  // scores, LoRA dropout's copies), alive only in backward.
  const bool checkpointed =
      job.checkpointing == Checkpointing::full || job.checkpointing == Checkpointing::offload;
  std::int64_t recomputed = 0;
  switch (job.checkpointing) {
    case Checkpointing::none:
    case Checkpointing::selective:
      b.activations =
          checked_add(checked_add(checked_mul(saved_bytes, tokens, "the activations"),
                                  checked_mul(masks + embedding_mask, tokens)),
                      checked_add(checked_mul(chunk_states, sequences),
                                  job.checkpointing == Checkpointing::none ? scores : 0));
      break;
    case Checkpointing::full:
    case Checkpointing::offload:
      // every layer's input (offloaded: the one being moved), plus one layer recomputed in full
      // during backward (`recomputed`, after the loss's backward: see below)
      b.activations =
          checked_add(checked_mul(job.checkpointing == Checkpointing::full
                                      ? input_bytes
                                      : checked_mul(model.hidden_size, act + residual_extra),
                                  tokens, "the activations"),
                      checked_mul(embedding_mask, tokens));
      recomputed = checked_add(
          checked_mul(checked_add(widest_layer_bytes, widest_masks), tokens, "the activations"),
          widest_scores);
      break;
  }
  if (lora && (job.lora_dropout > 0 || adapter_casts)) {
    // LoRA dropout: each adapted Linear's dropped-out input copy + its 1-byte mask; fp32
    // adapters under autocast: each one's bf16 cast of its input. One layer's under
    // checkpointing (the recomputed one).
    auto found = cache.dropout_inputs.find(job.lora_targets);
    if (found == cache.dropout_inputs.end()) {
      found =
          cache.dropout_inputs
              .emplace(job.lora_targets, lora_dropout_inputs(model, linears(), job.lora_targets))
              .first;
    }
    const std::int64_t values =
        checkpointed ? found->second.widest_layer : found->second.all_layers;
    const std::int64_t mask = job.lora_dropout > 0 ? a.dropout_mask_bytes : 0;
    const std::int64_t dropout = checked_product({values, tokens, act + mask}, "the LoRA dropout");
    if (checkpointed) {
      recomputed = checked_add(recomputed, dropout);
    } else {
      b.activations = checked_add(b.activations, dropout);
    }
  }
  b.activations = ceil_div(b.activations, job.tp);
  recomputed = ceil_div(recomputed, job.tp);
  // Eager attention's backward through the widest layer's softmax holds the fp32 output it
  // saved, the incoming gradient and the gradient it makes: 3 x softmax_bytes per score, above
  // what that layer kept (selective checkpointing kept none and recomputes them then).
  const std::int64_t kept_score_bytes =
      job.checkpointing == Checkpointing::selective ? 0 : score_bytes;
  const std::int64_t eager_backward =
      ceil_div(checked_mul(widest_score_values,
                           std::max<std::int64_t>(0, 3 * a.softmax_bytes - kept_score_bytes),
                           "the attention scores"),
               job.tp);
  // Logits and the loss over the vocabulary, for every token of the micro-batch.
  // A compiled chunked loss (torchtune: torch.compile of CEWithChunkedOutputLoss) upcasts and
  // log-softmaxes each chunk inside one fused kernel that keeps only the bf16 chunks and a
  // per-token logsumexp, as Unsloth's kernel does.
  const std::int64_t logits_bytes =
      job.loss == LossImpl::chunked ? (job.compiled ? a.logits_bytes_fused : a.logits_bytes_chunked)
      : job.loss == LossImpl::fused ? a.logits_bytes_fused
      : job.loss == LossImpl::cut   ? a.logits_bytes_cut
      : job.loss == LossImpl::vocab_parallel ? a.logits_bytes_vocab_parallel
                                             : a.logits_bytes_per_value;
  // A trained MTP depth computes its own logits and loss through the shared head; they are
  // alive together until backward (Megatron's MTP loss).
  b.logits = ceil_div(
      checked_product({model.training_logits_width(), tokens, logits_bytes, heads}, "the logits"), job.tp);
  if (job.rl) {
    // GRPO takes per-token log-probabilities over the completion only (logits_to_keep), in the
    // logits' own dtype, row by row (TRL's selective_log_softmax); the loss's backward holds
    // rl_logits_copies of them. Liger's fused GRPO loss (--loss cut) never materialises them.
    const std::int64_t completion_tokens =
        checked_mul(job.rl->completion_len, sequences, "the logits");
    b.logits = job.loss == LossImpl::cut
                   ? 0
                   : ceil_div(checked_product({model.training_logits_width(), completion_tokens,
                                               a.rl_logits_copies, act},
                                              "the logits"),
                              job.tp);
  }
  if (reference_in_step(job)) {
    // The reference's forward (DPO, KTO) runs after the policy's, under no_grad, while
    // everything the policy saved for backward is alive: its logits over the step's sequences
    // (a DPO pair's both; KTO's completions, then its KL batch, one at a time), in the
    // activation dtype, join the policy's until its log-probabilities are taken.
    b.logits = checked_add(
        b.logits, ceil_div(checked_product({model.training_logits_width(), tokens, act}, "the logits"), job.tp));
  }
  // A layer's backward holds hidden-sized gradients of the residual stream (its output's, the
  // one accumulated between its branches, the branch's being added), in the residual dtype.
  const std::int64_t residual_gradients =
      ceil_div(checked_product(
                   {a.backward_gradient_vectors, model.hidden_size, tokens, act + residual_extra},
                   "the gradients in backward"),
               job.tp);
  // A full fine-tune under PyTorch's FSDP: a unit's backward makes its weights' gradients whole,
  // in the compute dtype, before the reduce-scatter keeps this rank's shard; the largest
  // block's are alive beside the layer's own backward (docs/memory.md, "Gradients in backward").
  // DeepSpeed's ZeRO-3 moves each gradient into its reduce bucket as autograd makes it.
  std::int64_t unit_gradients = 0;
  if (job.mode == JobMode::full && job.sharding == Sharding::zero3 && job.fsdp &&
      cache.sharded_units) {
    const std::int64_t compute_bytes = bytes.half_copy > 0 ? bytes.half_copy : bytes.gradient;
    unit_gradients = ceil_div(
        checked_mul(cache.sharded_units->largest_block, compute_bytes, "the gradients in backward"),
        job.tp);
  }
  const std::int64_t backward_gradients = checked_add(residual_gradients, unit_gradients);
  // The loss's backward ran before the layers' and freed the logits: the peak is the larger of
  // the two, counted with the activations. The layer a checkpointed backward recomputes comes
  // after it too; allocated memory never holds it beside the logits, but the caching allocator
  // keeps the logits' blocks reserved while it is allocated, so it counts in full unless the
  // job asks for the allocated peak (docs/memory.md, "Allocated and reserved").
  b.activations =
      job.allocated_peak
          ? checked_add(b.activations, std::max<std::int64_t>(0, recomputed + eager_backward +
                                                                     backward_gradients - b.logits))
          : checked_add(checked_add(b.activations, recomputed),
                        std::max<std::int64_t>(0, eager_backward + backward_gradients - b.logits));
  // The end of backward and the optimizer step (docs/memory.md, "Phases of a step"): every
  // gradient exists, the activations and logits are gone. PyTorch's foreach AdamW (its default
  // on CUDA before fused kernels took over) builds exp_avg_sq_sqrt, one state-sized temporary;
  // a half-precision embedding's backward (embedding_dense_backward) accumulates its gradient in
  // an fp32 buffer of the table's size, the last op of backward, when the other gradients are
  // complete. Either outweighing the forward's activations and logits sets the peak: the
  // temporary's excess counts with the optimizer, the buffer's with the gradients.
  std::int64_t step_temporary = 0;
  if (job.optimizer == Optimizer::adamw && job.foreach_step && !job.optimizer_in_backward &&
      !job.cpu_offload) {
    step_temporary = b.optimizer / 2;
  }
  // Fp32 weights whose embedding is tied to the head: the head's backward made the gradient,
  // so the embedding's own (the last op of backward) is a second table, added into it in place.
  const bool fp32_weights = job.precision == Precision::fp32 || autocast_on;
  const std::int64_t embedding_buffer =
      job.mode != JobMode::full || job.optimizer_in_backward ? 0
      : bytes.weight == 2
          ? ceil_div(checked_product({model.vocab_size, model.hidden_size, 4}, "the gradients"),
                     job.tp)
      : fp32_weights && model.tie_word_embeddings
          ? ceil_div(checked_product({model.vocab_size, model.hidden_size, bytes.gradient},
                                     "the gradients"),
                     job.tp)
          : 0;
  const std::int64_t forward = checked_add(b.activations, b.logits);
  const std::int64_t late = std::max(step_temporary, embedding_buffer);
  estimate.gradients_at_step = b.gradients;
  // Autocast over fp32 weights (a full fine-tune): the weights' half-precision copies are
  // autocast's cache and what the matmuls saved of it, and none is left when backward ends (the
  // cache went when the forward left autocast; each layer's backward frees what it saved). Under
  // full checkpointing the layers saved none, so the loss's backward holds only the head's copy;
  // the layers' are held at the loss's forward, where the logits are 2 bytes a value fewer
  // (logits_bytes_full_forward). `forward_copies` is what the forward's phase holds.
  std::int64_t forward_copies = 0;
  // (Autocast runs where every GPU holds the whole model: one GPU or DDP.)
  if (job.mode == JobMode::full && autocast_on && job.sharding != Sharding::zero3 && job.tp == 1 &&
      job.pp == 1) {
    const std::int64_t copies = checked_mul(total, bytes.half_copy, "the weights");
    forward_copies = copies;
    if (job.checkpointing == Checkpointing::full) {
      const std::int64_t head = std::min(
          copies,
          checked_product({model.training_logits_width(), model.hidden_size, bytes.half_copy},
                          "the weights"));
      const std::int64_t logits_at_forward =
          job.loss == LossImpl::full && !job.rl
              ? checked_product({model.training_logits_width(), tokens, heads,
                                 a.logits_bytes_per_value - a.logits_bytes_full_forward},
                                "the logits")
              : 0;
      forward_copies = head + std::max<std::int64_t>(0, copies - head - logits_at_forward);
    }
    b.weights -= copies - forward_copies;
  }
  const std::int64_t held = checked_add(forward, forward_copies);
  // DeepSpeed ZeRO's step holds gradients of its own (zero_step_gradients); its optimizer
  // temporary is weighed with them below.
  const bool zero_step = zero_step_gradients > 0;
  const std::int64_t optimizer_excess = !zero_step && step_temporary >= embedding_buffer
                                            ? std::max<std::int64_t>(0, step_temporary - held)
                                            : 0;
  b.optimizer = checked_add(b.optimizer, optimizer_excess);
  if (zero_step) {
    // Backward holds the gradients counted so far beside the activations and logits (and under
    // ZeRO-3 the gathered layers); the step holds its own after them: the flattened partitions,
    // then the fp32 partition beside the optimizer's temporary. The gradients count what the
    // larger phase needs (docs/memory.md, "DeepSpeed's gradients").
    if (embedding_buffer > 0) {
      b.gradients = checked_add(b.gradients, std::max<std::int64_t>(0, embedding_buffer - held));
    }
    const std::int64_t sub_group_temporary =
        zero_step_sub_group > 0
            ? std::min(step_temporary,
                       checked_mul(zero_step_sub_group, bytes.state, "the optimizer"))
            : step_temporary;
    const std::int64_t step =
        std::max(zero_step_gradients, checked_add(zero_step_fp32, sub_group_temporary));
    b.gradients = std::max(b.gradients, step - held - zero_step_released);
  } else if (job.gradients_freed && job.grad_accum == 1 && !job.optimizer_in_backward) {
    // Gradients freed after each step (zero_grad(set_to_none=True)) and not accumulated: the
    // next forward pass runs without them. The peak is the larger of the forward's and the
    // late phase's (gradients + the larger transient); the gradients count by what they add.
    b.gradients =
        std::max<std::int64_t>(0, checked_add(b.gradients, late) - held) - optimizer_excess;
  } else if (embedding_buffer > step_temporary) {
    b.gradients = checked_add(b.gradients, std::max<std::int64_t>(0, embedding_buffer - held));
  }
  // torchao before 0.2 quantizes a weight to nf4 in one pass (torchao PR #196 chunked it, "a
  // large memory spike due to intermediates"): beside the stored weights, the weight's bf16
  // copy (counted in the weights as the largest Linear's dequantized copy), its scaled blocks
  // (2 bytes a value), and each value's differences from the 16 nf4 levels and their absolute
  // values (2 x 16 x 2 bytes): 66 bytes a value over the weights, at model setup, before any
  // gradient, optimizer state or activation exists. The excess over those counts as overhead
  // (a training job's overhead is empty here: the caller adds the CUDA context, there at both).
  if (job.nf4_quantized_in_one_pass && holds_nf4_base(job) && job.mode != JobMode::serve) {
    constexpr std::int64_t k_one_pass_bytes_per_value = 2 + 2 * 16 * 2;
    const std::int64_t setup = ceil_div(
        checked_mul(largest_layer_linear(), k_one_pass_bytes_per_value, "the quantization"),
        job.tp);
    const std::int64_t step =
        checked_add(checked_add(b.gradients, b.optimizer), checked_add(b.activations, b.logits));
    b.overhead = checked_add(b.overhead, std::max<std::int64_t>(0, setup - step));
  }
}

}  // namespace trace
