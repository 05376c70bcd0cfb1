#!/usr/bin/env python3
"""Lists C++ functions longer than a limit (default 80 lines), for review.

Usage: scripts/long_functions.py [LIMIT] [FILES...]   (default: src/ and include/)
A function is a definition that starts in column 0 and ends with a '}' in
column 0 (the code is clang-formatted); lambdas and blocks inside it count
toward it. Approximate by design: it reads text, not an AST.
"""
import re
import subprocess
import sys

limit = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 80
files = [a for a in sys.argv[1:] if not a.isdigit()] or subprocess.check_output(
    ["git", "ls-files", "src/*.cpp", "src/*.h", "include/*.h"], text=True).split()
found = 0
skip = ("namespace", "struct", "class", "enum", "#", "//", "}", "using", "template", "static_assert", "extern")
for path in files:
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        # A definition at namespace scope starts in column 0 (clang-formatted) and
        # its body ends with a '}' in column 0.
        if line and not line[0].isspace() and not line.startswith(skip) and not line.rstrip().endswith(";"):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";", "}")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{") and "=" not in lines[i].split("(")[0]:
                k = j + 1
                while k < len(lines) and not (lines[k].startswith("}") and not lines[k].startswith("}  //")):
                    k += 1
                n = k - i + 1
                if n > limit:
                    found += 1
                    print(f"{path}:{i + 1}: {n} lines: {line.strip()[:90]}")
                i = k + 1
                continue
        i += 1
sys.exit(1 if found else 0)
