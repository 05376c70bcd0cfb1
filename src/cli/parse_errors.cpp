#include "parse_errors.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "planner/io/catalog.h"

namespace planner::cli {

namespace {

// What other tools call some of our flags (Megatron-LM's argument names,
// spelled-out forms), mapped to ours; the spelled-out forms also match by
// their initials (tensor-parallel -> tp).
constexpr std::pair<const char*, const char*> kFlagSynonyms[] = {
    {"tensor-model-parallel-size", "tp"},
    {"tensor-parallel-size", "tp"},
    {"pipeline-model-parallel-size", "pp"},
    {"pipeline-parallel-size", "pp"},
    {"context-parallel-size", "cp"},
    {"data-parallel-size", "dp"},
    {"virtual-pipeline-model-parallel-size", "vpp"},
    {"micro-batch", "mbs"},
    {"global-batch-size", "global-batch"},
    {"seq-length", "seq-len"},
    {"sequence-length", "seq-len"},
    {"num-gpus", "gpus"},
    {"world-size", "gpus"},
    {"zero-stage", "zero"},
    {"recompute-granularity", "recompute"},
    {"activation-checkpointing", "recompute"},
};

// The flag of `cmd` an unknown --name most likely means: a synonym, its
// initials, or a close spelling; "" when none.
std::string closest_flag(const std::string& name, const std::vector<std::string>& flags) {
  auto known = [&flags](const std::string& f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
  for (const auto& [other, ours] : kFlagSynonyms)
    if (name == other && known(ours)) return ours;
  // --tp-size, --tensor-parallel-degree: our flag with a unit word after it.
  for (const std::string suffix : {"-size", "-degree"})
    if (name.size() > suffix.size() && name.ends_with(suffix))
      if (std::string bare = closest_flag(name.substr(0, name.size() - suffix.size()), flags); !bare.empty())
        return bare;
  std::string initials;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (i == 0 || name[i - 1] == '-') initials += name[i];
  if (name.find('-') != std::string::npos && known(initials)) return initials;
  return closest_name(name, flags);
}

// The subcommands argv names, outermost first: {planner, calibrate, fit} for
// `planner calibrate fit -m ...`.
std::vector<CLI::App*> command_chain(CLI::App& app, int argc, char** argv) {
  std::vector<CLI::App*> chain{&app};
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    const auto subs = chain.back()->get_subcommands([&word](CLI::App* s) { return s->get_name() == word; });
    if (subs.empty()) break;
    chain.push_back(subs.front());
  }
  return chain;
}

// "planner calibrate fit"
std::string command_name(const std::vector<CLI::App*>& chain) {
  std::string out = "planner";
  for (std::size_t i = 1; i < chain.size(); ++i) out += " " + chain[i]->get_name();
  return out;
}

std::vector<CLI::Option*> options_of(const std::vector<CLI::App*>& chain) {
  std::vector<CLI::Option*> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    for (CLI::Option* o : (*it)->get_options()) out.push_back(o);
  return out;
}

// The option CLI11 calls `name` ("--top", or a positional's "logs").
CLI::Option* option_named(const std::vector<CLI::App*>& chain, const std::string& name) {
  for (CLI::Option* o : options_of(chain))
    if (o->get_name() == name) return o;
  return nullptr;
}

// "--measurements (-m)": the long name with the short one typed instead.
std::string names_of(const CLI::Option& o) {
  const auto& shorts = o.get_snames();
  if (o.get_lnames().empty() || shorts.empty()) return o.get_name();
  return fmt::format("{} (-{})", o.get_name(), shorts.front());
}

// The type CLI11 gives an option (INT, FLOAT, TEXT, FILE, BOOLEAN), without
// its validators' descriptions.
std::string base_type(const CLI::Option& o) {
  const std::string t = o.get_type_name();
  return t.substr(0, t.find(':'));
}

// What a value of that type is, for "expected ...".
std::string expected_value(const std::string& type) {
  if (type == "INT") return "an integer";
  if (type == "UINT") return "a non-negative integer";
  if (type == "FLOAT") return "a number";
  if (type == "BOOLEAN") return "true or false";
  if (type == "FILE") return "a file name";
  return "a value";
}

std::string joined(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

// A decimal integer in 64 bits: "" when `v` is one (rewritten without '+'
// or leading zeros, so that CLI11's strtoll, base 0, reads it as decimal),
// else what is wrong with it. `range`: the words integer_range gave the
// option, for a value beyond 64 bits; "" when it has none.
std::string integer_problem(std::string& v, const std::string& range) {
  std::string digits = v;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.erase(0, 1);
  }
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return fmt::format("expected an integer, got '{}'", v);
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size() - 1));
  const std::string normal = (negative && digits != "0" ? "-" : "") + digits;
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(normal.data(), normal.data() + normal.size(), x);
  if (ec == std::errc::result_out_of_range || end != normal.data() + normal.size()) {
    if (!range.empty()) return fmt::format("expected {}, got {}", range, v);
    return fmt::format("expected a {} integer, got {}", negative ? "larger" : "smaller", v);
  }
  v = normal;
  return "";
}

