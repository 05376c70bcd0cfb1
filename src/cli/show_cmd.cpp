// planner show NAME [--format table|json]: one model or hardware profile by
// name, alias or JSON path (find_model_or_hardware, io/catalog.h).
#include <iostream>
#include <memory>
#include <string>
#include <variant>

#include "commands.h"
#include "config_flags.h"
#include "planner/io/catalog.h"
#include "planner/views/report.h"

namespace planner::cli {

namespace {

struct ShowFlags {
  std::string name;
  std::string format = "table";
};

}  // namespace

Runner add_show_command(CLI::App& cmd) {
  auto f = std::make_shared<ShowFlags>();
  cmd.add_option("name", f->name, "model or hardware name")->required();
  cmd.add_option("--format", f->format, "table or json")->check(CLI::IsMember(table_or_json()));
  return [f] {
    const Format format = parse_format(f->format);
    const CatalogEntry entry = find_model_or_hardware(f->name);
    if (const auto* m = std::get_if<ModelSpec>(&entry))
      std::cout << render_model(*m, format);
    else
      std::cout << render_hardware(std::get<HardwareProfile>(entry), format);
    return 0;
  };
}

}  // namespace planner::cli
