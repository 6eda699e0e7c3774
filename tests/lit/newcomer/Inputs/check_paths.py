"""Checks that the repository paths the user-facing documents name exist (issue 36, item 7).

Usage: check_paths.py REPO FILE... (FILE relative to REPO). A path is a word like
`dir/name.ext`; it may be relative to the repository root, to the document's folder, or (for
TableGen includes) to rules/. Placeholders (NAME, SIZE, DIR, ...), wildcards, XLA's own sources
(xla/...), build outputs and the documents' examples of files a user creates are skipped. Any
mention of a folder outside the repository (../shared, /work/) is an error: a fresh clone has none.
Prints one line per problem and "N problems".
"""
import os
import re
import sys

PATH = re.compile(r"(?<![\w./<>$%-])((?:\.\./|\./)?(?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\.(?:md|py|yaml|td|h|cc|json|txt|hlo|cmake))\b")
OUTSIDE = re.compile(r"\.\./shared\b|/work/")
SKIP_PREFIXES = ("xla/", "build/", "build-", ".carry/", "python/hloc/libhloc")
PLACEHOLDER = re.compile(r"NAME|SIZE|DIR|OUT|FILE|NNNN|<|>|\*")
EXAMPLES = {"rules/simplify/MulTwo.td", "my-gpu.yaml"}  # files the README tells the reader to create


def main():
    repo, files = sys.argv[1], sys.argv[2:]
    problems = 0
    for f in files:
        text = open(os.path.join(repo, f), encoding="utf-8").read()
        for m in OUTSIDE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            print(f"{f}:{line}: '{m.group(0)}' is outside the repository")
            problems += 1
        for m in PATH.finditer(text):
            p = m.group(1)
            if p.startswith(SKIP_PREFIXES) or PLACEHOLDER.search(p) or p in EXAMPLES:
                continue
            where = [repo, os.path.join(repo, os.path.dirname(f)), os.path.join(repo, "rules")]
            if not any(os.path.exists(os.path.join(w, p)) for w in where):
                line = text.count("\n", 0, m.start()) + 1
                print(f"{f}:{line}: {p}: no such file")
                problems += 1
    print(f"{problems} problems")


main()
