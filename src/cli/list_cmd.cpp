// planner list models|hardware [--format table|json]: the stock catalog
// (io/catalog.h), rendered by views/report.h.
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/catalog.h"
#include "planner/views/report.h"

namespace planner::cli {

namespace {

struct ListFlags {
  std::string what;
  std::string format = "table";
};

}  // namespace

Runner add_list_command(CLI::App& cmd) {
  auto f = std::make_shared<ListFlags>();
  cmd.add_option("what", f->what, "models or hardware")->required()->check(CLI::IsMember({"models", "hardware"}));
  cmd.add_option("--format", f->format, "table or json")->check(CLI::IsMember(table_or_json()));
  return [f] {
    const Format format = parse_format(f->format);
    std::cout << (f->what == "models" ? render_model_list(list_models(), format)
                                      : render_hardware_list(list_hardware(), format));
    return 0;
  };
}

}  // namespace planner::cli
