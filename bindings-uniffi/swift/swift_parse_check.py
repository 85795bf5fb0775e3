"""Parses Swift files with tree-sitter-swift and fails on any syntax error.

There is no Swift compiler on Linux here, so this is the Swift package's check: the generated
sources and the demo must at least parse. It does not check types.
Usage: python swift_parse_check.py FILE.swift...
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tree_sitter_swift
from tree_sitter import Language, Node, Parser

# tree-sitter-swift 0.7.4 does not know this attribute (UniFFI puts it on internal helpers);
# it is blanked out with spaces so that line and column numbers stay the same.
UNKNOWN_ATTRIBUTE = re.compile(rb"@_documentation\(visibility:\s*private\)")
# Nor a closure whose body is the empty tuple, `{ () }` (valid Swift: it returns Void), which
# UniFFI writes for a foreign method returning nothing; it becomes `{ [] }`, the same length.
VOID_CLOSURE = re.compile(rb"(let writeReturn = \{ )\(\)( \})")


def problems(node: Node) -> list[Node]:
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.is_error or current.is_missing:
            found.append(current)
        elif current.has_error:
            stack.extend(current.children)
    return found


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    parser = Parser(Language(tree_sitter_swift.language()))
    failed = 0
    for path in paths:
        source = Path(path).read_bytes()
        source = UNKNOWN_ATTRIBUTE.sub(lambda m: b" " * len(m.group(0)), source)
        source = VOID_CLOSURE.sub(rb"\1[]\2", source)
        tree = parser.parse(source)
        errors = problems(tree.root_node)
        lines = source.count(b"\n") + 1
        if errors:
            failed += 1
            for error in errors[:10]:
                row, column = error.start_point
                kind = "missing" if error.is_missing else "syntax error"
                snippet = source.splitlines()[row][:100].decode(errors="replace") if row < lines else ""
                print(f"{path}:{row + 1}:{column + 1}: {kind}: {snippet.strip()}", file=sys.stderr)
        else:
            print(f"{path}: {lines} lines parse", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
