// The output layer, its loss and the multi-token-prediction modules on the
// last pipeline stage, and the embedding lookup on the first (layer_cost.h
// head_time).
#include <algorithm>

#include "model/layer_parts.h"
#include "planner/model/collectives.h"
#include "planner/model/gemm_cost.h"
#include "planner/model/layer_cost.h"
#include "planner/model/model_math.h"
#include "planner/model/moe_cost.h"
#include "planner/model/straggler.h"

namespace planner {

using namespace layer_detail;

namespace {

// Multi-token prediction (DeepSeek-V3 §2.2, arXiv:2412.19437; Megatron-Core
// multi_token_prediction.py): each module, on the last pipeline stage (as
// Megatron-LM theoretical_memory_usage.py places it), projects the
// concatenated [h; embedding] (2h -> h), runs one transformer layer (MoE when
// the model's last layer is) and the shared output layer and loss again.
// Its norms are left out (memory-bound, small).
void add_mtp(HeadTime& ht, const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc,
             const TrainingSpec& ts, const Dims& d, Explain* ex, const LayerTime* priced) {
  const double m = double(model.mtp_layers);
  // MoE when the model's last layer is (Megatron-LM theoretical_memory_usage.py
  // mtp_layer_is_moe = moe_layer_pattern[-1]; training.py counts its FLOPs so).
  const bool moe = is_moe_layer(model, model.num_layers - 1);
  LayerTime layer;
  if (priced && moe) {
    layer = *priced;
  } else if (moe) {
    layer = moe_layer_time(model, hw, pc, ts);
  } else {
    ModelSpec dense = architecture_of(model);
    dense.moe = MoeSpec{};
    layer = layer_time(dense, hw, pc, ts);
  }
  const double proj_fwd = gemm_time_s(hw, ts.dtype, d.n, d.h / d.t, 2.0 * d.h);
  const double proj_bwd = gemm_time_s(hw, ts.dtype, d.n, 2.0 * d.h, d.h / d.t) +
                          gemm_time_s(hw, ts.dtype, 2.0 * d.h, d.h / d.t, d.n);
  const double out_fwd = ht.output_fwd_s, out_bwd = ht.output_bwd_s;  // the shared head, priced above
  ht.output_fwd_s += m * (layer.fwd_s() + proj_fwd + out_fwd);
  ht.output_bwd_s += m * (layer.bwd_s() + proj_bwd + out_bwd);
  note_step(ex, "multi-token prediction (last stage, per micro-batch, fwd)",
            "mtp_layers x (one transformer layer + 2h->h projection + output layer and loss again)",
            "DeepSeek-V3 §2.2 (arXiv:2412.19437); Megatron-Core multi_token_prediction.py",
            {{"mtp_layers", m}, {"layer_fwd_s", layer.fwd_s()}, {"output_fwd_s", out_fwd}},
            m * (layer.fwd_s() + proj_fwd + out_fwd), "s");
}

}  // namespace

HeadTime head_time(const ModelSpec& model, const HardwareProfile& hw, const ParallelConfig& pc, const TrainingSpec& ts,
                   Explain* ex, const LayerTime* mtp_layer) {
  const Dims d = dims(model, pc, ts);
  HeadTime ht;
  const double V = double(model.vocab_size);
  // Vocabulary-parallel output projection: 2*n*h*V/t FLOPs, bwd 2x. The
  // logits then go through Megatron's unfused fp32 vocab-parallel cross-entropy
  // (megatron/core/tensor_parallel/cross_entropy.py), one memory-bound pass per
  // step, bytes per logit: forward upcast bf16->fp32 (r2 w4), max (r4),
  // subtract max (r4 w4), exp (r4 w4), sum (r4), normalise the saved softmax
  // (r4 w4) = 38; backward scale by the incoming gradient (r4 w4) and cast the
  // fp32 gradient to bf16 for the GEMMs (r4 w2) = 14. Fused cross-entropy
  // kernels need less: an upper estimate for older stacks and Megatron's
  // jit-fused variant (docs/cost_model.md). Transformer Engine's fused loss
  // (LossKernel::te; TE v2.10 transformer_engine/pytorch/triton/
  // cross_entropy.py) reads the bf16 logits twice in the forward (online
  // softmax, then the gradient) and writes the gradient in place (2 + 2 + 2),
  // and scales it by the incoming gradient in the backward (r2 w2) = 6 + 4.
  // flash-attn's (LossKernel::flash_attn; flash_attn/ops/triton/
  // cross_entropy.py) reads the bf16 logits once in the forward (r2; the
  // per-row log-sum-exp it keeps is negligible) and once more in the
  // backward, writing the scaled gradient into a new tensor (r2 w2) = 2 + 4.
  const double logits = d.n * V / d.t;
  const double Vt = V / d.t;
  const double loss_fwd_bytes = loss_kernel_bytes(ts.loss_kernel).fwd;
  const double loss_bwd_bytes = loss_kernel_bytes(ts.loss_kernel).bwd;
  // The output projection runs in bf16 under FP8 training: Megatron-Core
  // builds it as its own tensor_parallel.ColumnParallelLinear, outside
  // Transformer Engine's fp8_autocast (core_v0.19.0
  // megatron/core/models/gpt/gpt_model.py: TE's LM head only for the opt-in
  // MXFP8 `fp8_output_proj`, added in core_v0.18.0 for Blackwell), and
  // torchtitan's float8 configs filter it out (`filter_fqns = ["output"]`).
  const DType head_dt = DType::bf16;
  ht.output_fwd_s = gemm_time_s(hw, head_dt, d.n, Vt, d.h) + logits * loss_fwd_bytes / hbm_bw(hw);
  ht.output_bwd_s = gemm_time_s(hw, head_dt, d.n, d.h, Vt) + gemm_time_s(hw, head_dt, d.h, Vt, d.n) +
                    logits * loss_bwd_bytes / hbm_bw(hw);
  // The trainer's metric cross-entropies over the same logits, after the
  // micro-batch's backward (TrainingSpec::train_metric_losses): torch's
  // cross_entropy autocasts to float32 (PyTorch AMP op reference, "CUDA ops
  // that can autocast to float32": cross_entropy), so each is an fp32 copy of
  // the bf16 logits (r2 w4) and a log_softmax over it (r4 w4; the nll gather
  // reads one element a row) = 14 bytes a logit. Approximation: log_softmax
  // counted as one read and one write of the row (a lower bound: PyTorch's
  // blockwise softmax reads a row it cannot hold in shared memory up to three
  // times).
  constexpr double kMetricLossBytes = 2.0 + 4.0 + 4.0 + 4.0;
  const double metric_s = double(ts.train_metric_losses) * logits * kMetricLossBytes / hbm_bw(hw);
  ht.output_bwd_s += metric_s;
  if (pc.tp > 1) {
    // Vocab-parallel cross-entropy: all-reduces of max and sum-exp (n floats each).
    const GroupPlacement g = placement(hw, pc.tp, 1);
    ht.output_tp_comm_s = 2.0 * collective_cost(hw, g, Collective::all_reduce, 4.0 * d.n).total_s();
    if (!pc.sequence_parallel)  // embedding output all-reduce (no SP): n*h*2 bytes
      ht.output_tp_comm_s += collective_cost(hw, g, Collective::all_reduce, kAct * d.n * d.h).total_s();
  }
  // Embedding lookup: gather n rows of h (read + write), backward scatter-add.
  ht.embedding_fwd_s = 2.0 * kAct * d.n * d.h / hbm_bw(hw);
  ht.embedding_bwd_s = 2.0 * ht.embedding_fwd_s;
  const double k = 1.0 + straggler_slowdown(hw, ts.num_gpus);  // as stretch_for_slowest_chip
  for (double* x : {&ht.output_fwd_s, &ht.output_bwd_s, &ht.embedding_fwd_s, &ht.embedding_bwd_s}) *x *= k;
  if (model.mtp_layers > 0) add_mtp(ht, model, hw, pc, ts, d, ex, mtp_layer);
  if (ex)
    note_step(ex, "output layer (fwd)",
              "(2*n*h*V/t + F_half)/(peak*clock*gemm_max), in bf16 even under fp8, + 38 bytes * n*V/t / HBM (bwd: 14 "
              "bytes; TE fused loss: 6 and 4; flash-attn's: 2 and 4)",
              "Narayanan et al. 2021 Eq.3 (logit FLOPs); Megatron fp32 vocab-parallel cross-entropy, pass by pass; "
              "Megatron-Core core_v0.19.0 gpt_model.py (output layer outside TE's fp8_autocast); TE v2.10 "
              "pytorch/triton/cross_entropy.py; Dao-AILab/flash-attention flash_attn/ops/triton/cross_entropy.py",
              {{"tokens_per_gpu", d.n}, {"vocab", V}, {"tp", d.t}, {"loss_bytes_fwd", loss_fwd_bytes}}, ht.output_fwd_s,
              "s");
  if (ex && ts.train_metric_losses > 0)
    note_step(ex, "training metrics over the logits (last stage, per micro-batch)",
              "metric_losses x 14 bytes * n*V/t / HBM (fp32 copy of the logits + log_softmax, no gradient)",
              "mosaicml/composer composer/trainer/trainer.py _eval_train_metrics (after every micro-batch), "
              "composer/metrics/nlp.py LanguageCrossEntropy; PyTorch AMP op reference (cross_entropy autocasts to "
              "float32)",
              {{"metric_losses", double(ts.train_metric_losses)}, {"logits", logits}}, metric_s, "s");
  return ht;
}

}  // namespace planner
