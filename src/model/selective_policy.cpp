#include "planner/model/selective_policy.h"

#include <fmt/format.h>

#include "planner/model/gemm_cost.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/straggler.h"

namespace planner {

double recomputed_layer_fraction(const ModelSpec& model, const TrainingSpec& ts) {
  if (ts.selective != SelectivePolicy::torchtitan_every_nth_layer || model.num_layers <= 0) return 0.0;
  const std::int64_t n = ts.selective_every_n_layers < 1 ? 1 : ts.selective_every_n_layers;
  return double(model.num_layers / n) / double(model.num_layers);
}

double full_recompute_share(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts) {
  if (pc.recompute == Recompute::full) return 1.0;
  if (pc.recompute == Recompute::selective) return recomputed_layer_fraction(model, ts);
  return 0.0;
}

std::vector<LayerMatmul> op_sac_matmuls(const ModelSpec& model) {
  const double h = double(model.hidden_size), q = double(model.num_heads) * double(model.head_dim),
               kv = double(model.num_kv_heads) * double(model.head_dim), F = double(model.ffn_hidden_size);
  std::vector<LayerMatmul> mm = {
      {"wq", q, h, false, false}, {"wk", kv, h, false, false}, {"wv", kv, h, false, false}, {"wo", h, q, true, false}};
  mm.push_back({"w1", F, h, false, false});
  if (is_gated(model.ffn_kind)) mm.push_back({"w3", F, h, false, false});
  mm.push_back({"w2", h, F, true, false});
  for (std::size_t i = 0; i < mm.size(); i += 2) mm[i].saved = true;  // mm counts 1, 3, 5, ... are odd: saved
  return mm;
}

// torchtitan op-level SAC (selective_ac_option "op"): the backward re-runs
// the matmuls whose outputs were not saved (every second one, op_sac_matmuls)
// and every element-wise kernel of the layer (norms, RoPE, activation, residual
// adds: not in _op_sac_save_list); the attention kernel's output is saved
// (torchtitan v0.2.2 models/llama3/infra/parallelize.py _op_sac_save_list).
// TP: the forward's all-gathers (SP) or all-reduces are not in the save list
// and run again; the reduce-scatter outputs are saved, so with SP half the
// forward's TP traffic repeats. CP's K/V exchange is not repeated (the
// attention output is saved). The GEMMs are stretched for the slowest chip as
// the forward's are.
void add_op_sac_recompute(LayerTime& lt, const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                          const TrainingSpec& ts, double tokens, Explain* ex) {
  const double t = double(pc.tp);
  const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);
  double gemm_s = 0, flops = 0;
  for (const LayerMatmul& mm : op_sac_matmuls(model)) {
    if (mm.saved) continue;
    const double out = mm.row_parallel ? mm.out_width : mm.out_width / t;
    const double in = mm.row_parallel ? mm.in_width / t : mm.in_width;
    gemm_s += k * gemm_time_s(hw, ts.dtype, tokens, out, in);
    flops += 2.0 * tokens * out * in;
  }
  lt.recompute_s = gemm_s + lt.elementwise_fwd_s;
  lt.tp_comm_recompute_s = pc.sequence_parallel ? 0.5 * lt.tp_comm_fwd_s : lt.tp_comm_fwd_s;
  if (ex)
    note_step(ex, "recompute per layer (torchtitan op-level SAC)",
              "unsaved matmuls (every second mm: wk, wo, w3 for Llama) + the element-wise forward; TP: the forward's "
              "all-gathers/all-reduces again",
              "pytorch/torchtitan v0.2.2 torchtitan/distributed/activation_checkpoint.py _apply_op_sac; "
              "models/llama3/infra/parallelize.py _op_sac_save_list",
              {{"recomputed_gemm_flops", flops},
               {"recomputed_gemm_s", gemm_s},
               {"elementwise_fwd_s", lt.elementwise_fwd_s},
               {"tp_comm_recompute_s", lt.tp_comm_recompute_s}},
              lt.recompute_s, "s");
}

