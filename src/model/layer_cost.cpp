#include "planner/model/layer_cost.h"

#include <array>
#include <cstddef>

#include "model/layer_parts.h"
#include "planner/model/collectives.h"
#include "planner/model/contention.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/moe_cost.h"
#include "planner/model/selective_policy.h"
#include "planner/model/straggler.h"

namespace planner {

using namespace layer_detail;

// Declared in layer_parts.h (shared with layer_activations.cpp).
Dims layer_detail::dims(const ModelSpec& model, const ParallelConfig& pc, const TrainingSpec& ts) {
  Dims d{};
  d.b = double(pc.micro_batch_size);
  d.s = double(ts.seq_len);
  d.cp = double(pc.cp);
  d.s_local = d.s / d.cp;
  d.n = d.b * d.s_local;  // tokens of the micro-batch this GPU holds
  d.h = double(model.hidden_size);
  d.H = double(model.num_heads);
  d.KV = double(model.num_kv_heads);
  d.hd = double(model.head_dim);
  d.F = double(model.ffn_hidden_size);
  d.t = double(pc.tp);
  // Sequence parallelism splits the norm/dropout/residual regions over TP
  // (Korthikanti et al. 2022 §4.2.2); without it they are replicated.
  d.sp_div = pc.sequence_parallel ? d.t : 1.0;
  d.gated = is_gated(model.ffn_kind);
  d.dropout = model.dropout;
  d.rope = model.position == PositionKind::rope;
  if (model.is_mla()) {
    // MLA: every head has its own K and V after the up-projection; the core
    // multiplies Q.K over qk_nope + qk_rope dims and P.V over v dims, which the
    // head_dim-based terms below see as H KV heads of their mean width.
    const MlaSpec& a = model.mla;
    d.mla = true;
    d.q_lora = double(a.q_lora_rank);
    d.kv_lora = double(a.kv_lora_rank);
    d.qk_hd = double(a.qk_nope_head_dim);
    d.rope_hd = double(a.qk_rope_head_dim);
    d.v_hd = double(a.v_head_dim);
    d.KV = d.H;
    d.hd = (d.qk_hd + d.rope_hd + d.v_hd) / 2.0;
  }
  return d;
}

namespace {

// Output widths of the layer's column-parallel GEMMs per TP rank: Q, K+V and
// FFN-in (gate and up for GLU).
struct GemmWidths {
  double q_out, kv_out, ffn_in;
};

GemmWidths gemm_widths(const Dims& d) {
  return {d.H * d.hd / d.t, 2.0 * d.KV * d.hd / d.t, (d.gated ? 2.0 : 1.0) * d.F / d.t};
}

// --- GEMMs (forward): 2*M*N*K each. Shapes per TP rank (Megatron column/row
// parallel linear layers, Shoeybi et al. 2019).

void add_gemms(LayerTime& lt, const Dims& d, const GemmWidths& w, const HardwareProfile& hw, DType dt,
               GemmTimes& fwd_times, Explain* ex) {
  struct Gemm {
    double M, N, K;
    std::size_t slot;  // which of the QKV, O, FFN-in, FFN-out times it adds to
  };
  // At most 7 (MLA's five projections and the FFN's two), kept on the stack:
  // evaluate() prices a layer per configuration, a heap list each time showed
  // in its profile.
  std::array<Gemm, 7> gemms{};
  std::size_t count = 0;
  auto push = [&](const Gemm& g) { gemms[count++] = g; };
  if (!d.mla) {
    push({d.n, w.q_out + w.kv_out, d.h, 0});
    push({d.n, d.h, d.H * d.hd / d.t, 1});
  } else {
    // Multi-head latent attention (DeepSeek-V2 §2.1, arXiv:2405.04434;
    // Megatron-Core multi_latent_attention.py): the down-projections to the
    // query and KV latents (plus the shared RoPE key) are not split over TP,
    // the up-projections to H heads and the output projection are.
    const double qk = d.qk_hd + d.rope_hd;
    if (d.q_lora > 0)
      push({d.n, d.q_lora, d.h, 0}), push({d.n, d.H * qk / d.t, d.q_lora, 0});
    else
      push({d.n, d.H * qk / d.t, d.h, 0});
    push({d.n, d.kv_lora + d.rope_hd, d.h, 0});
    push({d.n, d.H * (d.qk_hd + d.v_hd) / d.t, d.kv_lora, 0});
    push({d.n, d.h, d.H * d.v_hd / d.t, 1});
  }
  push({d.n, w.ffn_in, d.h, 2});
  push({d.n, d.h, d.F / d.t, 3});
  fwd_times = {};
  for (std::size_t i = 0; i < count; ++i) {
    const Gemm& g = gemms[i];
    if (g.N <= 0 || g.K <= 0) continue;  // a MoE layer without shared experts has no dense FFN (moe_cost.cpp)
    lt.gemm_flops_fwd += 2.0 * g.M * g.N * g.K;
    const double t = gemm_time_s(hw, dt, g.M, g.N, g.K);
    fwd_times[g.slot] += t;
    lt.gemm_fwd_s += t;
    // Backward: input gradient (M x K output) and weight gradient (K x N
    // output, reduced over M), each the forward's FLOPs.
    lt.gemm_bwd_s += gemm_time_s(hw, dt, g.M, g.K, g.N) + gemm_time_s(hw, dt, g.K, g.N, g.M);
  }
  if (ex)
    note_step(ex, "layer GEMMs (fwd)",
              "sum over QKV, O, FFN-in, FFN-out of (2MNK/q + F_half)/(peak*clock*gemm_max), q = wave efficiency; "
              "bwd = dgrad + wgrad GEMMs",
              "Shoeybi et al. 2019 (Megatron TP shapes); Narayanan et al. 2021 §3 (bwd = 2x fwd); clock = the "
              "profile's sustained_clock_fraction (sustained vs burst cuBLAS GEMM under the power limit, one fraction "
              "for every shape and dtype: approximation)",
              {{"tokens_per_gpu", d.n},
               {"hidden", d.h},
               {"ffn", d.F},
               {"tp", d.t},
               {"flops", lt.gemm_flops_fwd},
               {"clock", hw.efficiency.sustained_clock_fraction}},
              lt.gemm_fwd_s, "s");
}

// --- Attention core: QK^T and AV, 4*b*(H/t)*s_local*s*hd FLOPs forward.
void add_attention_core(LayerTime& lt, const Dims& d, const HardwareProfile& hw, AttentionKernel kernel, Explain* ex) {
  const double heads_local = d.H / d.t;
  const double scores = d.b * heads_local * d.s_local * d.s;  // score elements per GPU
  if (is_fused(kernel)) {
    // Flash attention skips fully masked blocks (causal: half the scores) and
    // recomputes QK^T in the backward: bwd = 2.5x fwd FLOPs (Dao 2023,
    // FlashAttention-2 §3.1). Runs in bf16 in common stacks even for fp8
    // training (Transformer Engine default).
    //
    // Each kernel call walks, per query tile, a key/value length L; a fixed
    // cost per tile (loading Q, writing O, the softmax epilogue) is amortised
    // over it: efficiency attention_max * L / (L + attention_half_tokens), the
    // form FA3's forward throughput follows from 512 to 16K tokens
    // (pytorch/benchmark#2391, hardware profile sources). Causal: L = s/2 on
    // average. Ring attention under CP (Transformer Engine
    // AttnFuncWithCPAndKVP2P) calls one kernel per ring step on the rank's
    // two s/(2cp) chunks: L = s/(2cp). The same curve is assumed for the
    // backward kernel (an approximation).
    lt.attention_flops_fwd = 4.0 * scores * d.hd * 0.5;
    const double L = d.s / (2.0 * d.cp), Lh = hw.efficiency.attention_half_tokens;
    const double length_eff = Lh > 0 ? L / (L + Lh) : 1.0;
    //
    // FlashAttention-2 (kernel flash2, PyTorch SDPA's flash backend) on a chip
    // whose attention_max is a newer kernel's runs at the profile's
    // flash2_attention_max instead: on H100, FA2 forward 329 TFLOP/s against
    // cuDNN 631 / FA3 632 at (1, 24, 4608, 128) (pytorch/pytorch#142132,
    // nightly 2.6.0.dev20241204); "FlashAttention-2 achieving only 35%
    // utilization on the H100" (Shah et al. 2024, arXiv 2407.08608).
    const double fused_max = kernel == AttentionKernel::flash2 && hw.efficiency.flash2_attention_max > 0
                                 ? hw.efficiency.flash2_attention_max
                                 : hw.efficiency.attention_max[std::size_t(DType::bf16)];
    const double rate = sustained_peak(hw, DType::bf16) * fused_max * length_eff;
    lt.attention_fwd_s = lt.attention_flops_fwd / rate;
    lt.attention_bwd_s = 2.5 * lt.attention_flops_fwd / rate;
  } else {
    // Unfused (Megatron 2021-22): batched GEMMs over the full s x s scores,
    // plus scale-mask-softmax (+dropout) kernels over the score matrix.
    lt.attention_flops_fwd = 4.0 * scores * d.hd;
    const double rate = sustained_peak(hw, DType::bf16) * hw.efficiency.unfused_attention_max;
    const double softmax_bytes = scores * (2.0 * kAct + (d.dropout ? 2.0 * kAct + 1.0 : 0.0));
    lt.attention_fwd_s = lt.attention_flops_fwd / rate + softmax_bytes / hbm_bw(hw);
    lt.attention_bwd_s = 2.0 * lt.attention_fwd_s;
  }
  if (ex)
    note_step(ex, "attention core (fwd)",
              kernel == AttentionKernel::flash
                  ? "4*b*(H/t)*s_local*s*hd*0.5 / (peak*clock*attention_max*L/(L+L_half)), L = s/(2*cp); bwd 2.5x"
              : is_fused(kernel) ? "4*b*(H/t)*s_local*s*hd*0.5 / (peak*clock*flash2_attention_max*L/(L+L_half)), L = "
                                   "s/(2*cp); bwd 2.5x (FlashAttention-2)"
                                 : "4*b*(H/t)*s_local*s*hd / (peak*clock*unfused_max) + softmax bytes/HBM; bwd 2x",
              "PaLM App. B (attention FLOPs); Dao 2023 (FlashAttention-2); length curve: pytorch/benchmark#2391 (FA3); "
              "FA2 on Hopper: pytorch/pytorch#142132, Shah et al. 2024",
              {{"score_elements", scores},
               {"head_dim", d.hd},
               {"flops", lt.attention_flops_fwd},
               {"kv_length_per_call", d.s / (2.0 * d.cp)},
               {"half_tokens", hw.efficiency.attention_half_tokens}},
              lt.attention_fwd_s, "s");
}

// HBM bytes of the layer's memory-bound kernels per micro-batch.
struct ElementwiseBytes {
  double kernels = 0;  // norms, residual/dropout, activation, RoPE (forward; incl. eager below)
  double eager = 0;    // of which: eager PyTorch's extra passes (TrainingSpec::eager_elementwise)
  double fp8_fwd = 0;  // fp8 cast/transpose of the forward GEMM inputs
  double fp8_bwd = 0;  // fp8 cast/transpose of the backward output gradients
};

// --- Eager PyTorch (torchtitan without torch.compile): forward bytes beyond
// the fused kernels below, from torchtitan's Llama code (models/llama3/model/
// model.py at v0.2.2; models/llama/model.py at 504e7641d, April 2024): RoPE
// via xq.float(), a complex multiply and type_as (20 bytes per Q/K element
// where a fused kernel moves 4: +16); the attention output's .contiguous()
// copy (+4); SiLU and the gate multiply as two kernels (10 bytes per FFN
// element, fused 6: +4). Backward 2x. Not counted: norms, repeat_kv (2024),
// kernel launch time (docs/cost_model.md, Known gaps).
// Composite RMSNorm (TrainingSpec::eager_composite_rmsnorm): x.float() (read
// 2, write 4), pow(2) (4 + 4), mean (4), x * rsqrt (4 + 4), type_as (4 + 2),
// * weight (2 + 2) = 36 bytes per element where a fused norm moves 4: +32 for
// each of the layer's two norms (torchtitan models/norms.py RMSNorm at 9dec370;
// the same ops as ATen's composite rms_norm before pytorch/pytorch#153666).
double eager_extra_bytes(const Dims& d, bool composite_rmsnorm) {
  double extra = 0;
  if (composite_rmsnorm) extra += 2.0 * 32.0 * d.n * d.h / d.sp_div;
  if (d.rope) extra += 16.0 * d.n * (d.H + d.KV) * d.hd / d.t;
  extra += 4.0 * d.n * d.H * d.hd / d.t;
  if (d.gated) extra += 4.0 * d.n * d.F / d.t;
  return extra;
}

// --- Element-wise kernels (memory bound): bytes read + written per element.
// Two norms (read+write), two residual adds (read 2, write 1; fused bias-
// dropout-add also writes a 1-byte mask), the FFN activation (gated: read 2F
// write F), RoPE on Q and K. Backward assumed 2x forward bytes (reads the
// saved input and the incoming gradient, writes a gradient): an approximation.
ElementwiseBytes elementwise_bytes(const Dims& d, const GemmWidths& w, DType dt, bool eager, bool composite_rmsnorm) {
  ElementwiseBytes eb;
  const double nh_local = d.n * d.h / d.sp_div;
  double ew_bytes = 2.0 * 2.0 * kAct * nh_local;
  ew_bytes += 2.0 * (3.0 * kAct + (d.dropout ? 1.0 : 0.0)) * nh_local;
  ew_bytes += kAct * d.n * d.F / d.t * (d.gated ? 3.0 : 2.0);
  if (d.rope) ew_bytes += 2.0 * kAct * d.n * (d.H + d.KV) * d.hd / d.t;
  eb.eager = eager ? eager_extra_bytes(d, composite_rmsnorm) : 0.0;
  eb.kernels = ew_bytes + eb.eager;
  // FP8 GEMMs (Transformer Engine, delayed scaling): every GEMM input of the
  // forward pass and every output gradient of the backward pass goes through a
  // fused cast + transpose + amax kernel (fp8_cast_transpose_fused): read the
  // bf16 tensor (2 bytes), write the fp8 copy and its fp8 transpose (1 + 1).
  // Weights are cast once per step (cached across micro-batches): not counted.
  // Inputs of QKV and FFN-in are cast on the (SP-sharded) norm output.
  if (dt == DType::fp8) {
    eb.fp8_fwd = 4.0 * (2.0 * nh_local + d.n * d.H * d.hd / d.t + d.n * d.F / d.t);
    eb.fp8_bwd = 4.0 * d.n * (w.q_out + w.kv_out + d.h + w.ffn_in + d.h);
  }
  return eb;
}

// --- Context parallelism's own memory-bound passes (cp > 1). Transformer
// Engine's ring attention (context_parallel.py, AttnFuncWithCPAndKVP2P) runs one
// attention kernel per ring step and merges their partial outputs: "fwd output
// correction: out in torch.float32", each step's bf16 output read (2 bytes)
// into an fp32 accumulator read and written (4 + 4), then cast back to bf16
// (read 4, write 2); the backward accumulates dQ the same way over the steps
// and dK/dV (KV-sized) as they travel the ring. Per step 10 bytes per element
// of the accumulated tensor; the log-sum-exp rows are negligible. An
// approximation (docs/cost_model.md, Known gaps); the per-step kernels' shorter
// blocks are priced in add_attention_core.
// The ring's send buffer is a copy of K and V (fwd torch.cat, bwd copy_ into
// p2p_comm_buffers; TE v2.8), 2 + 2 bytes per element; the off-diagonal steps'
// half-chunk .contiguous() copies are no-ops in Megatron's sbhd layout.
struct CpCorrectionBytes {
  double fwd = 0, bwd = 0;
};
CpCorrectionBytes cp_correction_bytes(const Dims& d) {
  CpCorrectionBytes c;
  if (d.cp <= 1) return c;
  const double out = d.n * d.H * d.hd / d.t;       // attention output (and dQ) elements per GPU
  const double kv = 2.0 * d.n * d.KV * d.hd / d.t;  // K + V (and dK + dV) elements
  const double send_buffer = 2.0 * kAct * kv;      // the K/V copy into the ring's send buffer
  c.fwd = (10.0 * d.cp + 6.0) * out + send_buffer;
  c.bwd = (10.0 * d.cp + 6.0) * out + 10.0 * d.cp * kv + send_buffer;
  return c;
}

// --- Varlen attention around padded tensors (TrainingSpec::
// attention_varlen_unpad): llm-foundry's MPT (llmfoundry/models/layers/
// attention.py flash_attn_fn at 5e85bd62d) always packs Q, K and V with
// flash-attn's bert_padding.unpad_input (a row gather, index_first_axis:
// read 2 + write 2 bytes per element) for flash_attn_varlen_func and scatters
// the output back with pad_input (a zero fill, 2, and an index_put, 2 + 2).
// The backward runs the transposes: each of dQ, dK, dV scattered into zeros
// (2 + 2 + 2) and the output gradient gathered (2 + 2). Forward 4 B per Q/K/V
// element + 6 B per output element; backward 6 B + 4 B.
struct UnpadBytes {
  double fwd = 0, bwd = 0;
};
UnpadBytes varlen_unpad_bytes(const Dims& d, bool unpad) {
  UnpadBytes u;
  if (!unpad) return u;
  const double qkv = d.n * (d.H + 2.0 * d.KV) * d.hd / d.t, out = d.n * d.H * d.hd / d.t;
  u.fwd = 4.0 * qkv + 6.0 * out;
  u.bwd = 6.0 * qkv + 4.0 * out;
  return u;
}

void note_elementwise(Explain* ex, const ElementwiseBytes& eb, const HardwareProfile& hw, double elementwise_fwd_s) {
  note_step(ex, "element-wise kernels (fwd)",
            "bytes(norms, residual/dropout, activation, RoPE [+ eager PyTorch: RoPE in fp32 complex +16, output "
            "copy +4, SiLU and multiply apart +4 bytes per element; composite RMSNorm before torch 2.9 +32 per norm "
            "element] [+ fp8 cast/transpose of GEMM inputs]) / (HBM bw * hbm_efficiency); bwd 2x [+ fp8 "
            "cast/transpose of output gradients]",
            "roofline (Williams et al. 2009); tensor sizes from Korthikanti et al. 2022 §4; Transformer Engine "
            "fp8_cast_transpose_fused; torchtitan v0.2.2 models/llama3/model/model.py (eager); torchtitan "
            "models/norms.py @9dec370, pytorch/pytorch#153666 (composite RMSNorm)",
            {{"bytes", eb.kernels},
             {"eager_pytorch_extra_bytes", eb.eager},
             {"fp8_cast_bytes_fwd", eb.fp8_fwd},
             {"fp8_cast_bytes_bwd", eb.fp8_bwd},
             {"hbm_bytes_per_s", hbm_bw(hw)}},
            elementwise_fwd_s, "s");
}

// Gradient accumulation across micro-batches: each micro-batch's bf16
// weight gradient is added into the accumulator (Megatron: fp32 main_grad):
// read 2 + read and write grad_bytes per local parameter. Memory bound.
void add_grad_accumulate(LayerTime& lt, const ModelSpec& model, const Dims& d, const HardwareProfile& hw,
                         const TrainingSpec& ts, Explain* ex) {
  const double layer_params = double(count_params(model).per_layer) / d.t;
  const double accum_bytes = layer_params * (kAct + 2.0 * ts.grad_bytes_per_param);
  lt.grad_accumulate_s = accum_bytes / hbm_bw(hw);
  if (ex)
    note_step(ex, "gradient accumulation (per layer, per micro-batch)",
              "params/t * (2 + 2*grad_bytes) / (HBM bw * hbm_efficiency)",
              "Megatron-LM main_grad accumulation (fp32 when grad_bytes = 4)",
              {{"params_local", layer_params}, {"bytes", accum_bytes}}, lt.grad_accumulate_s, "s");
}

// --- The slowest of the step's GPUs paces every synchronous collective, so
// each kernel runs at its speed: (1 + sigma * E[max of N normals])
// (straggler.h; Sinha et al. 2022, SC'22). Before TP/CP, whose overlap rules
// compare against these kernel times.
void stretch_for_slowest_chip(LayerTime& lt, const HardwareProfile& hw, const TrainingSpec& ts, Explain* ex) {
  const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);
  if (k == 1.0) return;
  const double before = lt.compute_fwd_s() + lt.compute_bwd_s();
  for (double* x : {&lt.gemm_fwd_s, &lt.attention_fwd_s, &lt.elementwise_fwd_s, &lt.gemm_bwd_s, &lt.attention_bwd_s,
                    &lt.elementwise_bwd_s, &lt.grad_accumulate_s})
    *x *= k;
  lt.straggler_s = lt.compute_fwd_s() + lt.compute_bwd_s() - before;
  if (ex)
    note_step(ex, "slowest of N chips (per layer, fwd + bwd)",
              "kernels * sigma * E[max of N standard normals] (Blom), sigma = chip_speed_sigma",
              "Sinha et al. 2022, Not All GPUs Are Created Equal (SC'22, arXiv:2208.11035); Blom 1958",
              {{"gpus", double(ts.num_gpus)},
               {"sigma", hw.efficiency.chip_speed_sigma},
               {"slowdown", k - 1.0}},
              lt.straggler_s, "s");
}

// --- Recomputation: full re-runs the forward (and its CP traffic; its TP
// traffic is tp_comm_recompute_s); Megatron's selective re-runs its modules
// (add_module_recompute, recompute_modules.cpp). torchtitan's policies:
// op_sac_recompute_s below; every N-th layer: every_nth_layer_time. Needs the
// forward terms set.
double recompute_s(const LayerTime& lt, Recompute recompute, AttentionKernel) {
  if (recompute == Recompute::full) return lt.compute_fwd_s() + lt.cp_comm_fwd_s + lt.contention_fwd_s;
  return 0.0;
}

}  // namespace

