// planner import-hf CONFIG.json [-o MODEL.json]: a Hugging Face config.json as
// a planner model file (io/hf_import.h), written atomically; its parameter
// count (model/model_math.h) on stderr.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "config_flags.h"
#include "parse_errors.h"
#include "planner/io/atomic_write.h"
#include "planner/io/hf_import.h"
#include "planner/io/json_io.h"
#include "planner/model/model_math.h"
#include "planner/spec/input_error.h"
#include "planner/spec/limits.h"

namespace planner::cli {

namespace {

struct ImportFlags {
  std::string config;
  std::string output;
  HfImportOptions options;
  bool seq_len_given = false;  // --seq-len on the command line (0 in options means "from the config")
};

int run(const ImportFlags& f) {
  if (f.seq_len_given && f.options.seq_len < 1)
    throw InputError("--seq-len", fmt::format("expected a positive integer, got {}", f.options.seq_len));
  if (f.options.global_batch_tokens < 1)
    throw InputError("--global-batch-tokens",
                     fmt::format("expected a positive integer, got {}", f.options.global_batch_tokens));
  const ModelSpec model = model_from_hf_config(read_json_file(f.config), f.config, f.options);
  const nlohmann::json j = to_json(model);
  // The file must read back as the same model: a field this build cannot yet
  // write (or a size beyond limits.h) is an error, not a silently different model.
  if (model_from_json(j, f.output.empty() ? "<output>" : f.output) != model)
    throw InputError(f.config,
                     "the model file would not read back as this model (a field the model file cannot "
                     "hold); nothing written");
  const std::string text = j.dump(2) + "\n";
  const ParamCounts p = count_params(model);
  if (f.output.empty() || f.output == "-") {
    std::cout << text;
  } else {
    write_file_atomically(f.output, text);
    std::cerr << fmt::format("planner: wrote {} ({}: {} parameters{})\n", f.output, model.name, p.total,
                             model.is_moe() ? fmt::format(", {} active", p.active) : "");
  }
  return 0;
}

}  // namespace

Runner add_import_hf_command(CLI::App& cmd) {
  auto f = std::make_shared<ImportFlags>();
  cmd.add_option("config", f->config,
                 "a Hugging Face config.json (Llama, Qwen2/2.5/3, Mistral, Mixtral, Qwen3-MoE, "
                 "DeepSeek-V3)")
      ->required()
      ->type_name("FILE");
  cmd.add_option("-o,--output", f->output, "the model file to write (default, or -: stdout)")->type_name("FILE");
  cmd.add_option(
      "--name", f->options.name,
      "the model's name (default: from _name_or_path, else the file's name, or its folder's for config.json)");
  // The bounds of the model file's default_seq_len and
  // default_global_batch_tokens (limits.h), which the import checks.
  integer_range(cmd.add_option_function<std::int64_t>(
                    "--seq-len",
                    [f](std::int64_t v) {
                      f->options.seq_len = v;
                      f->seq_len_given = true;
                    },
                    "default sequence length (default: rope_scaling.original_max_position_embeddings, else "
                    "max_position_embeddings, at most 8192)"),
                fmt::format("1 to {}", kMaxSeqLen));
  integer_range(cmd.add_option("--global-batch-tokens", f->options.global_batch_tokens,
                               "default global batch in tokens (default 4194304)"),
                batch_tokens_range());
  return [f] { return run(*f); };
}

}  // namespace planner::cli
