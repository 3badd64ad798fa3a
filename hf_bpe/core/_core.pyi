"""Typed signatures of the compiled core (hf_bpe/_core.pyx); semantics in hf_bpe/_reference.py."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

def train_merges(
    words: Sequence[bytes],
    counts: Sequence[int],
    *,
    vocab_size: int,
    min_frequency: int = 0,
    special_tokens: Sequence[str] = (),
    max_token_length: int | None = None,
    count_bits: int = 64,
    progress: Callable[[int], None] | None = None,
    consume: bool = False,
) -> tuple[list[bytes], list[tuple[int, int, int]]]: ...

def last_document_end(raw: object, separator: bytes) -> int: ...
def last_safe_cut(raw: object) -> int: ...
def token_file_chunk(ids: object, offsets: object, base: int, width: int) -> tuple[bytes, bytes, int, int]: ...
def continue_merges(
    sequences: Iterable[Sequence[int]],
    counts: Iterable[int],
    *,
    keys: Sequence[bytes | None],
    vocab_size: int,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    progress: Callable[[int], None] | None = None,
    max_words: int | None = None,
    forbidden: bytes = b"",
) -> tuple[list[bytes | None], list[tuple[int, int, int]]]: ...

def continue_merges_from_words(
    encoder: WordEncoder,
    words: list[bytes],
    counts: list[int],
    *,
    keys: Sequence[bytes | None],
    vocab_size: int,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    progress: Callable[[int], None] | None = None,
    max_words: int | None = None,
    forbidden: bytes = b"",
) -> tuple[list[bytes | None], list[tuple[int, int, int]]]: ...

class WordEncoder:
    def __init__(
        self,
        merges: Sequence[tuple[int, int, int]],
        byte_ids: Sequence[int],
        *,
        cache_size: int = 65536,
        whole_words: Mapping[bytes, int] | None = None,
    ) -> None: ...
    def encode_word(self, word: bytes) -> list[int]: ...
    def encode_words(self, words: Iterable[bytes]) -> list[int]: ...
    def encode_texts(self, texts: list[str], pieces: object, pid: int, threads: int = 1) -> list[list[int]]: ...
    def encode_texts_arrays(
        self, texts: list[str], pieces: object, pid: int, threads: int = 1, *, eos_id: int = -1
    ) -> tuple[TokenBuffer, TokenBuffer]: ...
    def encode_text(self, text: str, pieces: object, pid: int, bounds: list[int] | None = None,
                    threads: int = 1) -> list[int]: ...
    def encode_text_array(self, text: str, pieces: object, pid: int, bounds: list[int] | None = None,
                          threads: int = 1) -> TokenBuffer: ...
    def encode_documents(
        self, raw: object, separator: bytes, pieces: object, pid: int, threads: int = 1, *,
        eos_id: int = -1, skip_empty: bool = False
    ) -> tuple[TokenBuffer, TokenBuffer]: ...
    def __reduce__(self) -> tuple[object, ...]: ...

class ShortTextEncoder:
    def __init__(self, encoder: WordEncoder, pid: int, add_prefix_space: bool, long_chars: int) -> None: ...
    def encode(self, text: object, num_threads: object, surrogates: object) -> list[int] | None: ...

class OrdinaryEncoder:
    def __init__(self, short: ShortTextEncoder, full: Callable[[str, int | None, str], list[int]]) -> None: ...
    def __call__(self, text: str, *, num_threads: int | None = None, surrogates: str = "replace") -> list[int]: ...

class TokenBuffer:
    """int32 ids or int64 offsets owned by compiled code; read through the buffer protocol (numpy.frombuffer)."""

    @property
    def itemsize(self) -> int: ...
    def __len__(self) -> int: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def __reduce__(self) -> tuple[object, ...]: ...
