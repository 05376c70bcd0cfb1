#include "planner/model/memory_model.h"

#include <algorithm>

#include <fmt/format.h>

#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"

namespace planner {

namespace {

// A stage's stored activations per micro-batch: a MoE model's stage counts
// its own dense and MoE layers (PricedPlan::stage_moe_layers, over all its
// chunks), each as its kind stores them; otherwise the mean layer times the
// stage's layers (dense models, and torchtitan's every-N-th-layer policy,
// whose layers differ by position, not kind).
double stage_activation_bytes(const PricedPlan& plan, const LayerActivations& act, std::int64_t r) {
  const std::int64_t n = plan.layout.layers_on(r);
  if (!(act.moe_layer_bytes > 0)) return act.stored_bytes * double(n);
  const std::int64_t moe = plan.stage_moe_layers(r);
  return act.moe_layer_bytes * double(moe) + act.dense_layer_bytes * double(n - moe);
}

// One micro-batch of the multi-token-prediction modules' stored activations
// (Megatron-Core core_v0.19.0 multi_token_prediction.py
// MultiTokenPredictionLayer, on the last stage): each module's transformer
// layer (MoE when the model's last layer is, as its parameters), stored as
// the model's layers of that kind are, plus the module's own tensors, bf16
// and sequence-split under SP: the embedding of the shifted tokens (enorm's
// input), the hidden states (hnorm's input), their concatenation (eh_proj's
// input, 2h), the final norm's input and the output layer's input: 6h a
// token. Under full recomputation the module is checkpointed whole
// (_checkpointed_forward, recompute_method uniform): its two inputs and its
// output, 3h, of which the layer's stored input is one. One micro-batch, as
// the logits: the last stage's backward follows each forward.
double mtp_activation_bytes(const ModelSpec& model, const ParallelConfig& pc, const LayerActivations& act,
                            double tokens_local) {
  if (model.mtp_layers <= 0) return 0.0;
  const bool moe = is_moe_layer(model, model.num_layers - 1);
  const double kind = moe ? act.moe_layer_bytes : act.dense_layer_bytes;
  const double layer = kind > 0 ? kind : act.stored_bytes;
  const double h_bytes = 2.0 * tokens_local * double(model.hidden_size) / (pc.sequence_parallel ? double(pc.tp) : 1.0);
  const double own = pc.recompute == Recompute::full ? 2.0 : 6.0;
  return double(model.mtp_layers) * (layer + own * h_bytes);
}

}  // namespace

MemoryBreakdown memory_per_gpu(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                               const TrainingSpec& ts, const PricedPlan& plan, Explain* ex) {
  const double t = double(pc.tp);
  const double shard = double(zero_shard_size(pc));  // DP x CP, or the hybrid shard group
  const LayerActivations act = layer_activations(model, pc, ts, ex);
  const StageLayout& layout = plan.layout;
  const double tokens_local = double(pc.micro_batch_size) * double(ts.seq_len) / double(pc.cp);

  MemoryBreakdown best;
  // In-flight micro-batches fall with the stage index, so the peak is one of
  // the first stages of each kind (on ties the earliest); a MoE model's kinds
  // count their MoE layers too (DeepSeek-V3's first 3 layers are dense, so
  // stage 0 holds fewer MoE layers than stage 1 with as many layers).
  for (const std::int64_t r : plan.state_distinct_stages()) {
    MemoryBreakdown stage;
    // MoE: the routed experts over EP x ETP, their ZeRO / distributed-
    // optimizer shards over EDP; the rest over TP and DP x CP as for dense
    // models (Megatron-LM theoretical_memory_usage.py,
    // compute_weight_and_optimizer_memory: expert_sharded params use
    // num_bytes_per_parameter(expert_data_parallel_size)).
    const double expert = plan.stage_expert_params(r) / double(plan.expert_shards);
    const double params = plan.local_non_expert_params(r, pc.tp);  // replicated parts whole (PricedPlan)
    const double eshard = double(plan.expert_dp_group.size);
    // ZeRO-3 that keeps the gathered weights from the forward to the
    // backward holds the stage's weights whole while any micro-batch is in
    // flight, i.e. at the peak (Llama 3 405B, arXiv:2407.21783 §3.3.2).
    const bool weights_sharded = pc.zero_stage >= 3 && pc.reshard_after_forward;
    stage.weights_bytes = params * ts.weight_bytes_per_param / (weights_sharded ? shard : 1.0);
    stage.gradients_bytes = params * ts.grad_bytes_per_param / (pc.zero_stage >= 2 ? shard : 1.0);
    stage.optimizer_bytes = params * ts.optimizer_bytes_per_param / (pc.zero_stage >= 1 ? shard : 1.0);
    if (expert > 0) {
      stage.weights_bytes += expert * ts.weight_bytes_per_param / (weights_sharded ? eshard : 1.0);
      stage.gradients_bytes += expert * ts.grad_bytes_per_param / (pc.zero_stage >= 2 ? eshard : 1.0);
      stage.optimizer_bytes += expert * ts.optimizer_bytes_per_param / (pc.zero_stage >= 1 ? eshard : 1.0);
    }
    stage.micro_batches_in_flight =
        micro_batches_in_flight(pc.schedule, pc.pp, pc.virtual_stages, plan.micro_batches, r);
    stage.activations_bytes = stage_activation_bytes(plan, act, r) * stage.micro_batches_in_flight;
    if (r == 0)  // embedding output kept for its backward (n*h bf16, SP-split)
      stage.activations_bytes += 2.0 * tokens_local * double(model.hidden_size) / (pc.sequence_parallel ? t : 1.0) *
                                 stage.micro_batches_in_flight;
    if (r == layout.stages - 1) {
      // One micro-batch's logits as the loss kernel keeps them
      // (loss_kernel_bytes): Megatron's vocab-parallel cross-entropy upcasts
      // to fp32 (bf16 logits + fp32 softmax + fp32 gradient); Transformer
      // Engine's fused loss writes the gradient into the bf16 logits in place
      // (TE v2.10 pytorch/triton/cross_entropy.py); flash-attn's writes it
      // into a new bf16 tensor (flash_attn/ops/triton/cross_entropy.py).
      // Each MTP module computes its own logits and loss with the shared
      // output layer in the forward (multi_token_prediction.py
      // process_mtp_loss), all kept until the backward: 1 + mtp_layers.
      stage.logits_bytes = tokens_local * double(model.vocab_size) / t * loss_kernel_bytes(ts.loss_kernel).kept *
                           double(1 + model.mtp_layers);
      stage.activations_bytes += mtp_activation_bytes(model, pc, act, tokens_local);
    }
    // Recomputation rebuilds, in the backward pass, what one layer dropped
    // (full: the whole layer from its stored input; selective: the attention
    // core, Korthikanti et al. 2022 §5), and that layer's rebuilt activations
    // are live while its gradient is computed. The stored input is read in
    // place, not copied (Megatron-LM's CheckpointFunction and
    // torch.utils.checkpoint detach the saved inputs, sharing their storage),
    // so the working layer adds what it keeps without recomputation less
    // what it stores with it (torchtitan's per-layer policy: a wrapped
    // layer's, layer_cost.h LayerActivations::recompute_working_bytes).
    stage.transient_bytes += act.recompute_working_bytes;
    // Current and prefetched gather units (Zero3Gather: a layer, or one
    // weight tensor, DeepSpeed prefetching at most 5e7 elements; PricedPlan::
    // zero3_gather_unit_params, zero3_prefetch_params) gathered, unless the
    // weights were kept whole (counted above); one unit of unsharded grads
    // and the reduce-scatter input they are copied into, in the reduce dtype
    // (FSDP2 foreach_reduce allocates it before it frees the gradients,
    // torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py; XLA
    // reduce-scatters each tensor's gradient as the backward produces it,
    // the JAX scaling book's FSDP algorithm). A ZeRO-3 group of one rank
    // holds every weight already and gathers nothing (as step_time prices no
    // ZeRO-3 traffic for it).
    if (plan.zero3_gathers)
      stage.transient_bytes +=
          (weights_sharded ? (plan.zero3_gather_unit_params + plan.zero3_prefetch_params) * ts.weight_bytes_per_param
                           : 0.0) +
          plan.zero3_gather_unit_params * (ts.grad_bytes_per_param + reduce_bytes_per_param(ts));
    stage.reserve_bytes = hw.memory_reserve_bytes;
    stage.total_bytes = stage.weights_bytes + stage.gradients_bytes + stage.optimizer_bytes + stage.activations_bytes +
                        stage.logits_bytes + stage.transient_bytes + stage.reserve_bytes;
    stage.capacity_bytes = hw.hbm_capacity_bytes;
    stage.peak_stage = r;
    stage.layers_on_peak_stage = layout.layers_on(r);
    if (r == 0 || stage.total_bytes > best.total_bytes) best = stage;
  }
  if (ex) {
    std::string formula = fmt::format(
        "weights + grads + optimizer (ZeRO-sharded over {}) + activations*layers*in_flight + logits + "
        "transients + reserve",
        pc.zero_shard > 0 ? fmt::format("the hybrid shard group of {} of the dp*cp ranks", pc.zero_shard) : "dp*cp");
    std::string cite = "Rajbhandari et al. 2020 (ZeRO); Korthikanti et al. 2022 §4";
    if (pc.zero_shard > 0)
      cite += "; hybrid sharding: Zhao et al. 2023 (PyTorch FSDP) §3.2.2, torchtitan parallel_dims.py (dp_replicate)";
    if (plan.zero3_gathers) {
      formula += "; ZeRO-3 transients: the gathered unit and its prefetch + one unit of grads and its reduce input; ";
      switch (plan.zero3_gather) {
        case Zero3Gather::layer:
          formula += "a unit is a layer, the next one prefetched (FSDP2 / Megatron-FSDP)";
          break;
        case Zero3Gather::tensor:
          formula += "a unit is the largest weight tensor, the next one prefetched (XLA)";
          cite +=
              "; JAX scaling book part 5 (FSDP algorithm: each kernel gathered just before use); MaxText "
              "src/maxtext/layers/linears.py, moe.py";
          break;
        case Zero3Gather::submodule:
          formula += "a unit is the largest module's weight, prefetch at most 5e7 elements (DeepSpeed)";
          cite += "; DeepSpeed runtime/zero/partitioned_param_coordinator.py fetch_sub_module, zero/config.py";
          break;
      }
    }
    ex->add({"memory per GPU (peak stage)",
             std::move(formula),
             std::move(cite),
             {{"peak_stage", double(best.peak_stage)},
              {"layers", double(best.layers_on_peak_stage)},
              {"in_flight", best.micro_batches_in_flight},
              {"weights_bytes", best.weights_bytes},
              {"gradients_bytes", best.gradients_bytes},
              {"optimizer_bytes", best.optimizer_bytes},
              {"activations_bytes", best.activations_bytes},
              {"transient_bytes", best.transient_bytes},
              {"zero3_gather_unit_params", plan.zero3_gather_unit_params},
              {"zero3_prefetch_params", plan.zero3_prefetch_params}},
             best.total_bytes,
             "bytes"});
    if (model.mtp_layers > 0)
      ex->add({"multi-token prediction memory (last stage, one micro-batch)",
               "mtp_layers x (one layer's stored activations (MoE when the last layer is) + 6h per token: embedding, "
               "hidden states, their 2h concatenation, final-norm and output-layer inputs; 2h under full "
               "recompute) + mtp_layers x the logits as the loss kernel keeps them",
               "Megatron-Core core_v0.19.0 transformer/multi_token_prediction.py (MultiTokenPredictionLayer, "
               "process_mtp_loss: each module's loss in the forward)",
               {{"mtp_layers", double(model.mtp_layers)},
                {"mtp_logits_bytes", tokens_local * double(model.vocab_size) / t *
                                         loss_kernel_bytes(ts.loss_kernel).kept * double(model.mtp_layers)}},
               mtp_activation_bytes(model, pc, act, tokens_local),
               "bytes"});
  }
  return best;
}

}  // namespace planner