std::string number_problem(const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0') return fmt::format("expected a number, got '{}'", v);
  if (!std::isfinite(x)) return fmt::format("expected a finite number, got '{}'", v);
  return "";
}

// What is wrong with the value `v` of an option of type `type` ("" when
// nothing); an integer is rewritten in plain decimal. `range`: as
// integer_problem.
std::string value_problem(const std::string& type, std::string& v, const std::string& range = "") {
  if (v.empty())
    return type == "FILE"
               ? "expected a file name, got an empty path"
               : fmt::format("expected {}, got ''", type == "TEXT" ? "a non-empty value" : expected_value(type));
  if (type == "INT" || type == "UINT") {
    if (std::string why = integer_problem(v, range); !why.empty()) return why;
    if (type == "UINT" && v[0] == '-') return fmt::format("expected a non-negative integer, got {}", v);
  }
  if (type == "FLOAT") return number_problem(v);
  return "";
}

// "unknown flag --x for planner cmd (did you mean --y?)" for the first --word
// after the subcommands that none of them has; "" when every flag is known
// (the parse failed for another reason).
std::string unknown_flag_hint(const std::vector<CLI::App*>& chain, int argc, char** argv) {
  std::vector<std::string> flags;
  for (const CLI::Option* o : options_of(chain))
    for (const std::string& n : o->get_lnames()) flags.push_back(n);
  const std::string cmd = command_name(chain);
  for (int i = int(chain.size()); i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 3 || a.rfind("--", 0) != 0) continue;
    a = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (std::find(flags.begin(), flags.end(), a) != flags.end()) continue;
    const std::string best = closest_flag(a, flags);
    return fmt::format("unknown flag --{} for {}{} ({} --help lists its flags)", a, cmd,
                       best.empty() ? "" : " (did you mean --" + best + "?)", cmd);
  }
  return "";
}

// CLI::IsMember's "--format: abc not in {table,json,csv}" as "--format:
// expected table, json or csv, got 'abc'"; other messages as they are.
std::string reworded_validation(const std::string& text) {
  const std::size_t colon = text.find(": ");
  if (colon == std::string::npos) return text;
  const std::string msg = text.substr(colon + 2);
  const std::size_t at = msg.rfind(" not in {");
  if (at == std::string::npos || msg.back() != '}') return text;
  std::string set = msg.substr(at + 9, msg.size() - at - 10);
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    const std::size_t comma = set.find(',', start);
    items.push_back(set.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::string choices;
  for (std::size_t i = 0; i < items.size(); ++i)
    choices += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return fmt::format("{}: expected {}, got '{}'", text.substr(0, colon), choices, msg.substr(0, at));
}

// The error's class (its get_name() is no use: an ExtrasError is named after
// its subcommand).
template <typename Kind>
bool is_a(const CLI::ParseError& e) {
  return dynamic_cast<const Kind*>(&e) != nullptr;
}

// The name of the value check integer_range adds, which add_value_checks
// then leaves as it is.
constexpr const char* kRangedValueCheck = "value check with range";

bool has_validator(CLI::Option& o, const std::string& name) {
  try {
    return o.get_validator(name) != nullptr;
  } catch (const CLI::OptionNotFound&) {
    return false;
  }
}

}  // namespace

CLI::Option* integer_range(CLI::Option* o, const std::string& expected) {
  // transform: before the option's own checks, as add_value_checks'.
  return o->transform(CLI::Validator(
      [o, expected](std::string& v) { return value_problem(base_type(*o), v, expected); }, "", kRangedValueCheck));
}