// torchtitan per-layer SAC (selective_ac_option "<N>"): floor(L/N) of the
// layers recompute fully, the others keep everything. Every layer is priced
// as their mean (recomputed_layer_fraction), so the closed form and the
// simulator, which read the same LayerTime, agree; a pipeline stage whose
// share of wrapped layers differs from the mean is an approximation
// (docs/cost_model.md, Known gaps).
LayerTime every_nth_layer_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                               const TrainingSpec& ts, Explain* ex) {
  ParallelConfig kept = pc, full = pc;
  kept.recompute = Recompute::none;
  full.recompute = Recompute::full;
  LayerTime lt = layer_time(model, hw, kept, ts, ex);
  const LayerTime rc = layer_time(model, hw, full, ts);
  const double f = recomputed_layer_fraction(model, ts);
  lt.recompute_s = f * rc.recompute_s;
  lt.tp_comm_recompute_s = f * rc.tp_comm_recompute_s;
  if (ex)
    note_step(ex, "recompute per layer (torchtitan per-layer SAC, mean over layers)",
              "floor(L/N)/L x the full-recompute forward (every N-th block wrapped in full checkpointing)",
              "pytorch/torchtitan v0.2.2 torchtitan/distributed/activation_checkpoint.py _apply_layer_sac",
              {{"every_n_layers", double(ts.selective_every_n_layers)},
               {"recomputed_share", f},
               {"full_recompute_s", rc.recompute_s}},
              lt.recompute_s, "s");
  return lt;
}

// torchtitan per-layer SAC: floor(L/N)/L of the layers keep their input only,
// the others everything (the mean per layer; every_nth_layer_time).
LayerActivations every_nth_layer_activations(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts,
                                             Explain* ex) {
  ParallelConfig kept = pc, full = pc;
  kept.recompute = Recompute::none;
  full.recompute = Recompute::full;
  LayerActivations a = layer_activations(model, kept, ts);
  const LayerActivations rc = layer_activations(model, full, ts);
  const double f = recomputed_layer_fraction(model, ts);
  a.stored_bytes = (1.0 - f) * a.full_layer_bytes + f * rc.stored_bytes;
  a.recompute_working_bytes = f > 0 ? rc.recompute_working_bytes : 0.0;
  a.dense_layer_bytes = a.moe_layer_bytes = 0;  // the mean per layer, on every stage
  if (ex)
    note_step(ex, "activations per layer per micro-batch (torchtitan per-layer SAC, mean over layers)",
              "(1 - f) x full layer + f x layer input, f = floor(L/N)/L",
              "pytorch/torchtitan v0.2.2 torchtitan/distributed/activation_checkpoint.py _apply_layer_sac",
              {{"recomputed_share", f}, {"full_layer_bytes", a.full_layer_bytes}, {"input_bytes", rc.stored_bytes}},
              a.stored_bytes, "bytes");
  return a;
}

// torchtitan op-level SAC: the layer input (the checkpoint's), the saved
// matmul outputs (a row-parallel one full width before its reduction, plus
// the reduce-scatter's output under SP: in _op_sac_save_list), the attention
// kernel's output and its own saved state (log-sum-exp for flash).
double op_sac_stored_bytes(const ModelSpec& model, const ParallelConfig& pc, double tokens,
                           double attention_core_bytes) {
  constexpr double kAct = 2.0;  // bf16 activations (layer_parts.h)
  const double t = double(pc.tp), sp_div = pc.sequence_parallel ? t : 1.0;
  double bytes = kAct * tokens * double(model.hidden_size) / sp_div;  // layer input
  for (const LayerMatmul& mm : op_sac_matmuls(model)) {
    if (!mm.saved) continue;
    bytes += kAct * tokens * (mm.row_parallel ? mm.out_width : mm.out_width / t);
    if (mm.row_parallel && pc.sequence_parallel) bytes += kAct * tokens * mm.out_width / t;
  }
  return bytes + kAct * tokens * double(model.num_heads) * double(model.head_dim) / t + attention_core_bytes;
}

bool parse_selective_policy(const std::string& text, TrainingSpec& ts) {
  if (text == "megatron") {
    ts.selective = SelectivePolicy::megatron_attention;
    return true;
  }
  if (text == "op") {
    ts.selective = SelectivePolicy::torchtitan_op;
    return true;
  }
  // layer:N, N of at most 6 digits (a frequency above the layer count recomputes nothing)
  if (text.rfind("layer:", 0) != 0 || text.size() <= 6 || text.size() > 12 ||
      text.find_first_not_of("0123456789", 6) != std::string::npos)
    return false;
  const std::int64_t n = std::stoll(text.substr(6));
  if (n < 1) return false;
  ts.selective = SelectivePolicy::torchtitan_every_nth_layer;
  ts.selective_every_n_layers = n;
  return true;
}

std::string selective_policy_label(const TrainingSpec& ts) {
  switch (ts.selective) {
    case SelectivePolicy::megatron_attention:
      return "megatron";
    case SelectivePolicy::torchtitan_op:
      return "op";
    case SelectivePolicy::torchtitan_every_nth_layer:
      return fmt::format("layer:{}", ts.selective_every_n_layers);
  }
  return "megatron";
}

}  // namespace planner
