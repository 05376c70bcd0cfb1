// FLOP conventions of published runs (include/planner/validate/flop_convention.h).
#include "planner/validate/flop_convention.h"

#include "validate/row_text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "planner/model/model_math.h"

namespace planner {

using row_text::contains;
using row_text::lower;

const char* to_string(FlopConvention c) {
  switch (c) {
    case FlopConvention::none:
      return "none";
    case FlopConvention::narayanan_eq3:
      return "narayanan_eq3";
    case FlopConvention::korthikanti_eq7:
      return "korthikanti_eq7";
    case FlopConvention::palm:
      return "palm";
    case FlopConvention::palm_mha:
      return "palm_mha";
    case FlopConvention::stated:
      return "stated";
    case FlopConvention::megatron:
      return "megatron";
    case FlopConvention::six_nd:
      return "six_nd";
    case FlopConvention::unknown:
      return "unknown";
  }
  return "unknown";
}

FlopConvention parse_flop_convention(const std::string& text_in, double* stated_flops_per_sequence) {
  const std::string s = lower(text_in);
  if (s.empty() || s.rfind("n/a", 0) == 0) return FlopConvention::none;
  static const std::regex stated(R"(gbs\s*=\s*1\s*->\s*([0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?))");
  std::smatch m;
  if (std::regex_search(s, m, stated)) {
    const double f = std::stod(m[1].str());
    if (std::isfinite(f) && f > 0) {
      if (stated_flops_per_sequence) *stated_flops_per_sequence = f;
      return FlopConvention::stated;
    }
  }
  // Spacing and multiplication signs vary ("Eq. (3)", "6 * N * D", "6·N·D"):
  // match on the text without them.
  std::string q;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ' || s[i] == '*') continue;
    if (s.compare(i, 2, "\xc2\xb7") == 0 || s.compare(i, 2, "\xc3\x97") == 0) {  // '·', '×'
      ++i;
      continue;
    }
    q.push_back(s[i]);
  }
  static const std::regex eq3(R"((?:eq|equation)\.?\s*\(?\s*3(?![0-9]))"),
      eq7(R"((?:eq|equation)\.?\s*\(?\s*7(?![0-9]))");
  if (std::regex_search(s, eq3) || contains(q, "96b") || contains(s, "narayanan")) return FlopConvention::narayanan_eq3;
  if (std::regex_search(s, eq7) || contains(q, "72b") || contains(s, "korthikanti"))
    return FlopConvention::korthikanti_eq7;
  if (contains(s, "ignores gqa")) return FlopConvention::palm_mha;
  if (contains(s, "num_floating_point_operations") || (contains(s, "megatron") && contains(s, "flop")))
    return FlopConvention::megatron;
  // C = 6ND without an attention term (no "12", "attention", "palm").
  if ((contains(q, "6nd") || contains(q, "6ntokens") || contains(q, "6paramstokens") ||
       contains(q, "6n_paramstokens")) &&
      !contains(q, "12") && !contains(q, "+") && !contains(s, "attention") && !contains(s, "palm"))
    return FlopConvention::six_nd;
  if (contains(s, "palm") || contains(q, "6n") || contains(s, "model_flops") || contains(s, "12*l*h*s") ||
      contains(s, "12*h*l"))
    return FlopConvention::palm;
  return FlopConvention::unknown;
}

double convention_flops_per_step(FlopConvention c, const ModelSpec& model, std::int64_t seq_len,
                                 std::int64_t global_batch_sequences, double stated_flops_per_sequence) {
  const double B = double(global_batch_sequences), s = double(seq_len), L = double(model.num_layers),
               h = double(model.hidden_size), V = double(model.vocab_size);
  switch (c) {
    case FlopConvention::narayanan_eq3:  // Narayanan et al. 2021, Eq. 3
      return 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
    case FlopConvention::korthikanti_eq7:  // Korthikanti et al. 2022, Eq. 7
      return 72 * B * L * s * h * h * (1 + s / (6 * h) + V / (12 * h * L));
    case FlopConvention::palm:  // Chowdhery et al. 2022 App. B: 6N + 12·L·H·Q·T per token
      return flops_per_token(model, seq_len, Recompute::none).palm * B * s;
    case FlopConvention::palm_mha: {  // NeMo's GPT formula: K/V projections as wide as Q
      ModelSpec mha = model;
      mha.num_kv_heads = model.num_heads;
      return flops_per_token(mha, seq_len, Recompute::none).palm * B * s;
    }
    case FlopConvention::stated:
      return stated_flops_per_sequence * B;
    case FlopConvention::megatron:  // Megatron-LM training.py num_floating_point_operations (model_math.h)
      return flops_per_token(model, seq_len, Recompute::none).model * B * s;
    case FlopConvention::six_nd:  // Hoffmann et al. 2022 §3 (C ~ 6ND): every parameter a token uses, embeddings too
      return 6.0 * double(count_params(model).active) * B * s;
    case FlopConvention::none:
    case FlopConvention::unknown:
      return 0;
  }
  return 0;
}

}  // namespace planner
