#include "planner/model/moe_cost.h"

#include <algorithm>
#include <cmath>

#include "model/collective_links.h"
#include "model/layer_parts.h"
#include "planner/model/contention.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/recompute_modules.h"
#include "planner/model/straggler.h"

namespace planner {

namespace {

using layer_detail::hbm_bw;
using layer_detail::kAct;

// The layer a MoE layer is without its routed experts: attention, norms and
// the shared experts as one TP-sharded dense FFN of their summed width
// (Megatron-Core SharedExpertMLP is a TP-sharded MLP).
ModelSpec without_routed_experts(const ModelSpec& model) {
  ModelSpec m = architecture_of(model);
  const MoeSpec& e = model.moe;
  const std::int64_t shared_f = e.shared_expert_ffn_hidden_size > 0 ? e.shared_expert_ffn_hidden_size
                                                                    : e.expert_ffn_hidden_size;
  m.ffn_hidden_size = e.num_shared_experts * shared_f;
  m.moe = MoeSpec{};
  return m;
}

bool is_torus_tier0(const HardwareProfile& hw) { return !hw.tiers.empty() && hw.tiers[0].topology == Topology::torus; }

ModelSpec dense_layer_model(const ModelSpec& model) {
  ModelSpec m = architecture_of(model);
  m.moe = MoeSpec{};
  return m;
}

}  // namespace

std::int64_t expert_dp_size(const ParallelConfig& pc) {
  const std::int64_t fold = pc.tp * pc.cp * pc.dp;
  return std::max<std::int64_t>(1, fold / std::max<std::int64_t>(1, pc.ep * pc.etp));
}

bool reduces_gradients(const ModelSpec& model, const ParallelConfig& pc) {
  return pc.dp * pc.cp > 1 || (model.is_moe() && expert_dp_size(pc) > 1);
}

ExpertGroups expert_groups(const HardwareProfile& hw, const ParallelConfig& pc) {
  ExpertGroups g;
  g.edp = expert_dp_size(pc);
  g.etp = placement(hw, pc.etp, 1);
  g.ep = placement(hw, pc.ep, pc.etp);
  g.edp_group = placement(hw, g.edp, pc.etp * pc.ep);
  return g;
}

MoeLayerCounts moe_layer_counts(const ModelSpec& model) {
  MoeLayerCounts c;
  if (!model.is_moe()) {
    c.dense = model.num_layers;
    return c;
  }
  // ParamCounts::moe_layers, without the rest of count_params (evaluate()
  // asks for these counts several times per configuration).
  if (const std::int64_t moe_layers = count_moe_layers(model); moe_layers > 0) {
    c.moe = moe_layers;
    c.dense = model.num_layers - moe_layers;
    return c;
  }
  // Layers first_dense_layers .. L-1, one in layer_freq of them MoE.
  const std::int64_t after = std::max<std::int64_t>(0, model.num_layers - model.moe.first_dense_layers);
  c.moe = after / std::max<std::int64_t>(1, model.moe.layer_freq);
  c.dense = model.num_layers - c.moe;
  return c;
}

double routed_params_per_layer(const ModelSpec& model) {
  if (!model.is_moe() || model.num_layers <= 0) return 0.0;
  return routed_params_per_layer(model, count_params(model));
}

double routed_params_per_layer(const ModelSpec& model, const ParamCounts& p) {
  if (!model.is_moe() || model.num_layers <= 0) return 0.0;
  double routed = double(p.routed_experts_per_moe_layer);
  if (routed <= 0) {  // the routed experts' matrices: E * (3 gated | 2) * h * F_e
    const double h = double(model.hidden_size), f = double(model.moe.expert_ffn_hidden_size);
    routed = double(model.moe.num_experts) * (is_gated(model.ffn_kind) ? 3.0 : 2.0) * h * f;
  }
  return routed * double(moe_layer_counts(model).moe) / double(model.num_layers);
}

MoeTokens moe_tokens(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts) {
  MoeTokens t;
  const MoeSpec& e = model.moe;
  const double k = double(e.top_k);
  // The MoE layer's input is the sequence-parallel shard (SP is required with
  // TP, evaluate.cpp expert_reasons).
  t.local = double(pc.micro_batch_size) * double(ts.seq_len) / double(pc.cp) /
            (pc.sequence_parallel ? double(pc.tp) : 1.0);
  // Dropless: the busiest EP rank receives `imbalance` times the mean (moe.md
  // §3.6: time of the MoE part follows the max over ranks). With a capacity
  // factor Megatron drops what exceeds capacity = ceil(tokens*k/E * cf) per
  // expert and, padding to capacity (--moe-pad-expert-input-to-capacity),
  // every expert processes exactly that many rows (moe_utils.get_capacity;
  // num_out_tokens = capacity * num_experts): load = cf for every rank.
  // With EP 1 every GPU runs all experts on its own local*k rows: how they
  // spread over the experts leaves the total (and the all-to-all, none) as is.
  t.load = ts.capacity_factor > 0 ? ts.capacity_factor : pc.ep > 1 ? std::max(1.0, ts.moe_imbalance) : 1.0;
  t.a2a_rows = t.local * k * t.load;
  t.routed_rows = t.a2a_rows * double(pc.etp);
  t.local_experts = double(e.num_experts) / double(pc.ep);
  t.rows_per_expert = t.local_experts > 0 ? t.routed_rows / t.local_experts : 0.0;
  if (ts.capacity_factor > 0)  // capacity is whole rows: ceil per source rank, times the EP*ETP sources
    t.rows_per_expert =
        std::ceil(t.local * k / double(e.num_experts) * ts.capacity_factor) * double(pc.ep) * double(pc.etp);
  return t;
}

double a2a_volume_bytes(double rows, double hidden, double bytes_per_element, std::int64_t ep) {
  if (ep <= 1) return 0.0;
  return rows * hidden * bytes_per_element * double(ep - 1) / double(ep);
}

CollectiveCost deepep_cost(const HardwareProfile& hw, const GroupPlacement& g, double bytes, std::int64_t top_k) {
  CollectiveCost out;
  if (g.size <= 1 || bytes <= 0) return out;
  out.algorithm = Algorithm::direct;
  const double p = double(g.size), m = double(g.members_per_domain), D = double(g.domains);
  // Intra-node share at NVLink's achieved rate: DeepEP's intranode kernels
  // reach 153/158 GB/s on H800 against 160 GB/s measured NVLink (DeepEP
  // docs/legacy.md; DeepSeek-V3 issue #28), i.e. the link's achieved rate.
  const double intra_bw = detail::intra_bandwidth(hw, g);
  // A token goes once to each rank holding any of its k experts
  // (DeepEP's layout kernel: is_token_in_rank [num_tokens, num_ranks]; the
  // intranode kernels send per rank): with k experts uniform over p ranks it
  // reaches p(1-(1-1/p)^k) ranks where NCCL's all-to-all sends k copies.
  const double k_copies = double(std::max<std::int64_t>(1, top_k));
  const double rank_dedup = std::min(1.0, p * (1.0 - std::pow(1.0 - 1.0 / p, k_copies)) / k_copies);
  const double t_intra = m > 1 ? bytes * rank_dedup * (m - 1.0) / p / intra_bw : 0.0;
  double t_inter = 0;
  if (D > 1) {
    // Internode kernels send a token once per remote node holding any of its
    // k experts and forward it over NVLink there ("removes redundant tokens
    // during cross-node communication", Megatron-Core MoE README). With k
    // experts uniform over D nodes a token reaches (D-1)(1-(1-1/D)^k) remote
    // nodes where NCCL sends k(D-1)/D copies. RDMA at the NIC's achieved rate:
    // 43-58 GB/s per CX7 400 Gb/s NIC at EP16-64 (DeepEP docs/legacy.md).
    const double k = double(std::max<std::int64_t>(1, top_k));
    const double copies_nccl = k * (D - 1.0) / D;
    const double copies_dedup = (D - 1.0) * (1.0 - std::pow(1.0 - 1.0 / D, k));
    const double remote_bytes = bytes * (p - m) / p * std::min(1.0, copies_dedup / copies_nccl);
    t_inter = remote_bytes / detail::nic_bandwidth_per_gpu(hw);
  }
  out.bus_bandwidth_bytes_per_s = g.crosses_domains() ? detail::nic_bandwidth_per_gpu(hw) : intra_bw;
  out.latency_s = hw.collective_base_latency_s;  // one fused kernel, no per-peer steps
  out.bandwidth_s = std::max(t_intra, t_inter);
  return out;
}

MoeA2a moe_a2a(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts) {
  MoeA2a a;
  const ExpertGroups groups = expert_groups(hw, pc);
  const MoeTokens tk = moe_tokens(model, pc, ts);
  const double h = double(model.hidden_size);
  const bool deepep = ts.a2a == A2aBackend::deepep;
  // FP8 dispatch, BF16 combine (DeepEP README; Megatron-Core MoE README "FP8
  // dispatch: 50% EP dispatch volume"); the backward moves bf16 gradients.
  // Megatron-Core's DeepEP/HybridEP paths dispatch bf16 (TrainingSpec::a2a_fp8_dispatch).
  const double dispatch_elem = deepep && ts.dtype == DType::fp8 && ts.a2a_fp8_dispatch ? 1.0 : kAct;
  auto cost = [&](double bytes) {
    return deepep ? deepep_cost(hw, groups.ep, bytes, model.moe.top_k)
                  : collective_cost(hw, groups.ep, Collective::all_to_all, bytes);
  };
  a.dispatch_bytes = tk.a2a_rows * h * dispatch_elem;
  a.dispatch = cost(a.dispatch_bytes);
  const double bf16 = cost(tk.a2a_rows * h * kAct).total_s();
  a.dispatch_fwd_s = a.dispatch.total_s();
  a.combine_fwd_s = bf16;
  a.dispatch_bwd_s = bf16;  // gradient of the combine goes out as a dispatch
  a.combine_bwd_s = bf16;
  if (pc.etp > 1) {
    // ETP > 1: the routed rows are all-gathered over ETP before the experts
    // and reduce-scattered after them, mirrored in the backward (SimuMax
    // moe_module.py: all-gather / reduce-scatter of comm_size * ETP).
    const double gathered = tk.routed_rows * h * kAct;
    const double ag = collective_cost(hw, groups.etp, Collective::all_gather, gathered).total_s();
    const double rs = collective_cost(hw, groups.etp, Collective::reduce_scatter, gathered).total_s();
    a.etp_fwd_s = ag + rs;
    a.etp_bwd_s = ag + rs;
  }
  return a;
}

LayerTime blend(const LayerTime& a, const LayerTime& b, double w) {
  LayerTime o;
  auto mix = [w](double x, double y) { return x * (1.0 - w) + y * w; };
  o.gemm_fwd_s = mix(a.gemm_fwd_s, b.gemm_fwd_s);
  o.attention_fwd_s = mix(a.attention_fwd_s, b.attention_fwd_s);
  o.elementwise_fwd_s = mix(a.elementwise_fwd_s, b.elementwise_fwd_s);
  o.gemm_bwd_s = mix(a.gemm_bwd_s, b.gemm_bwd_s);
  o.attention_bwd_s = mix(a.attention_bwd_s, b.attention_bwd_s);
  o.elementwise_bwd_s = mix(a.elementwise_bwd_s, b.elementwise_bwd_s);
  o.grad_accumulate_s = mix(a.grad_accumulate_s, b.grad_accumulate_s);
  o.recompute_s = mix(a.recompute_s, b.recompute_s);
  o.tp_comm_fwd_s = mix(a.tp_comm_fwd_s, b.tp_comm_fwd_s);
  o.tp_comm_bwd_s = mix(a.tp_comm_bwd_s, b.tp_comm_bwd_s);
  o.tp_comm_recompute_s = mix(a.tp_comm_recompute_s, b.tp_comm_recompute_s);
  o.cp_comm_fwd_s = mix(a.cp_comm_fwd_s, b.cp_comm_fwd_s);
  o.cp_comm_bwd_s = mix(a.cp_comm_bwd_s, b.cp_comm_bwd_s);
  o.cp_comm_total_s = mix(a.cp_comm_total_s, b.cp_comm_total_s);
  o.contention_fwd_s = mix(a.contention_fwd_s, b.contention_fwd_s);
  o.contention_bwd_s = mix(a.contention_bwd_s, b.contention_bwd_s);
  o.ep_comm_fwd_s = mix(a.ep_comm_fwd_s, b.ep_comm_fwd_s);
  o.ep_comm_bwd_s = mix(a.ep_comm_bwd_s, b.ep_comm_bwd_s);
  o.ep_comm_total_s = mix(a.ep_comm_total_s, b.ep_comm_total_s);
  o.ep_comm_fwd_total_s = mix(a.ep_comm_fwd_total_s, b.ep_comm_fwd_total_s);
  o.ep_contention_fwd_s = mix(a.ep_contention_fwd_s, b.ep_contention_fwd_s);
  o.ep_contention_bwd_s = mix(a.ep_contention_bwd_s, b.ep_contention_bwd_s);
  o.straggler_s = mix(a.straggler_s, b.straggler_s);
  o.gemm_flops_fwd = mix(a.gemm_flops_fwd, b.gemm_flops_fwd);
  o.attention_flops_fwd = mix(a.attention_flops_fwd, b.attention_flops_fwd);
  return o;
}

LayerTime moe_layer_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                         const TrainingSpec& ts, Explain* ex) {
  // --recompute-modules: the non-routed part as a dense layer whose MLP is
  // the shared experts (moe_layer_dense_part).
  LayerTime lt = layer_time(without_routed_experts(model), hw, pc, moe_layer_dense_part(ts), ex);
  const MoeSpec& e = model.moe;
  if (e.num_shared_experts == 0 && pc.tp > 1 && !ts.tp_comm_overlap && !is_torus_tier0(hw)) {
    // No shared experts: the routed experts take the sequence-parallel shard
    // as it is (the ETP gather, if any, is priced with the all-to-alls), so
    // the MLP half of the layer's TP collectives does not run: of the dense
    // layer's two all-gather / reduce-scatter pairs (and SP re-gathers) only
    // the attention's remain (Megatron-Core MoELayer with the alltoall
    // dispatcher: no TP gather before the router when SP is on).
    lt.tp_comm_fwd_s *= 0.5;
    lt.tp_comm_bwd_s -= lt.tp_comm_bwd_mlp_s;
    lt.contention_bwd_s -= lt.tp_contention_bwd_mlp_s;
    lt.tp_comm_recompute_s *= 0.5;
    lt.tp_comm_bwd_mlp_s = lt.tp_contention_bwd_mlp_s = 0;
  }
  const MoeTokens tk = moe_tokens(model, pc, ts);
  const DType dt = ts.dtype;
  const double h = double(model.hidden_size), E = double(e.num_experts);
  const double f = double(e.expert_ffn_hidden_size) / double(pc.etp);
  const double f_in = (is_gated(model.ffn_kind) ? 2.0 : 1.0) * f;
  const double M = tk.rows_per_expert;
  const double stretch = 1.0 + straggler_slowdown(hw, ts.num_gpus);  // as layer_cost.cpp stretch_for_slowest_chip

  // Router: local x h by h x E (Megatron-Core TopKRouter; bf16 here, fp32
  // with --moe-router-dtype fp32); bwd: dgrad + wgrad.
  double gemm_fwd = gemm_time_s(hw, DType::bf16, tk.local, E, h);
  double gemm_bwd = gemm_time_s(hw, DType::bf16, tk.local, h, E) + gemm_time_s(hw, DType::bf16, h, E, tk.local);
  // Grouped expert GEMMs (grouped_gemm_time_s): the local experts' GEMMs with
  // M rows each (the rows an expert receives), four at a time as Transformer
  // Engine's grouped linear issues them; at a few hundred rows per expert each
  // runs at a fraction of peak (its weights read for few rows, the partly
  // filled waves), what drives fine-grained MoE to low MFU (moe.md §3.6,
  // SimuMax B200 grouped-GEMM table). FC1 h -> f_in, FC2 f -> h per ETP rank.
  if (M > 0) {
    const double x = tk.local_experts;
    gemm_fwd += grouped_gemm_time_s(hw, dt, x, M, f_in, h) + grouped_gemm_time_s(hw, dt, x, M, h, f);
    gemm_bwd += grouped_gemm_time_s(hw, dt, x, M, h, f_in) + grouped_gemm_time_s(hw, dt, x, h, f_in, M) +
                grouped_gemm_time_s(hw, dt, x, M, f, h) + grouped_gemm_time_s(hw, dt, x, f, h, M);
  }
  const double expert_flops = 2.0 * tk.local_experts * M * h * (f_in + f);
  // Permute (read + write the k copies), unpermute and weighted combine (read
  // the rows, write the tokens), the expert activation (gated: read 2f, write
  // f); backward 2x, as layer_cost.cpp's element-wise kernels.
  const double rows = tk.local_experts * M;
  const double ew_bytes = kAct * (2.0 * tk.a2a_rows * h + tk.a2a_rows * h + tk.local * h) +
                          kAct * rows * f * (is_gated(model.ffn_kind) ? 3.0 : 2.0);
  // Expert weight gradients accumulated per micro-batch, as add_grad_accumulate.
  const double expert_params = tk.local_experts * (is_gated(model.ffn_kind) ? 3.0 : 2.0) * h * f;
  const double accum_s = expert_params * (kAct + 2.0 * ts.grad_bytes_per_param) / hbm_bw(hw);
  // FP8 expert GEMMs, as layer_cost.cpp's elementwise_bytes: Transformer
  // Engine casts every forward GEMM input (the permuted rows into FC1, the
  // activation output into FC2) and every backward output gradient (FC2's
  // rows x h, FC1's rows x f_in) with its transpose, reading 2 bytes and
  // writing 1 + 1 (fp8_cast_transpose_fused; MXFP8 quantises rowwise and
  // columnwise alike, its 1-in-32 block scales not counted); the weights once
  // per step, not counted. DeepEP's fp8 dispatch casts before the all-to-all:
  // the same bytes on the local tokens, approximated as here.
  const double fp8_fwd = dt == DType::fp8 ? 4.0 * rows * (h + f) : 0.0;
  const double fp8_bwd = dt == DType::fp8 ? 4.0 * rows * (h + f_in) : 0.0;
  const double ew_fwd = (ew_bytes + fp8_fwd) / hbm_bw(hw), ew_bwd = (2.0 * ew_bytes + fp8_bwd) / hbm_bw(hw);
  const double routed_fwd = stretch * (gemm_fwd + ew_fwd);
  lt.gemm_fwd_s += stretch * gemm_fwd;
  lt.gemm_bwd_s += stretch * gemm_bwd;
  lt.elementwise_fwd_s += stretch * ew_fwd;
  lt.elementwise_bwd_s += stretch * ew_bwd;
  lt.grad_accumulate_s += stretch * accum_s;
  lt.straggler_s += (stretch - 1.0) * (gemm_fwd + ew_fwd + gemm_bwd + ew_bwd + accum_s);
  lt.gemm_flops_fwd += expert_flops + 2.0 * tk.local * E * h;
  if (ex)
    note_step(ex, "MoE router + expert GEMMs (fwd, per MoE layer)",
              "router (b*s/(cp*tp) x h x E) + E/ep experts x [FC1 (M x f_in x h) + FC2 (M x h x f)], M = "
              "local*k*etp*load/(E/ep); the experts' GEMMs in rounds of 4 concurrent (TE's 4 streams), each round "
              "(2K*tiles capacity + F_half)/(peak*clock*gemm_max), at least its bytes/HBM; bwd = dgrad + wgrad",
              "Megatron-Core moe/experts.py (TEGroupedMLP), router.py; Transformer Engine common/gemm/cublaslt_gemm.cu "
              "(multi_stream_cublas_gemm, 4 compute streams); grouped-GEMM efficiency by tokens per expert: moe.md "
              "§3.6 (SimuMax)",
              {{"tokens_local", tk.local},
               {"rows_per_expert", M},
               {"local_experts", tk.local_experts},
               {"load", tk.load},
               {"expert_ffn_local", f},
               {"flops", expert_flops},
               {"fp8_cast_bytes_fwd", fp8_fwd},
               {"fp8_cast_bytes_bwd", fp8_bwd}},
              stretch * gemm_fwd, "s");

  // The all-to-alls: exposed, or (--overlap-a2a) each micro-batch's hidden
  // behind another's computation, forward behind backward and backward
  // behind forward (Megatron-Core 1F1B EP A2A overlap,
  // --overlap-moe-expert-parallel-comm; DeepSeek-V3 DualPipe §3.2.1), slowing
  // it as any overlapped collective (contention.h). Here the steady state's
  // paired passes; a stage's warm-up forwards and cool-down backwards have no
  // partner and expose theirs (unpaired_chunk_passes, step_time.cpp and the
  // simulator).
  const MoeA2a a = moe_a2a(model, hw, pc, ts);
  lt.ep_comm_total_s = a.fwd_s() + a.bwd_s();
  lt.ep_comm_fwd_total_s = a.fwd_s();
  if (ts.overlap_a2a) {
    const ExpertGroups g = expert_groups(hw, pc);
    const double window_bwd = lt.compute_bwd_s(), window_fwd = lt.compute_fwd_s();
    lt.ep_comm_fwd_s = std::max(0.0, a.fwd_s() - window_bwd);
    lt.ep_comm_bwd_s = std::max(0.0, a.bwd_s() - window_fwd);
    lt.ep_contention_bwd_s = contention_s(hw, g.ep, Collective::all_to_all, a.dispatch, a.fwd_s() - lt.ep_comm_fwd_s,
                                          window_bwd, lt.memory_bound_bwd_s());
    lt.ep_contention_fwd_s = contention_s(hw, g.ep, Collective::all_to_all, a.dispatch, a.bwd_s() - lt.ep_comm_bwd_s,
                                          window_fwd, lt.memory_bound_fwd_s());
    lt.contention_bwd_s += lt.ep_contention_bwd_s;
    lt.contention_fwd_s += lt.ep_contention_fwd_s;
  } else {
    lt.ep_comm_fwd_s = a.fwd_s();
    lt.ep_comm_bwd_s = a.bwd_s();
  }
  // Full recomputation (Megatron-LM core_v0.19.0 transformer_block.py
  // _checkpointed_forward: each whole layer, token dispatcher included, under
  // tensor_parallel.checkpoint), or the moe module (moe_layer.py: the whole
  // MoE forward under tensor_parallel.checkpoint), re-runs the routed forward
  // and its dispatch and combine: 6 all-to-alls per layer, fwd 2, recomputed
  // fwd 2, bwd 2 (moe.md §3.4); Megatron refuses --overlap-a2a with either
  // (recompute_modules.h overlap_a2a_problem), so they are exposed. moe_act
  // re-runs the experts' activation (experts.py activation_checkpoint,
  // CheckpointWithoutOutput): read the FC1 output, write its output.
  const double recompute_before = lt.recompute_s;
  if (pc.recompute == Recompute::full || recomputes(pc, ts, RecomputeModule::moe)) {
    lt.recompute_s += routed_fwd + lt.ep_comm_fwd_s;
  } else if (recomputes(pc, ts, RecomputeModule::moe_act)) {
    const double act_bytes = kAct * rows * f * (is_gated(model.ffn_kind) ? 3.0 : 2.0);
    lt.recompute_s += stretch * act_bytes / hbm_bw(hw);
  }
  const double a2a_recomputed = recomputed_a2a_share(pc, ts);  // 1: the forward's two run again
  if (ex && pc.recompute == Recompute::full)
    note_step(ex, "MoE recompute per MoE layer (full recomputation)",
              "the routed part of the recomputed forward: router + expert GEMMs + permutes + dispatch and combine "
              "again, in the recompute line (6 all-to-alls per layer: fwd 2, recomputed fwd 2, bwd 2); the "
              "attention and shared experts are recomputed as a dense layer's forward",
              "Megatron-LM core_v0.19.0 transformer/transformer_block.py _checkpointed_forward (each layer, token "
              "dispatcher included, under tensor_parallel.checkpoint); moe.md §3.4",
              {{"routed_fwd_s", routed_fwd}, {"a2a_fwd_s", lt.ep_comm_fwd_s}}, lt.recompute_s - recompute_before, "s");
  else if (ex && (recomputes(pc, ts, RecomputeModule::moe) || recomputes(pc, ts, RecomputeModule::moe_act)))
    note_step(ex, "MoE recompute per MoE layer (Megatron --recompute-modules moe / moe_act)",
              "moe: router + expert GEMMs + permutes + dispatch and combine again (6 all-to-alls per layer: fwd 2, "
              "recomputed fwd 2, bwd 2); moe_act: the experts' activation, rows*f*(gated 3 | 2)*2 bytes / HBM",
              "Megatron-LM core_v0.19.0 moe/moe_layer.py (checkpointed MoE forward), moe/experts.py "
              "(activation_checkpoint); moe.md §3.4",
              {{"routed_fwd_s", routed_fwd}, {"a2a_fwd_s", lt.ep_comm_fwd_s}}, lt.recompute_s - recompute_before, "s");
  if (ex)
    note_step(ex, "MoE all-to-all (fwd: dispatch + combine, per MoE layer)",
              ts.a2a == A2aBackend::deepep
                  ? "DeepEP: latency + max(rows*h*bytes*(m-1)/p / NVLink, deduplicated remote rows*h*bytes / NIC), "
                    "rows = b*s/(cp*tp)*k*load; fp8 dispatch with --dtype fp8; bwd: the same two in bf16; a "
                    "recomputed forward's two (all_to_alls_per_layer 6) in the recompute line"
                  : "all-to-all of rows*h*bytes, rows = b*s/(cp*tp)*k*load, (m-1)/p over NVLink, (p-m)/p over the "
                    "NICs (collective_cost); bwd: the same two; [+ ETP all-gather + reduce-scatter of the rows]; a "
                    "recomputed forward's two (all_to_alls_per_layer 6) in the recompute line",
              ts.a2a == A2aBackend::deepep
                  ? "DeepEP docs/legacy.md (H800: 153 GB/s NVLink, 43-58 GB/s RDMA); moe.md §3.4, §4"
                  : "Megatron-Core MoEAlltoAllTokenDispatcher; Thakur et al. 2005 (pairwise exchange); moe.md §3.4",
              {{"ep", double(pc.ep)},
               {"etp", double(pc.etp)},
               {"dispatch_bytes", a.dispatch_bytes},
               {"ep_members_per_node", double(expert_groups(hw, pc).ep.members_per_domain)},
               {"ep_nodes", double(expert_groups(hw, pc).ep.domains)},
               {"all_to_alls_per_layer", 4.0 + 2.0 * a2a_recomputed},
               {"total_s", lt.ep_comm_total_s}},
              lt.ep_comm_fwd_s, "s");
  return lt;
}

