#!/usr/bin/env python3
# check_language.py - Holds the two language references in step:
# docs/language.md (the engineers' grammar and rules) and man/opd.5 (the
# user's reference). Neither is generated from the other (one is Markdown
# for readers of the tree, one roff for `man`); this test fails when they
# drift apart on what can be checked mechanically:
#   - the keywords and type names: the lexer's table (ParseDriver.cpp,
#     `.Case("kw", Tok::...)`) equals language.md's lists, and opd.5 names
#     every one;
#   - the math intrinsics language.md lists are all in opd.5;
#   - every repository path either document cites exists.
# SPDX-License-Identifier: Apache-2.0
import os
import re
import sys

TYPES = {"f64", "f32", "i32", "i64", "bool", "str"}


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def words(text):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    lexer = read(root, "compiler/frontend/ParseDriver.cpp")
    md = read(root, "docs/language.md")
    man = read(root, "man/opd.5")
    # roff escapes (\fB, \-) out of the way, so words stand alone.
    man_plain = re.sub(r"\\f[BIRP]|\\-|\\\(..|\\", " ", man)
    problems = []

    # keywordTable(): {"program", Tok::TOK_PROGRAM}, ... (older lexers
    # spelled it as a StringSwitch: .Case("program", Tok::...)).
    table = set(re.findall(r'\{"([a-z0-9_]+)", Tok::', lexer)) | set(
        re.findall(r'\.Case\("([a-z0-9_]+)", Tok::', lexer))
    if not table:
        problems.append("no keyword table found in ParseDriver.cpp")
    m = re.search(r"- Keywords: `([^`]*)`", md)
    listed = set(m.group(1).split()) if m else set()
    m = re.search(r"- Type names: `([^`]*)`", md)
    types = set(m.group(1).split()) if m else set()
    for kw in sorted((table - TYPES) - listed):
        problems.append(f"docs/language.md: keyword `{kw}` (lexer) is not in "
                        "its Keywords list")
    for kw in sorted(listed - table):
        problems.append(f"docs/language.md: `{kw}` is listed as a keyword but "
                        "the lexer has no such keyword")
    if types != (table & TYPES):
        problems.append(f"docs/language.md: type names {sorted(types)} differ "
                        f"from the lexer's {sorted(table & TYPES)}")
    man_words = words(man_plain)
    for kw in sorted(table - man_words):
        problems.append(f"man/opd.5: keyword `{kw}` is never mentioned")

    # The names in backquotes before "All take" (the sentence after the list).
    m = re.search(r"Math intrinsics \(kernels and host\): (.*?)All take", md,
                  re.S)
    quoted = " ".join(re.findall(r"`([^`]*)`", m.group(1))) if m else ""
    intrinsics = words(re.sub(r"\(.*?\)", " ", quoted))
    intrinsics -= {"math", "h", "e", "x", "y", "cond", "a", "b"} | TYPES
    if not intrinsics:
        problems.append("docs/language.md: no 'Math intrinsics' list found")
    for f in sorted(intrinsics - man_words):
        problems.append(f"man/opd.5: math intrinsic `{f}` (docs/language.md) "
                        "is never mentioned")

    path = re.compile(r"\b((?:bench|compiler|docs|shared|examples|grammar|lib|man|"
                      r"scripts|stdlib|targets|tests)/[A-Za-z0-9_./-]*"
                      r"[A-Za-z0-9_])")
    for name, text in (("docs/language.md", md), ("man/opd.5", man_plain)):
        for p in sorted(set(path.findall(text))):
            if "*" in p or "NAME" in p or "<" in p:
                continue
            if not os.path.exists(os.path.join(root, p)):
                problems.append(f"{name}: cites {p}, which is not in the "
                                "repository")
    for p in problems:
        print("FAIL: " + p)
    print(f"{len(table)} keywords and types, {len(intrinsics)} intrinsics "
          f"checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
