// How published runs count the FLOPs behind their TFLOP/s and MFU figures:
// the conventions of Narayanan et al. 2021, Korthikanti et al. 2022 and PaLM,
// recognised from a row's free text, and the FLOPs of one step under each.
#pragma once

#include <cstdint>
#include <string>

#include "planner/spec/specs.h"

namespace planner {

// How a row's TFLOP/s or MFU counts FLOPs (its `reported_flop_convention`).
enum class FlopConvention {
  none,           // times only
  narayanan_eq3,  // 96·B·s·l·h²·(1 + s/6h + V/16lh): includes the recompute forward (Narayanan et al. 2021 Eq. 3)
  korthikanti_eq7,  // 72·B·L·s·h²·(1 + s/6h + V/12hL): model FLOPs (Korthikanti et al. 2022 Eq. 7)
  palm,             // (6·N_matmul + 12·L·H·Q·T) per token (PaLM App. B; NeMo, MaxText)
  palm_mha,         // the same with K/V counted as full multi-head attention (NeMo's GPT formula ignores GQA)
  stated,           // the row states its FLOPs per sequence ("model_flops(GBS=1 -> 4.74E+14)")
  megatron,  // Megatron-LM num_floating_point_operations incl. MoE/MLA/MTP (FlopsPerToken::model; NVIDIA's tables)
  six_nd,    // C = 6·N·D, no attention term; N = every parameter a token uses (Hoffmann et al. 2022 §3)
  unknown,   // text not recognised: TFLOP/s and MFU cannot be compared
};

[[nodiscard]] const char* to_string(FlopConvention c);
// Recognises the convention from the row's free text (see docs/published_runs.md).
// A stated per-sequence FLOP count ("GBS=1 -> 4.74E+14") wins over a formula
// name and is returned in *stated_flops_per_sequence.
[[nodiscard]] FlopConvention parse_flop_convention(const std::string& text,
                                                   double* stated_flops_per_sequence = nullptr);

// FLOPs one training step counts under convention `c` (B sequences of length
// seq_len); 0 for none/unknown. `model` is the row's own architecture.
[[nodiscard]] double convention_flops_per_step(FlopConvention c, const ModelSpec& model, std::int64_t seq_len,
                                               std::int64_t global_batch_sequences,
                                               double stated_flops_per_sequence = 0);

}  // namespace planner
