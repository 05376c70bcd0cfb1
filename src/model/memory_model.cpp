#include "planner/model/memory_model.h"

#include <algorithm>

#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"

namespace planner {

double stage_params(const ModelSpec& m, const StageLayout& layout, std::int64_t stage) {
  const ParamCounts pcnt = count_params(m);
  double params = double(layout.layers_on(stage)) * double(pcnt.per_layer);
  if (stage == 0) params += double(pcnt.embedding + pcnt.position);
  if (stage == layout.stages - 1) {
    // With tied embeddings and PP > 1 the last stage keeps its own copy of the
    // embedding matrix for the output layer (Megatron-LM, shared embedding).
    const bool own_copy = m.tied_embeddings && layout.stages > 1;
    params += double(pcnt.output + pcnt.final_norm) + (own_copy ? double(pcnt.embedding) : 0.0);
  }
  return params;
}

MemoryBreakdown memory_per_gpu(const ModelSpec& m, const HardwareProfile& hw, const ParallelConfig& pc,
                               const TrainingSpec& ts, const StageLayout& layout, Explain* ex) {
  const double t = double(pc.tp);
  const double shard = double(pc.dp * pc.cp);
  const LayerActivations act = layer_activations(m, pc, ts, ex);
  const std::int64_t m_batches = ts.global_batch_sequences / std::max<std::int64_t>(1, pc.dp * pc.micro_batch_size);
  const ParamCounts pcnt = count_params(m);
  const double tokens_local = double(pc.micro_batch_size) * double(ts.seq_len) / double(pc.cp);

  MemoryBreakdown best;
  // Only stages 0, 1 and p-1 can be the peak: in-flight micro-batches fall with
  // the stage index and middle stages are filled heaviest-first (stage 1 holds
  // middle_hi layers whenever any middle stage does).
  const std::int64_t candidates[3] = {0, std::min<std::int64_t>(1, layout.stages - 1), layout.stages - 1};
  for (std::int64_t i = 0; i < 3; ++i) {
    const std::int64_t r = candidates[i];
    if (i > 0 && r == candidates[i - 1]) continue;
    MemoryBreakdown mb;
    const double params = stage_params(m, layout, r) / t;
    mb.weights_bytes = params * ts.weight_bytes_per_param / (pc.zero_stage >= 3 ? shard : 1.0);
    mb.gradients_bytes = params * ts.grad_bytes_per_param / (pc.zero_stage >= 2 ? shard : 1.0);
    mb.optimizer_bytes = params * ts.optimizer_bytes_per_param / (pc.zero_stage >= 1 ? shard : 1.0);
    mb.micro_batches_in_flight = micro_batches_in_flight(pc.schedule, pc.pp, pc.virtual_stages, m_batches, r);
    mb.activations_bytes = act.stored_bytes * double(layout.layers_on(r)) * mb.micro_batches_in_flight;
    if (r == 0)  // embedding output kept for its backward (n*h bf16, SP-split)
      mb.activations_bytes +=
          2.0 * tokens_local * double(m.hidden_size) / (pc.sequence_parallel ? t : 1.0) * mb.micro_batches_in_flight;
    if (r == layout.stages - 1)
      // bf16 logits + fp32 softmax/loss copy + fp32 gradient, one micro-batch
      // (Megatron vocab-parallel cross-entropy upcasts to fp32).
      mb.logits_bytes = tokens_local * double(m.vocab_size) / t * (2.0 + 4.0 + 4.0);
    // Recomputation rebuilds, in the backward pass, what one layer dropped
    // (full: the whole layer from its stored input; selective: the attention
    // core, Korthikanti et al. 2022 §5), and that layer's rebuilt activations
    // are live while its gradient is computed. The stored input is read in
    // place, not copied (Megatron-LM's CheckpointFunction and
    // torch.utils.checkpoint detach the saved inputs, sharing their storage),
    // so the working layer adds what it keeps without recomputation less
    // what it stores with it.
    mb.transient_bytes += act.full_layer_bytes - act.stored_bytes;
    // Current + prefetched layer gathered, one layer of unsharded grads. A
    // ZeRO-3 group of one rank holds every weight already and gathers nothing
    // (as step_time prices no ZeRO-3 traffic for it).
    if (pc.zero_stage >= 3 && shard > 1)
      mb.transient_bytes += double(pcnt.per_layer) / t * (2.0 * ts.weight_bytes_per_param + ts.grad_bytes_per_param);
    mb.reserve_bytes = hw.memory_reserve_bytes;
    mb.total_bytes = mb.weights_bytes + mb.gradients_bytes + mb.optimizer_bytes + mb.activations_bytes +
                     mb.logits_bytes + mb.transient_bytes + mb.reserve_bytes;
    mb.capacity_bytes = hw.hbm_capacity_bytes;
    mb.peak_stage = r;
    mb.layers_on_peak_stage = layout.layers_on(r);
    if (r == 0 || mb.total_bytes > best.total_bytes) best = mb;
  }
  if (ex)
    ex->add({"memory per GPU (peak stage)",
             "weights + grads + optimizer (ZeRO-sharded over dp*cp) + activations*layers*in_flight + logits + "
             "transients + reserve",
             "Rajbhandari et al. 2020 (ZeRO); Korthikanti et al. 2022 §4",
             {{"peak_stage", double(best.peak_stage)},
              {"layers", double(best.layers_on_peak_stage)},
              {"in_flight", best.micro_batches_in_flight},
              {"weights_bytes", best.weights_bytes},
              {"gradients_bytes", best.gradients_bytes},
              {"optimizer_bytes", best.optimizer_bytes},
              {"activations_bytes", best.activations_bytes}},
             best.total_bytes,
             "bytes"});
  return best;
}

}  // namespace planner
