// The one way the program writes a file: write a temporary file next to the
// target, flush and fsync it, then rename(2) it over the target. rename is
// atomic on POSIX file systems, so a reader (or a crash) sees either the old
// file or the complete new one, never a half-written file.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace planner {

// Throws InputError(path, reason) when the temporary file cannot be created,
// written or renamed; the temporary file is removed on failure.
void write_file_atomically(const std::string& path, std::string_view contents);

// Several files as one: every temporary file is written and flushed before
// any is renamed, so a file that cannot be written (a missing directory, a
// full disk) leaves none of them behind. Only a rename failing between two
// renames (rare: the temporary files sit next to their targets) leaves the
// earlier ones written.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// Whether two output paths name the same file ("x.html" and "./x.html"; a
// symbolic link and its target), by their canonical forms.
[[nodiscard]] bool same_file(const std::string& a, const std::string& b);

}  // namespace planner
