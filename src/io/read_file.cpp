#include "planner/io/read_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "planner/spec/input_error.h"

namespace planner {

std::string read_input_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) throw InputError(path, "cannot open file");
  if (fs::is_directory(st)) throw InputError(path, "expected a file, got a directory");
  if (!fs::is_regular_file(st)) throw InputError(path, "expected a regular file (not a device, FIFO or socket)");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw InputError(path, "cannot read the file size");
  if (size > kMaxInputFileBytes)
    throw InputError(path, fmt::format("file of {} bytes is larger than the {} MiB an input file may have", size,
                                       kMaxInputFileBytes >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw InputError(path, "read error");
  return std::move(buf).str();
}

}  // namespace planner
