"""Extend Llama 2's SentencePiece tokenizer on Chinese and measure tokens per byte on held-out lines.

Reads ``../shared/data`` (``--shared``): the first ``--train-mb`` MB of each Chinese corpus file are the training
text, the next 200 KB of each the held-out text. Prints the time of ``extend_sentencepiece``, tokens per UTF-8 byte
of the base and of the extended model (``sentencepiece`` encoding both), and the first new pieces.

    python scripts/extend_llama2_zh.py --new-tokens 20000 --train-mb 2
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import sentencepiece as spm

import hf_bpe


def _split(path: Path, train_bytes: int, held_bytes: int) -> tuple[list[str], list[str]]:
    data = path.read_bytes()
    train = data[:train_bytes].decode("utf-8", "ignore").split("\n")[:-1]
    held = data[train_bytes:train_bytes + held_bytes].decode("utf-8", "ignore").split("\n")[1:-1]
    return train, held


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--new-tokens", type=int, default=20000)
    parser.add_argument("--train-mb", type=float, default=2.0)
    args = parser.parse_args()
    base_path = args.shared / "sentencepiece" / "llama2_tokenizer.model"
    train: list[str] = []
    held: list[str] = []
    for path in sorted((args.shared / "corpora" / "zh").glob("*.txt")):
        part_train, part_held = _split(path, int(args.train_mb * 1e6), 200_000)
        train += part_train
        held += part_held
    size = sum(len(line.encode()) for line in train)
    start = time.perf_counter()
    extended = hf_bpe.extend_sentencepiece(base_path, train, new_tokens=args.new_tokens, max_sentence_length=65536)
    seconds = time.perf_counter() - start
    base = spm.SentencePieceProcessor(model_file=str(base_path))
    ours = spm.SentencePieceProcessor()
    ours.LoadFromSerializedProto(extended.to_bytes())
    held_bytes = sum(len(line.encode()) for line in held)
    before = sum(map(len, base.encode(held)))
    after = sum(map(len, ours.encode(held)))
    new = extended.pieces[base.get_piece_size():]
    chars = sum(1 for p in new if len(p.piece) == 1)
    print(f"training text: {size / 1e6:.2f} MB, {len(train)} lines; extend_sentencepiece: {seconds:.2f} s")
    print(f"new pieces: {len(new)} ({len(new) - chars} merged, {chars} new characters)")
    print(f"held-out: {held_bytes / 1e6:.2f} MB, {len(held)} lines")
    print(f"tokens per byte: Llama 2 {before / held_bytes:.4f} ({before} tokens), extended {after / held_bytes:.4f} "
          f"({after} tokens): {before / after:.2f}x fewer tokens")
    print("first new pieces:", " ".join(p.piece for p in new[:20]))


if __name__ == "__main__":
    main()