LayerTime layer_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
                     const TrainingSpec& ts, Explain* ex) {
  if (pc.recompute == Recompute::selective && ts.selective == SelectivePolicy::torchtitan_every_nth_layer)
    return every_nth_layer_time(model, hw, pc, ts, ex);
  // MoE models: the mean of a dense and a MoE layer (moe_cost.h), each priced
  // below as a dense layer plus the routed experts.
  if (model.is_moe()) return mean_moe_model_layer_time(model, hw, pc, ts, ex);
  const Dims d = dims(model, pc, ts);
  const GemmWidths w = gemm_widths(d);
  LayerTime lt;
  GemmTimes fwd_gemm{};
  add_gemms(lt, d, w, hw, ts.dtype, fwd_gemm, ex);
  add_attention_core(lt, d, hw, ts.attention, ex);
  const ElementwiseBytes eb = elementwise_bytes(d, w, ts.dtype, ts.eager_elementwise,
                                                ts.eager_composite_rmsnorm && model.norm == NormKind::rmsnorm);
  const CpCorrectionBytes cpc = cp_correction_bytes(d);
  const UnpadBytes unpad = varlen_unpad_bytes(d, ts.attention_varlen_unpad && is_fused(ts.attention));
  lt.elementwise_fwd_s = (eb.kernels + eb.fp8_fwd + cpc.fwd + unpad.fwd) / hbm_bw(hw);
  lt.elementwise_bwd_s = (2.0 * eb.kernels + eb.fp8_bwd + cpc.bwd + unpad.bwd) / hbm_bw(hw);
  if (ex && unpad.fwd > 0)
    note_step(ex, "varlen attention unpad / re-pad (fwd)",
              "4 B * Q/K/V elements (bert_padding.unpad_input gathers) + 6 B * output elements (pad_input: zero "
              "fill + index_put); bwd 6 B * Q/K/V + 4 B * output",
              "mosaicml/llm-foundry@5e85bd62d llmfoundry/models/layers/attention.py flash_attn_fn; flash-attn "
              "flash_attn/bert_padding.py",
              {{"fwd_bytes", unpad.fwd}, {"bwd_bytes", unpad.bwd}}, unpad.fwd / hbm_bw(hw), "s");
  if (ex && cpc.fwd > 0)
    note_step(ex, "CP output correction (fwd)",
              "(10cp + 6) B * b*s/cp*H*hd/t (fp32 merge of the ring steps' outputs) + 4 B * K/V elements (send "
              "buffer copy); bwd the same for dQ + 10cp B * dK/dV elements",
              "Transformer Engine v2.8 context_parallel.py AttnFuncWithCPAndKVP2P (out in fp32, p2p_comm_buffers)",
              {{"fwd_bytes", cpc.fwd}, {"bwd_bytes", cpc.bwd}, {"cp", d.cp}}, cpc.fwd / hbm_bw(hw), "s");
  add_grad_accumulate(lt, model, d, hw, ts, ex);
  if (ex) note_elementwise(ex, eb, hw, lt.elementwise_fwd_s);  // after accumulation: the --explain order
  stretch_for_slowest_chip(lt, hw, ts, ex);
  if (pc.tp > 1) add_tp_comm(lt, d, hw, pc, ts, fwd_gemm, ex);
  if (pc.cp > 1) add_cp_exchange(lt, d, hw, pc, ex);
  lt.recompute_s = recompute_s(lt, pc.recompute, ts.attention);
  if (pc.recompute == Recompute::selective && ts.selective == SelectivePolicy::torchtitan_op)
    add_op_sac_recompute(lt, model, hw, pc, ts, d.n, ex);
  if (pc.recompute == Recompute::selective && ts.selective == SelectivePolicy::megatron_attention)
    add_module_recompute(lt, d, hw, pc, ts, ex);
  return lt;
}

}  // namespace planner
