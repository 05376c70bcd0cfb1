// The one way the program writes a file: write a temporary file next to the
// target, flush and fsync it, then rename(2) it over the target. rename is
// atomic on POSIX file systems, so a reader (or a crash) sees either the old
// file or the complete new one, never a half-written file.
#pragma once

#include <string>
#include <string_view>

namespace planner {

// Throws InputError(path, reason) when the temporary file cannot be created,
// written or renamed; the temporary file is removed on failure.
void write_file_atomically(const std::string& path, std::string_view contents);

}  // namespace planner
