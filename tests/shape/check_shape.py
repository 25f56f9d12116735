#!/usr/bin/env python3
# check_shape.py - The house keeps its shape: file and function sizes, and
# the include layering of the runtime and the compiler.
# SPDX-License-Identifier: Apache-2.0
#
# Why: a reader finds a thing by its family, and reads a function whole.
# Past 800 lines a file holds more than one idea; past 150 lines a function
# does (docs/decisions/0290-families-and-shape.md). The layering rules keep
# the runtime's ground floor (lib/core) and the compiler's stages (each
# compiler/ folder includes only folders before it) one floor each, which
# nothing else checks: the build links them all into one binary either way.
#
# Checks, over the C, C++, CUDA, Flex and Bison sources under compiler/,
# lib/ and grammar/:
#   1. no file over MAX_FILE_LINES lines;
#   2. no function over MAX_FUNCTION_LINES lines, from its header's first
#      line to its closing brace (found by brace matching on the source with
#      comments, strings and preprocessor lines blanked; a lambda or local
#      class counts as part of its function);
#   3. no file under lib/core includes a header of lib/exec (or any other
#      runtime folder above it: io, mpi, solvers, cuda), and io, solvers
#      and exec include only core (mpi: core and exec);
#   4. no compiler/ folder includes a header of a folder after it in
#      LAYERS (compiler/CMakeLists.txt's order), and no family of
#      compiler/passes/ one after it or beside it in PASS_LAYERS (only
#      PassPipeline.cpp, at the top, includes every family).
# The files in ALLOWED are skipped by 1 and 2 (not by 3 and 4): RESERVED
# ones are being edited elsewhere, NOT_YET_SPLIT ones wait for their
# split; both are to be split next, and an entry that no longer breaks a
# limit is an error, so the lists only shrink.
#
# Usage: check_shape.py [--list] REPO_ROOT
#   --list prints every file and function over the limits, allowed or not.
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150

# Reserved: files another engineer's change was editing while this check
# landed, split after it; empty since, and nothing joins it.
RESERVED: set = set()

# Not split yet: over a limit when this check landed, and to be split
# next, each entry leaving the list with its split (the limit it breaks
# and by how much, for whoever splits it). Nothing joins this list.
NOT_YET_SPLIT: set = set()

ALLOWED = RESERVED | NOT_YET_SPLIT

