"""The read floor: open and read every byte of every file under a directory, nothing else.

Run as its own process (``python bench/floor.py DIR``) so it pays the same interpreter start-up as
``unifab check`` and its time and memory are measured the same way. Prints ``{"files", "bytes"}``.
Standalone on purpose: it imports nothing from unifab or the harness.
"""

from __future__ import annotations

import json
import os
import sys


def read_all(root: str) -> tuple[int, int]:
    files = total = 0
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    with open(entry.path, "rb") as fh:  # noqa: PTH123 - the plainest possible read
                        total += len(fh.read())
                    files += 1
    return files, total


def main() -> None:
    files, total = read_all(sys.argv[1])
    print(json.dumps({"files": files, "bytes": total}))


if __name__ == "__main__":
    main()
