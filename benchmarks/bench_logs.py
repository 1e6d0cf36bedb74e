"""Folders of thousands of harness logs: ``read_items`` reduces each log to its (model, item) cells as it
reads it (bayesrank.items.accumulate) against the reader that holds every log's rows and concatenates
them (the previous reader, written out here), on the same lm-eval folder. Each path runs in its own
process (wall, CPU, peak RSS from ``os.wait4``).

    python benchmarks/bench_logs.py [--models 3000] [--items 500]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from process_usage import whole_process  # noqa: E402

CHILD = {
    "streamed": "from bayesrank.items.readers import read_items; d, _ = read_items({root!r}); print(d.scores.shape)",
    "concatenated": (
        "import pandas as pd; from pathlib import Path\n"
        "from bayesrank.data.harness import read_lm_eval_samples\n"
        "from bayesrank.items.data import ItemScores\n"
        "fs = sorted(Path({root!r}).rglob('samples_*.jsonl'))\n"
        "rows = pd.concat([read_lm_eval_samples(f, model=f.parent.name) for f in fs], ignore_index=True)\n"
        "d = ItemScores.from_long(rows.rename(columns={{'correct': 'score'}})); print(d.scores.shape)"),
}


def write_folder(root: Path, n_models: int, n_items: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for a in range(n_models):
        d = root / f"model-{a:05d}"
        d.mkdir()
        y = rng.integers(0, 2, n_items)
        with open(d / "samples_gsm8k_2024-05-01T12-00-00.000001.jsonl", "w") as f:
            for i in range(n_items):
                f.write(json.dumps({"doc_id": i, "filter": "strict-match", "metrics": ["exact_match"],
                                    "exact_match": float(y[i]), "doc_hash": f"h{i}", "prompt_hash": "p"}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=3000)
    ap.add_argument("--items", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        write_folder(Path(tmp), args.models, args.items)
        print(f"{args.models:,} lm-eval samples files × {args.items:,} items")
        print("| reader | wall s | CPU s | peak RSS GB |\n|---|---:|---:|---:|")
        for name, code in CHILD.items():
            wall, cpu, rss = whole_process([sys.executable, "-c", code.format(root=tmp)])
            print(f"| {name} | {wall:.1f} | {cpu:.1f} | {rss:.2f} |")


if __name__ == "__main__":
    main()
