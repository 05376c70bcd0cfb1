#include "planner/model/step_time.h"

#include <algorithm>

#include "model/collective_links.h"
#include "model/dp_tail.h"
#include "planner/model/collectives.h"
#include "planner/model/contention.h"
#include "planner/model/evaluate.h"
#include "planner/model/model_math.h"

namespace planner {

double optimizer_bytes_per_local_param(const TrainingSpec& ts) {
  // Fused (Megatron-LM MixedPrecisionOptimizer.step): gradient-norm read (g),
  // Adam (read g and fp32 master, m, v; write master, m, v: g + 24), copy
  // master to the bf16 weights (read 4, write w), zero the gradient buffer
  // (g): 3g + 28 + w bytes.
  if (ts.optimizer_kernel == OptimizerKernel::fused)
    return 3.0 * ts.grad_bytes_per_param + 28.0 + ts.weight_bytes_per_param;
  // One kernel per operation (Composer's DecoupledAdamW), on fp32 master
  // weights, moments and gradients (FSDP1 keeps the sharded gradient in the
  // fp32 parameter's dtype): decay p *= 1 - lr*wd (8), m *= b1 (8), m += (1 -
  // b1) g (12), v *= b2 (8), v += (1 - b2) g*g (16), sqrt(v) (8), / sqrt(bc2)
  // (8), + eps (8), p -= step * m / denom (16): 92; clip_grad_norm_'s norm
  // read and scale (12); zero_grad frees (set_to_none). 104 bytes. The
  // kernels' launch time is not counted (docs/cost_model.md, Known gaps).
  return 104.0;
}

double grad_buffer_bytes_per_local_param(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts) {
  // Megatron-Core DDP's contiguous gradient buffer (ZeRO-0/1/2; ZeRO-3 keeps
  // sharded gradients), which the fused Adam of optimizer_bytes_per_local_param
  // steps. Every step, with DP x CP > 1 (megatron/core/distributed/
  // param_and_grad_buffer.py start_grad_sync): each bucket's norm for
  // check_for_nan_in_grad (read g; Megatron-LM turns it on by default,
  // --no-check-for-nan-in-loss-and-grad), its scaling by 1/(DP x CP) before
  // the summing collective (gradient_scaling_factor, average_in_collective off
  // by default: read and write 2g); and zero_grad_buffer zeroes the whole
  // buffer (write g), of which the optimizer's bytes count only its shard.
  // An approximation: the norm check runs only where the DDP config sets it.
  // XLA on a TPU torus (the only stack there) fuses its update into the step.
  if (ts.optimizer_kernel != OptimizerKernel::fused || pc.zero_stage >= 3 || pc.dp * pc.cp <= 1 || detail::is_torus(hw))
    return 0.0;
  const double g = ts.grad_bytes_per_param;
  const double shard = pc.zero_stage >= 1 ? double(zero_shard_size(pc)) : 1.0;
  return g + 2.0 * g + g * (1.0 - 1.0 / shard);
}

double optimizer_time_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                        double params_local) {
  const double opt_params = params_local / (pc.zero_stage >= 1 ? double(zero_shard_size(pc)) : 1.0);
  const double opt_bytes =
      opt_params * optimizer_bytes_per_local_param(ts) + params_local * grad_buffer_bytes_per_local_param(hw, pc, ts);
  return opt_bytes / (hw.hbm_bandwidth_bytes_per_s * hw.efficiency.hbm_efficiency);
}

double stage_optimizer_s(const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                         const PricedPlan& plan, std::int64_t stage) {
  const double expert = plan.stage_expert_params(stage);
  const double rest = plan.local_non_expert_params(stage, pc.tp);  // the replicated parts whole on each TP rank
  if (expert <= 0) return optimizer_time_s(hw, pc, ts, rest);
  // Routed experts: EP x ETP shards, their optimizer state over EDP
  // (Megatron-Core distributed optimizer, expert data-parallel group).
  ParallelConfig expert_pc = pc;
  expert_pc.dp = plan.expert_dp_group.size;
  expert_pc.cp = 1;
  return optimizer_time_s(hw, pc, ts, rest) + optimizer_time_s(hw, expert_pc, ts, expert / double(plan.expert_shards));
}

