#!/usr/bin/env python3
"""Whether every host allocation of the runtime goes through an allocator.

runtime/base/alloc.h is the only way runtime code allocates: hgr__alloc, hgr__calloc,
hgr__realloc, hgr__free, hgr__copy_text and hgr__strdup, each given the allocator of
the object it allocates for. This check reads runtime/*/*.[ch] with comments and
strings left out and reports, as FILE:LINE, every direct call of the C library's
allocators (malloc, calloc, realloc, reallocarray, aligned_alloc, posix_memalign,
free, strdup, strndup, asprintf, vasprintf). base/alloc.c (the system allocator) and
base/status.c (statuses are the caller's, freed by hgr_status_free) are exempt.
Exit status 1 when anything is reported.

  scripts/check_alloc.py [REPO]
"""
import glob
import os
import re
import sys

EXEMPT = {"base/alloc.c", "base/status.c"}
DIRECT = re.compile(r"(?<![\w.>])(malloc|calloc|realloc|reallocarray|aligned_alloc|posix_memalign|free|strdup|"
                    r"strndup|asprintf|vasprintf)\s*\(")


def code_only(text):
    """text with comments and string and character literals blanked (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (j + 1 - i))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    runtime = os.path.join(root, "runtime")
    found = 0
    for path in sorted(glob.glob(os.path.join(runtime, "*", "*.[ch]"))):
        name = os.path.relpath(path, runtime)
        if name in EXEMPT:
            continue
        with open(path, encoding="utf-8") as f:
            lines = code_only(f.read()).split("\n")
        for number, line in enumerate(lines, 1):
            for match in DIRECT.finditer(line):
                print(f"runtime/{name}:{number}: {match.group(1)}() directly; allocate through base/alloc.h")
                found += 1
    if found:
        print(f"{found} allocations do not go through an allocator")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
