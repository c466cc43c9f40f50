"""Regenerate tests/data/js_offsets.json: what JavaScript (node) counts for the offset tests.

The tests read the committed file, so node is needed only here.  Run it from the repository
root after changing `node_texts()` in tests/core/test_offsets.py:

    python scripts/regen_js_offsets.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "js_offsets.json"

# UTF-16 positions from indexOf and string lengths, UTF-8 from Buffer.byteLength of
# prefixes: JavaScript's own counting, independent of Python's codecs.  Every START in the
# texts opens a valid citation.
NODE_SCRIPT = r"""
const texts = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = texts.map((text) => {
  const u16 = [0], u8 = [0];
  let units = 0, bytes = 0;
  for (const ch of text) {
    units += ch.length;
    bytes += Buffer.byteLength(ch);
    u16.push(units);
    u8.push(bytes);
  }
  const markers = [];
  let clean = "", keptFrom = 0;
  let start = text.indexOf("\ue200");
  while (start !== -1) {
    const end = text.indexOf("\ue201", start) + 1;
    clean += text.slice(keptFrom, start);
    keptFrom = end;
    markers.push({
      utf16: [start, end, clean.length],
      utf8: [
        Buffer.byteLength(text.slice(0, start)),
        Buffer.byteLength(text.slice(0, end)),
        Buffer.byteLength(clean),
      ],
    });
    start = text.indexOf("\ue200", end);
  }
  return {u16, u8, markers};
});
process.stdout.write(JSON.stringify(out));
"""


def main() -> int:
    node = shutil.which("node")
    if node is None:
        print("node is required to regenerate the JavaScript offsets", file=sys.stderr)
        return 1
    sys.path.insert(0, str(ROOT / "tests" / "core"))
    from test_offsets import node_texts  # the texts have one home: the test file

    texts = node_texts()
    result = subprocess.run(
        [node, "-e", NODE_SCRIPT],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    counted = json.loads(result.stdout)
    entries = [{"text": t, "js": js} for t, js in zip(texts, counted, strict=True)]
    # One text per line, ASCII only (lone surrogates stay escaped): small, diff-friendly.
    lines = ",\n".join(json.dumps(entry, separators=(",", ":")) for entry in entries)
    OUT.write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    print(f"wrote {len(entries)} texts to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