SOURCE_DIRS = ("compiler", "lib", "grammar")
EXTENSIONS = (".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".ll", ".yy")

# compiler/ folders in layer order: a folder may include only itself and
# the folders before it. Folders sharing a layer are listed together.
LAYERS = [
    ["support"],
    ["target"],
    ["ast"],
    ["frontend"],
    ["sema"],
    ["ir"],
    ["lower"],
    ["analysis"],
    ["passes"],
    ["codegen/common"],
    ["codegen/llvm", "codegen/cuda"],
    ["driver"],
]

# compiler/passes/ families in layer order; deriv and loops side by side.
PASS_LAYERS = [["utils"], ["kernels"], ["loops", "deriv"]]

# lib/core includes none of these (the runtime's other folders build on it).
CORE_FORBIDDEN = ("exec/", "io/", "mpi/", "solvers/", "cuda/")
# The runtime's floors above core: the folders each may include.
LIB_ALLOWED = {
    "io": ("core/", "io/"),
    "solvers": ("core/", "solvers/"),
    "exec": ("core/", "exec/"),
    "mpi": ("core/", "exec/", "mpi/"),
}
LIB_FOLDERS = ("core/", "io/", "solvers/", "exec/", "mpi/", "cuda/")

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources(root):
    for top in SOURCE_DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(EXTENSIONS):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def blank_non_code(text):
    """Comments, string and character literals and preprocessor lines
    become spaces; newlines stay, so line numbers do too."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = False
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and \
                    i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


CONTAINER = re.compile(
    r"\b(namespace|class|struct|union|enum)\b[^;()]*$|extern\s*$")
FUNCTION_TAIL = re.compile(
    r"\)\s*(const|noexcept|override|final|mutable|volatile|&|&&|->[^{;]*|"
    r"\s|\[\[[^\]]*\]\]|__attribute__\s*\(\(.*\)\))*$")
NOT_FUNCTION = re.compile(r"(=|\breturn\b|\bif\b|\bfor\b|\bwhile\b|"
                          r"\bswitch\b|\bcatch\b)\s*\(?[^;{}]*$")


def functions(code):
    """(name, first line, last line) of each function defined at namespace
    or class scope in `code` (blanked by blank_non_code)."""
    result = []
    # Each open brace: ("container"|"function"|"other", start line, name).
    stack = []
    header_start = 0  # where the text before the next brace begins
    line_of = [0] * (len(code) + 1)
    line = 1
    for i, c in enumerate(code):
        line_of[i] = line
        if c == "\n":
            line += 1
    line_of[len(code)] = line
    for i, c in enumerate(code):
        if c == "{":
            header = code[header_start:i]
            in_scope = not stack or stack[-1][0] == "container"
            kind = "other"
            name = ""
            if in_scope:
                h = header.strip()
                # Constructor initialiser lists: `) : a(x), b{y}` -> look
                # back to the parameter list's closing parenthesis.
                init = re.search(r"\)\s*:\s*[^;]*$", h)
                if CONTAINER.search(h) or h.endswith('extern "C"') or \
                        re.search(r'\bextern\s*$', h):
                    kind = "container"
                elif (FUNCTION_TAIL.search(h) or init) and \
                        not re.search(r"=\s*$", h) and "(" in h:
                    kind = "function"
                    m = re.search(r"([~\w:<>]+)\s*\(", h)
                    name = m.group(1) if m else "?"
                    # The header starts on the first non-blank line.
                    start = header_start + (len(header) - len(header.lstrip()))
                    stack.append((kind, line_of[start], name))
                    header_start = i + 1
                    continue
            stack.append((kind, line_of[i], name))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    result.append((name, start, line_of[i]))
            header_start = i + 1
        elif c == ";":
            if not stack or stack[-1][0] == "container":
                header_start = i + 1
        elif c == ":" and stack and stack[-1][0] == "container":
            # Access specifiers (public:) end a header; `::` does not.
            if code[i - 1:i + 1] != "::" and code[i:i + 2] != "::" and \
                    re.search(r"\b(public|private|protected)\s*$",
                              code[header_start:i]):
                header_start = i + 1
    return result


def layer_of(folder):
    for k, group in enumerate(LAYERS):
        if folder in group:
            return k
    return None


def pass_layer(family):
    for k, group in enumerate(PASS_LAYERS):
        if family in group:
            return k
    return len(PASS_LAYERS)


def compiler_folder(path):
    """The LAYERS entry a compiler/ path or include belongs to."""
    parts = path.split("/")
    if parts[0] == "codegen" and len(parts) > 1:
        return "codegen/" + parts[1]
    return parts[0]


def main(argv):
    list_all = "--list" in argv
    args = [a for a in argv[1:] if a != "--list"]
    root = args[0] if args else os.getcwd()
    problems = []
    over = set()  # files over a limit, allowed or not
    for path in sources(root):
        with open(os.path.join(root, path), encoding="utf-8",
                  errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        allowed = path in ALLOWED
        if lines > MAX_FILE_LINES:
            over.add(path)
        if lines > MAX_FILE_LINES and (list_all or not allowed):
            problems.append(f"{path}: {lines} lines (at most "
                            f"{MAX_FILE_LINES}; split it along a seam)"
                            + (" [allowed]" if allowed else ""))
        if path.endswith((".ll", ".yy")):
            pass  # grammar actions are not functions
        else:
            for name, first, last in functions(blank_non_code(text)):
                length = last - first + 1
                if length > MAX_FUNCTION_LINES:
                    over.add(path)
                if length > MAX_FUNCTION_LINES and (list_all or not allowed):
                    problems.append(
                        f"{path}:{first}: function '{name}' is {length} lines "
                        f"(at most {MAX_FUNCTION_LINES}; split it)" +
                        (" [allowed]" if allowed else ""))
        includes = INCLUDE.findall(text)
        if path.startswith("lib/core/"):
            for inc in includes:
                if inc.startswith(CORE_FORBIDDEN):
                    problems.append(
                        f"{path}: includes \"{inc}\": lib/core is the "
                        "runtime's ground floor and includes only core/ and "
                        "opd_rt.h (move the code up, or what it needs down)")
        folder = path.split("/")[1] if path.startswith("lib/") else None
        if folder in LIB_ALLOWED:
            for inc in includes:
                if inc.startswith(LIB_FOLDERS) and \
                        not inc.startswith(LIB_ALLOWED[folder]):
                    problems.append(
                        f"{path}: includes \"{inc}\": lib/{folder} includes "
                        f"only {', '.join(LIB_ALLOWED[folder])} "
                        "(docs/architecture.md, layering)")
        if path.startswith("compiler/"):
            mine = layer_of(compiler_folder(path[len("compiler/"):]))
            for inc in includes:
                theirs = layer_of(compiler_folder(inc))
                if mine is not None and theirs is not None and theirs > mine:
                    problems.append(
                        f"{path}: includes \"{inc}\", a layer after its own "
                        "(compiler/CMakeLists.txt: a folder includes only "
                        "folders before it)")
        m = re.match(r"compiler/passes/(\w+)/", path)
        if m:
            mine = pass_layer(m.group(1))
            for inc in includes:
                n = re.match(r"passes/(\w+)/", inc)
                if inc == "passes/PassPipeline.h":
                    theirs = len(PASS_LAYERS)
                elif n:
                    theirs = pass_layer(n.group(1))
                else:
                    continue
                if n and n.group(1) == m.group(1):
                    continue
                if theirs >= mine:
                    problems.append(
                        f"{path}: includes \"{inc}\": a pass family includes "
                        "only the families before it (utils, kernels, then "
                        "loops and deriv apart)")
    if not list_all:
        for path in sorted(NOT_YET_SPLIT):
            if path not in over:
                problems.append(f"{path}: within the limits now; remove it "
                                "from NOT_YET_SPLIT in " + os.path.basename(__file__))
    for p in problems:
        print(p)
    if list_all:
        return 0
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
