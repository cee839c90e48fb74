#!/usr/bin/env python3
"""Every "DESIGN section N" / "DESIGN sections N, M" / "DESIGN §N" reference in
the source tree must name a numbered heading ("## N. ...") of docs/DESIGN.md.

Why a test: code comments cite the design by section number; a renumbered or
deleted section would otherwise leave dozens of dangling references behind.
Usage: check_design_refs.py SOURCE_ROOT   (exit 0 ok, 1 dangling refs, 2 usage)
"""
import os
import re
import sys

SKIP_DIRS = {".git", "build", "node_modules"}
TEXT_EXT = {".c", ".cc", ".cpp", ".h", ".hpp", ".md", ".tmpl", ".txt", ".cmake",
            ".py", ".sh", ".gp", ".json", ".in", ".cu", ""}
REF = re.compile(r"DESIGN\s+(?:sections?\s+|§\s*)((?:\d+)(?:\s*(?:,|and|-|–)\s*§?\s*\d+)*)")


def headings(design_path):
    nums = set()
    with open(design_path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^##\s+(\d+)\.\s", line)
            if m:
                nums.add(int(m.group(1)))
    return nums


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    design = os.path.join(root, "docs", "DESIGN.md")
    if not os.path.isfile(design):
        print(f"{design}: missing (code cites it as 'DESIGN section N')", file=sys.stderr)
        return 1
    known = headings(design)
    bad, seen = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
        for name in filenames:
            if os.path.splitext(name)[1] not in TEXT_EXT:
                continue
            path = os.path.join(dirpath, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.readlines()
            except (UnicodeDecodeError, OSError):
                continue
            for lineno, line in enumerate(lines, 1):
                for m in REF.finditer(line):
                    for num in re.findall(r"\d+", m.group(1)):
                        seen += 1
                        if int(num) not in known:
                            rel = os.path.relpath(path, root)
                            bad.append(f"{rel}:{lineno}: DESIGN section {num} has no heading in docs/DESIGN.md")
    for b in bad:
        print(b, file=sys.stderr)
    print(f"{seen} DESIGN references checked, {len(bad)} dangling; headings: {sorted(known)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
