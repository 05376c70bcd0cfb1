// The free-text words of measured-runs rows (row_words.h).
#include "validate/row_words.h"

#include <cctype>
#include <regex>
#include <vector>

#include "validate/row_text.h"

namespace planner::row_words {

using row_text::contains;
using row_text::lower;

std::optional<Recompute> parse_recompute(const std::string& s_in) {
  const std::string s = lower(s_in);
  if (s.rfind("full", 0) == 0) return Recompute::full;
  if (s.rfind("selective", 0) == 0) return Recompute::selective;
  if (s.rfind("none", 0) == 0 || s.rfind("no", 0) == 0 || s == "false") return Recompute::none;
  if (contains(s, "selective")) return Recompute::selective;
  if (contains(s, "full")) return Recompute::full;
  // MaxText remat_policy (maxtext-v0.2.4 src/maxtext/layers/decoders.py
  // Decoder.get_remat_policy): "minimal_with_context" (and its old name
  // "minimal_flash") saves everything, "minimal" everything but the
  // attention context: Megatron's attention-core recomputation.
  if (contains(s, "minimal_with_context") || contains(s, "minimal_flash")) return Recompute::none;
  if (contains(s, "minimal")) return Recompute::selective;
  if (contains(s, "disabled") || s == "off") return Recompute::none;
  if (s == "true" || s == "yes" || s == "on" || contains(s, "enabled")) return Recompute::full;
  return std::nullopt;
}

std::optional<int> parse_zero(const std::string& s_in) {
  const std::string s = lower(s_in);
  std::string q;
  for (char c : s)
    if (c != ' ' && c != '-' && c != '_' && c != '=') q.push_back(c);
  if (q.empty() || q.rfind("none", 0) == 0 || q == "no" || q == "false" || q == "0" || q.rfind("ddp", 0) == 0 ||
      contains(q, "noshard") || contains(q, "zero0") || contains(q, "zerostage0"))
    return 0;
  if (contains(q, "shardgradop") || contains(q, "zero2") || contains(q, "zerostage2")) return 2;
  if (contains(q, "zero3") || contains(q, "zerostage3") || contains(q, "fsdp") || contains(q, "hsdp") ||
      contains(q, "fullshard") || contains(q, "hybridshard"))
    return 3;
  if (contains(q, "zero1") || contains(q, "zerostage1") || contains(q, "distributedoptimizer") ||
      contains(q, "distributedfusedadam"))
    return 1;
  return std::nullopt;
}

bool shards_per_domain(const std::string& s_in) {
  std::string q;
  for (char c : lower(s_in))
    if (c != ' ' && c != '-' && c != '_' && c != '=') q.push_back(c);
  return contains(q, "hybridshard") ||
         (contains(q, "withinslice") && (contains(q, "dcn:data") || contains(q, "dataparallelacrossslices")));
}

bool affirms(const std::string& text, const std::string& word) {
  for (std::size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    const std::string before = text.substr(pos >= 8 ? pos - 8 : 0, pos >= 8 ? 8 : pos);
    if (before.size() >= 3 && before.compare(before.size() - 3, 3, "no ") == 0) continue;
    if (before.size() >= 8 && before == "without ") continue;
    return true;
  }
  return false;
}

int source_year(const std::string& source) {
  static const std::regex year(R"((?:^|[^0-9])((?:19|20)[0-9]{2})(?:[^0-9]|$))");
  std::smatch m;
  if (std::regex_search(source, m, year)) return std::stoi(m[1].str());
  return 0;
}

bool names(const std::string& text, const std::string& name) {
  // The words of `text` (lower-case letters and digits); `name` must start at
  // a word and may run over the following ones ("LLM Foundry", "llm-foundry").
  std::vector<std::string> words(1);
  for (unsigned char c : text) {
    if (std::isalnum(c))
      words.back().push_back(char(std::tolower(c)));
    else if (!words.back().empty())
      words.emplace_back();
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string run;
    for (std::size_t j = i; j < words.size() && run.size() < name.size(); ++j) run += words[j];
    if (run.compare(0, name.size(), name) == 0) return true;
  }
  return false;
}

SourceStack source_stack(const std::string& source, const std::string& other) {
  SourceStack st;
  st.torchtitan = names(source, "torchtitan");
  st.llm_foundry = names(source, "llmfoundry") || names(source, "mosaicml");
  st.nemo = names(source, "nemo") || names(source, "dgxcbenchmarking") || names(source, "dgxcloud");
  st.deepspeed = names(source, "deepspeed") || names(other, "deepspeed");
  st.maxtext = names(source, "maxtext");
  st.megatron_lm = (names(source, "megatronlm") || names(other, "megatronlm")) && !names(source, "megatronbridge") &&
                   !st.torchtitan && !st.llm_foundry && !st.nemo && !st.deepspeed && !st.maxtext;
  return st;
}

}  // namespace planner::row_words