double pp_send_bytes(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts) {
  return 2.0 * double(pc.micro_batch_size) * double(ts.seq_len) / double(pc.cp) * double(model.hidden_size) /
         double(pc.tp);
}

namespace {

// The steady state: m micro-batches through the slowest stage, which paces
// every other (Narayanan et al. 2021 §2.2). The four terms below are its
// kernels, its recomputation and its exposed TP and CP traffic, each per
// layer as layer_cost.cpp prices it, times the stage's layers, plus the
// embedding / output layer where that stage carries them.

// Forward and backward kernels (layer_cost.cpp: op-level roofline).
double compute_term_s(const PricedPlan& plan, std::int64_t heavy) {
  const LayerTime& lt = plan.layer;
  double compute = double(plan.layout.layers_on(heavy)) * (lt.compute_fwd_s() + lt.compute_bwd_s());
  if (heavy == 0) compute += plan.head_first_s;
  if (heavy == plan.layout.stages - 1) compute += plan.head.output_fwd_s + plan.head.output_bwd_s;
  return double(plan.micro_batches) * compute;
}

// Recomputation in the backward pass (Korthikanti et al. 2022 §5: full
// recompute re-runs the layer's forward, selective the attention core).
double recompute_term_s(const PricedPlan& plan, std::int64_t heavy) {
  return double(plan.micro_batches) * double(plan.layout.layers_on(heavy)) * plan.layer.recompute_s;
}

// Exposed TP collectives (Megatron TP, Shoeybi et al. 2019; with sequence
// parallelism Korthikanti et al. 2022 §4.2.2), and on the last stage the
// output layer's vocab-parallel cross-entropy all-reduces.
double tp_term_s(const PricedPlan& plan, std::int64_t heavy) {
  const LayerTime& lt = plan.layer;
  double tp = double(plan.layout.layers_on(heavy)) * (lt.tp_comm_fwd_s + lt.tp_comm_bwd_s + lt.tp_comm_recompute_s);
  if (heavy == plan.layout.stages - 1) tp += plan.head.output_tp_comm_s;
  return double(plan.micro_batches) * tp;
}

// Exposed expert all-to-alls (MoE dispatch and combine, forward and
// backward, and their ETP gathers; moe_cost.h), as layer_cost.cpp overlaps them.
// With --overlap-a2a the stage's unpaired passes (warm-up forwards,
// cool-down backwards: unpaired_chunk_passes) expose their whole all-to-alls,
// each over the stage's layers / v.
double ep_term_s(const ParallelConfig& pc, const PricedPlan& plan, std::int64_t heavy) {
  const LayerTime& lt = plan.layer;
  const double layers = double(plan.layout.layers_on(heavy));
  const std::int64_t v = plan.virtual_stages;
  const Schedule schedule = normalized(pc).schedule;
  const double unpaired =
      double(unpaired_chunk_passes(schedule, plan.layout.stages, v, plan.micro_batches, heavy)) / double(v);
  return double(plan.micro_batches) * layers * (lt.ep_comm_fwd_s + lt.ep_comm_bwd_s) +
         unpaired * layers * (lt.ep_unpaired_fwd_s() + lt.ep_unpaired_bwd_s());
}

// Exposed part of the CP ring exchange of K/V (Liu et al. 2023, Ring
// Attention; Megatron-Core context parallelism), as layer_cost.cpp overlaps it.
double cp_term_s(const PricedPlan& plan, std::int64_t heavy) {
  const LayerTime& lt = plan.layer;
  return double(plan.micro_batches) * double(plan.layout.layers_on(heavy)) * (lt.cp_comm_fwd_s + lt.cp_comm_bwd_s);
}

// Compute slowed by the communication hidden behind it (contention.h): the
// CP exchange beside the attention kernels and the ZeRO-2/3 per-layer
// gathers and reduce-scatters beside the layer's kernels, every micro-batch
// on the slowest stage's layers.
double contention_term_s(const PricedPlan& plan, std::int64_t heavy, Explain* ex) {
  const LayerTime& lt = plan.layer;
  const double per_layer = lt.contention_fwd_s + lt.contention_bwd_s + plan.zero3.contention_s();
  const double c = double(plan.micro_batches) * double(plan.layout.layers_on(heavy)) * per_layer;
  if (ex && c > 0)
    note_step(ex, "overlap contention (per layer)",
              "m * L * share * hidden, share = (1 - mem) * channels/SMs + mem * min(1, k * busbw / HBM), over the CP "
              "exchange and the ZeRO-2/3 traffic hidden behind the layer",
              "NCCL one CTA (SM) per channel (src/enqueue.cc, NVIDIA/nccl#689); Lee et al. 2025 (arXiv:2507.03114); roofline for HBM",
              {{"cp_fwd_s", lt.contention_fwd_s},
               {"cp_bwd_s", lt.contention_bwd_s},
               {"zero_fwd_s", plan.zero3.contention_fwd_s},
               {"zero_bwd_s", plan.zero3.contention_bwd_s}},
              c);
  return c;
}

// Bubble: while the slowest stage works m micro-batches, the fill and drain
// pass once through every other stage, 1/v of it per chunk with interleaving:
// (sum_r t_r - t_max)/v; (p-1)/v * t for uniform stages (Narayanan et al.
// 2021 §2.2). GPipe has the same bubble as 1F1B. Interleaved rounds are also
// paced by the slowest chunk of each round (pipeline.h,
// interleaved_pace_layers): uneven chunks, such as the one carrying the output
// layer, stall the other stages every round.
double bubble_term_s(const ModelSpec& model, const PricedPlan& plan, double t_max, Explain* ex) {
  const std::int64_t p = plan.layout.stages, v = plan.virtual_stages;
  const double md = double(plan.micro_batches);
  const double all_stages = double(model.num_layers) * plan.layer_step_s + plan.head_first_s + plan.head_last_s;
  double bubble = std::max(0.0, all_stages - t_max) / double(v);
  if (v > 1) {
    const double pace = interleaved_pace_layers(plan.layout, v, plan.extra_first, plan.extra_last, plan.heads_in_split) * plan.layer_unit_s;
    bubble += md * std::max(0.0, pace - t_max);
  }
  if (ex)
    note_step(ex, "pipeline bubble",
              "(sum of stage times - heaviest) / v [+ m * (sum over chunks of the slowest stage's chunk - heaviest "
              "stage), v > 1]",
              "Narayanan et al. 2021 §2.2.2; round pacing of the interleaved order (approximation, checked by planner "
              "simulate)",
              {{"p", double(p)}, {"v", double(v)}, {"m", md}, {"heaviest_stage_s", t_max}}, bubble);
  return bubble;
}

// Send/recv of one micro-batch's boundary activation (b*s/cp*h*2 bytes, split
// over TP by the scatter-gather optimisation, Narayanan et al. 2021 §4.1),
// forward and backward. Megatron's 1F1B blocks on these in the steady state
// unless p2p overlap is on; the fill/drain ones are exposed anyway.
double p2p_term_s(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                  const PricedPlan& plan, Explain* ex) {
  const std::int64_t p = pc.pp, v = pc.virtual_stages;
  // The pipeline's stage boundaries as one send/recv ring: where the PP group
  // spans scale-up domains, the boundary that crosses the network paces every
  // transfer (p2p_channels.cpp, send_recv_bandwidth), whatever the stride.
  const GroupPlacement pair = placement(hw, pc.pp, pc.tp * pc.cp);
  const double bytes = pp_send_bytes(model, pc, ts);
  const CollectiveCost one_cost = collective_cost(hw, pair, Collective::send_recv, bytes);
  const double one = one_cost.total_s();
  const double transfers =
      overlaps_p2p(ts, pc) ? 2.0 * double(p - 1) : 2.0 * (double(plan.micro_batches) * double(v) + double(p - 1));
  const double p2p = transfers * one;
  if (ex)
    note_step(ex, "pipeline send/recv", "transfers * (alpha + b*s/cp*h*2/t / B)", "Narayanan et al. 2021 §4.1",
              {{"bytes", bytes}, {"transfers", transfers}, {"one_s", one}}, p2p);
  explain_p2p_channels(ex, "pipeline send/recv bandwidth", one_cost, bytes);
  return p2p;
}

// ZeRO-2/3 (Rajbhandari et al. 2020): per micro-batch, the slowest stage's
// layers expose what their compute does not hide of the next layer's
// prefetched gather and of their own gradients' reduce-scatter
// (zero3_layer_comm), plus the staging copies that run on the compute
// stream, and the first layer's gather of each pass is never hidden.
struct Zero3Terms {
  double exposed_s = 0, total_s = 0;
};
Zero3Terms zero3_terms(const PricedPlan& plan, std::int64_t heavy, Explain* ex) {
  Zero3Terms z;
  if (!plan.per_layer_sharding) return z;
  const Zero3LayerComm& z3 = plan.zero3;
  const double md = double(plan.micro_batches), layers = double(plan.layout.layers_on(heavy));
  const double t_ag = z3.all_gather_s, t_rs = z3.reduce_scatter_s;
  const double fwd_exposed = t_ag + layers * (z3.exposed_fwd_s + z3.staging_fwd_s);
  const double bwd_exposed = layers * (z3.exposed_bwd_s + z3.staging_bwd_s);
  z.exposed_s = md * (fwd_exposed + bwd_exposed);
  z.total_s = md * layers * z3.total_s();
  if (ex)
    note_step(ex, "ZeRO-2/3 per-layer gathers and reduce-scatters (exposed) and staging copies",
              "m * [ag + L*(max(0, ag - fwd_layer) + copy_fwd) + L*(max(0, ag_rc + ag_bwd + rs - bwd_layer) + "
              "copy_bwd)]; ag_bwd = 0 without resharding after the forward; ag_rc: the recomputed forward's "
              "re-gather (DeepSpeed, full recompute); rs in the reduce dtype; copy = gather outputs (2w B/param) "
              "and gradients into the reduce-scatter input ((g + r) B/param) over HBM; FSDP1's flat parameter: "
              "no gather copy, the backward's gradient concat, cast and pre-division ((3w + 3r) B/param, priced "
              "on the compute stream: an approximation); "
              "ZeRO-2: rs only",
              "Rajbhandari et al. 2020 §5; prefetch: Zhao et al. 2023 (PyTorch FSDP) §3.3; copies and reduce "
              "dtype: pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py (foreach_reduce, "
              "foreach_all_gather_copy_out), FSDP1 torch/distributed/fsdp/_runtime_utils.py (_post_backward_hook, "
              "_reduce_grad); re-gather: deepspeedai/DeepSpeed runtime/zero/"
              "partitioned_param_coordinator.py (__params_to_release, max_reuse_distance)",
              {{"ag_per_layer_s", t_ag},
               {"ag_bwd_per_layer_s", z3.bwd_all_gather_s},
               {"ag_recompute_per_layer_s", z3.recompute_all_gather_s},
               {"rs_per_layer_s", t_rs},
               {"copy_fwd_per_layer_s", z3.staging_fwd_s},
               {"copy_bwd_per_layer_s", z3.staging_bwd_s},
               {"fwd_layer_s", plan.layer.fwd_s()},
               {"bwd_layer_s", plan.layer.bwd_s()}},
              z.exposed_s);
  return z;
}

// Throughput and utilisation of a summed step: MFU and TFLOP/s per GPU count
// the model's FLOPs as Megatron-LM does (num_floating_point_operations:
// causal attention halved, logits counted), HFU the FLOPs that execute
// (model_math.h).
void add_rates(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
               StepTimeBreakdown& st, Explain* ex) {
  st.bubble_fraction = st.step_s > 0 ? st.pp_bubble_s / st.step_s : 0.0;
  const double tokens = double(ts.global_batch_sequences) * double(ts.seq_len);
  st.tokens_per_s = tokens / st.step_s;
  const FlopsPerToken f = with_capacity_factor(
      flops_per_token(model, ts.seq_len, pc.recompute, ts.attention, ts.selective, ts.selective_every_n_layers),
      ts.capacity_factor);
  st.model_flops_per_step = f.model * tokens;
  st.hardware_flops_per_step = f.hardware * tokens;
  const double peak_total = double(ts.num_gpus) * hw.peak_flops_per_s[std::size_t(ts.dtype)];
  st.mfu = st.model_flops_per_step / (st.step_s * peak_total);
  st.hfu = st.hardware_flops_per_step / (st.step_s * peak_total);
  st.tflops_per_gpu = st.model_flops_per_step / (st.step_s * double(ts.num_gpus)) / 1e12;
  if (ex)
    ex->add(
        {"MFU",
         "(6*W + 6*L*H*Q*T) * tokens / (step * GPUs * peak), W = GEMM weights incl. the output projection "
         "(MoE: top-k routed + shared experts, router not counted; a capacity factor cf < 1: the kept min(1, cf) "
         "of the routed FLOPs; MTP modules), attention causal (half the scores; MLA: (nope+rope) and v head widths)",
         "Megatron-LM megatron/training/training.py num_floating_point_operations (MoE/MLA/MTP as of d98e8a6)",
         {{"model_flops_per_step", st.model_flops_per_step}, {"step_s", st.step_s}, {"gpus", double(ts.num_gpus)}},
         st.mfu,
         "fraction"});
}

}  // namespace