void add_value_checks(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_expected_min() == 0) continue;  // a flag
    if (has_validator(*o, kRangedValueCheck)) continue;  // integer_range's
    const std::string type = base_type(*o);
    // transform: before the option's own checks (IsMember), so that an empty
    // value is called empty.
    o->transform(CLI::Validator([type](std::string& v) { return value_problem(type, v); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add_value_checks(*sub);
}

std::string parse_error_message(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const std::vector<CLI::App*> chain = command_chain(app, argc, argv);
  const std::string cmd = command_name(chain);
  // planner calibrate fitt: the word after a command that takes subcommands
  // is none of them.
  const std::vector<CLI::App*> subcommands = chain.back()->get_subcommands([](CLI::App*) { return true; });
  std::vector<std::string> subs;
  for (const CLI::App* sub : subcommands) subs.push_back(sub->get_name());
  std::string sub_list;
  for (std::size_t i = 0; i < subs.size(); ++i)
    sub_list += (i == 0 ? "" : i + 1 == subs.size() ? " or " : ", ") + subs[i];
  if (chain.size() > 1 && !subs.empty() && int(chain.size()) < argc && argv[chain.size()][0] != '-') {
    const std::string word = argv[chain.size()];
    const std::string best = closest_name(word, subs);
    return fmt::format("unknown subcommand '{}' for {}{}; subcommands: {} ({} --help)", word, cmd,
                       best.empty() ? "" : " (did you mean '" + best + "'?)", sub_list, cmd);
  }
  // An unknown flag first: it explains what follows (its value read as an
  // extra argument, a required flag it misspells).
  if (chain.size() > 1)
    if (std::string hint = unknown_flag_hint(chain, argc, argv); !hint.empty()) return hint;
  const std::string text = e.what();
  // "NAME: ..." and "Could not convert: NAME = VALUE": the option CLI11 names.
  auto named_in_text = [&]() -> CLI::Option* {
    const std::string convert = "Could not convert: ";
    if (text.rfind(convert, 0) == 0)
      return option_named(chain, text.substr(convert.size(), text.find(" = ") - convert.size()));
    return option_named(chain, text.substr(0, text.find(':')));
  };
  if (is_a<CLI::ArgumentMismatch>(e)) {
    // --tp 4 --tp 8: more values than the option takes.
    for (CLI::Option* o : options_of(chain))
      if (o->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw && o->get_expected_min() > 0 &&
          o->count() > std::size_t(std::max(1, o->get_items_expected_max())))
        return fmt::format("{}: given {} ({}); give it once", o->get_name(),
                           o->count() == 2 ? std::string("twice") : fmt::format("{} times", o->count()),
                           joined(o->results()));
    // --tp as the last word: no value after it.
    if (const CLI::Option* o = named_in_text())
      return fmt::format("{}: expected {} after it, got nothing", o->get_name(), expected_value(base_type(*o)));
  }
  if (is_a<CLI::ConversionError>(e))
    if (const CLI::Option* o = named_in_text())
      return fmt::format("{}: expected {}, got '{}'", o->get_name(), expected_value(base_type(*o)),
                         joined(o->results()));
  if (is_a<CLI::ValidationError>(e)) return reworded_validation(text);
  if (is_a<CLI::RequiredError>(e)) {
    if (text.rfind("A subcommand", 0) == 0)
      return fmt::format("{} needs a subcommand: {} ({} --help)", cmd, sub_list, cmd);
    if (const CLI::Option* o = option_named(chain, text.substr(0, text.find(" is required")))) {
      if (o->get_lnames().empty() && o->get_snames().empty()) {  // a positional: planner list WHAT
        std::string upper = o->get_name();
        for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
        return fmt::format("{}: missing {} ({}; {} --help)", cmd, upper, o->get_description(), cmd);
      }
      return fmt::format("{} is required by {}: {}", names_of(*o), cmd, o->get_description());
    }
  }
  if (is_a<CLI::ExtrasError>(e) && text.find(": ") != std::string::npos) {
    // "The following arguments were not expected: b a": the words, in the
    // order they were typed.
    std::vector<std::string> words;
    for (std::size_t start = text.find(": ") + 2; start <= text.size();) {
      const std::size_t space = std::min(text.find(' ', start), text.size());
      words.push_back(text.substr(start, space - start));
      start = space + 1;
    }
    std::string extra;
    for (int i = int(chain.size()); i < argc; ++i)
      if (auto it = std::find(words.begin(), words.end(), argv[i]); it != words.end()) {
        extra += fmt::format("{}'{}'", extra.empty() ? "" : ", ", *it);
        words.erase(it);
      }
    if (!extra.empty() && words.empty())
      return fmt::format("unexpected argument{} {} for {} ({} --help)",
                         extra.find(", ") == std::string::npos ? "" : "s", extra, cmd, cmd);
  }
  return text;
}

}  // namespace planner::cli