LayerTime mean_moe_model_layer_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                                    const TrainingSpec& ts, Explain* ex, LayerTime* moe_out) {
  const MoeLayerCounts c = moe_layer_counts(model);
  const LayerTime moe = moe_layer_time(model, hw, pc, ts, ex);
  if (moe_out) *moe_out = moe;
  if (c.dense <= 0 || model.num_layers <= 0) return moe;
  const LayerTime dense = layer_time(dense_layer_model(model), hw, pc, ts);
  const double w = double(c.moe) / double(model.num_layers);
  const LayerTime mean = blend(dense, moe, w);
  if (ex)
    note_step(ex, "mean layer (dense and MoE layers)",
              "(dense * L_dense + MoE * L_moe) / L: the pipeline prices equal layers (approximation)",
              "Megatron-LM moe_layer_freq / first_k_dense (DeepSeek-V3 config); docs/cost_model.md Known gaps",
              {{"dense_layers", double(c.dense)},
               {"moe_layers", double(c.moe)},
               {"dense_layer_s", dense.total_s()},
               {"moe_layer_s", moe.total_s()}},
              mean.total_s(), "s");
  return mean;
}

LayerActivations mean_moe_model_layer_activations(const ModelSpec& model, const ParallelConfig& pc,
                                                   const TrainingSpec& ts, Explain* ex) {
  const MoeLayerCounts c = moe_layer_counts(model);
  LayerActivations moe = layer_activations(without_routed_experts(model), pc, moe_layer_dense_part(ts));
  const MoeTokens tk = moe_tokens(model, pc, ts);
  const double h = double(model.hidden_size);
  const double f = double(model.moe.expert_ffn_hidden_size) / double(pc.etp);
  const double rows = tk.local_experts * tk.rows_per_expert;
  // What Megatron-Core keeps per MoE layer (its theoretical_memory_usage.py
  // has no MoE term): the permuted tokens, FC1's input, saved for its weight
  // gradient (2 bytes per element of the k copies; replicated over ETP), and
  // the experts' FC1 output and activation output (sharded over ETP x EP);
  // plus the router's fp32 logits and the per-row probabilities. Not the
  // expert output: TEGroupedMLP multiplies the probabilities into the
  // activation (bias_act_func, weighted_bias_swiglu_impl) and the combine
  // unpermutes without them, so no input of the combine is saved
  // (Megatron-LM d98e8a6 megatron/core/transformer/moe/experts.py
  // TEGroupedMLP.forward, token_dispatcher.py MoEAlltoAllTokenDispatcher
  // unpermute(..., routing_map) without probs). On the busiest rank (load).
  // --recompute-modules: moe keeps the MoE layer's input only (the norm
  // output, counted with the dense part), moe_act drops the activation output
  // (recomputed from FC1's output).
  // FC1's and FC2's inputs (the permuted tokens, the activation output) are
  // kept as their FP8 copies under FP8 (layer_parts.h gemm_input_bytes).
  const double in = layer_detail::gemm_input_bytes(ts.dtype);
  const double act_out = in * rows * f;
  double routed = in * rows * h + kAct * rows * f * (is_gated(model.ffn_kind) ? 2.0 : 1.0) + act_out;
  routed += 4.0 * tk.local * double(model.moe.num_experts) + 4.0 * tk.a2a_rows;
  moe.full_layer_bytes += routed;
  if (pc.recompute != Recompute::full && !recomputes(pc, ts, RecomputeModule::moe))
    moe.stored_bytes += routed - (recomputes(pc, ts, RecomputeModule::moe_act) ? act_out : 0.0);
  moe.recompute_working_bytes = moe.full_layer_bytes - moe.stored_bytes;
  moe.moe_layer_bytes = moe.stored_bytes;
  LayerActivations out = moe;
  if (c.dense > 0 && model.num_layers > 0) {
    const LayerActivations dense = layer_activations(dense_layer_model(model), pc, ts);
    const double w = double(c.moe) / double(model.num_layers);
    out.stored_bytes = dense.stored_bytes * (1.0 - w) + moe.stored_bytes * w;
    out.full_layer_bytes = dense.full_layer_bytes * (1.0 - w) + moe.full_layer_bytes * w;
    out.attention_core_bytes = dense.attention_core_bytes * (1.0 - w) + moe.attention_core_bytes * w;
    // The layer being recomputed at the peak: the larger of the two kinds.
    out.recompute_working_bytes = std::max(dense.recompute_working_bytes, moe.recompute_working_bytes);
    out.dense_layer_bytes = dense.stored_bytes;
  }
  if (ex)
    note_step(ex, "activations per layer per micro-batch (mean of dense and MoE layers)",
              "MoE layer: attention + shared experts as a dense layer + 2*rows*h (permuted tokens, FC1 input) + "
              "2*rows*f*(gated 3 | 2) (expert intermediates) + 4*tokens*E (router logits), rows = "
              "b*s/(cp*tp)*k*etp*load",
              "Megatron-LM d98e8a6 moe/experts.py TEGroupedMLP (probs applied in the activation), "
              "token_dispatcher.py (unpermute without probs); moe.md §3.2",
              {{"routed_bytes", routed}, {"rows", rows}, {"moe_layer_bytes", moe.stored_bytes}}, out.stored_bytes,
              "bytes");
  return out;
}

}  // namespace planner