StepTimeBreakdown step_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                            const TrainingSpec& ts, const PricedPlan& plan, Explain* ex) {
  StepTimeBreakdown st;
  const std::int64_t heavy = plan.slowest_stage();
  const double t_max = plan.stage_time_s(heavy);
  st.micro_batches = plan.micro_batches;
  st.stage_time_per_micro_batch_s = t_max;
  st.layer_fwd_s = plan.layer.fwd_s();
  st.layer_bwd_s = plan.layer.bwd_s();

  st.compute_s = compute_term_s(plan, heavy);
  st.straggler_s = double(plan.micro_batches) * double(plan.layout.layers_on(heavy)) * plan.layer.straggler_s;
  st.recompute_s = recompute_term_s(plan, heavy);
  st.contention_s = contention_term_s(plan, heavy, ex);
  st.tp_comm_s = tp_term_s(plan, heavy);
  st.cp_comm_s = cp_term_s(plan, heavy);
  st.ep_comm_s = ep_term_s(pc, plan, heavy);
  st.ep_comm_total_s =
      double(plan.micro_batches) * double(plan.layout.layers_on(heavy)) * plan.layer.ep_comm_total_s;
  if (pc.pp > 1) {
    st.pp_bubble_s = bubble_term_s(model, plan, t_max, ex);
    st.pp_p2p_s = p2p_term_s(model, hw, pc, ts, plan, ex);
  }
  const detail::StageTail tail = detail::critical_tail(hw, pc, ts, plan);
  const detail::TailTerms tail_terms = detail::split_tail(tail, plan, ex);
  st.dp_tail_stage = tail.stage;
  st.dp_comm_s = tail_terms.dp_comm_s;
  st.contention_tail_s = tail_terms.contention_s;
  st.contention_s += tail_terms.contention_s;
  st.dp_comm_total_s = tail.reduce_s + tail.gather_s;
  st.optimizer_s = tail_terms.optimizer_s;
  const Zero3Terms z3 = zero3_terms(plan, heavy, ex);
  st.zero3_comm_s = z3.exposed_s;
  st.zero3_comm_total_s = z3.total_s;

  st.step_s = 0;
  for (const StepTermValue& x : step_terms(st)) st.step_s += x.s;
  add_rates(model, hw, pc, ts, st, ex);
  return st;
}

std::array<StepTermValue, kNumStepTerms> step_terms(const StepTimeBreakdown& t) {
  return {{{StepTerm::compute, t.compute_s},
           {StepTerm::recompute, t.recompute_s},
           {StepTerm::contention, t.contention_s},
           {StepTerm::tp_comm, t.tp_comm_s},
           {StepTerm::cp_comm, t.cp_comm_s},
           {StepTerm::pp_p2p, t.pp_p2p_s},
           {StepTerm::pp_bubble, t.pp_bubble_s},
           {StepTerm::dp_comm, t.dp_comm_s},
           {StepTerm::zero3_comm, t.zero3_comm_s},
           {StepTerm::ep_comm, t.ep_comm_s},
           {StepTerm::optimizer, t.optimizer_s}}};
}

}  // namespace planner
