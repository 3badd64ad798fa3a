"""Embedding rows for the tokens an extended tokenizer adds: each the mean of the base rows it was made of.

A tokenizer extended by :func:`hf_bpe.extend` (or :func:`hf_bpe.extend_sentencepiece`) keeps every base id and
appends new ones. Before continued pretraining, a model's embedding matrix needs a row for each new id; the usual
start is the mean of the rows of the tokens the *base* tokenizer splits the new token into, so that the new token
begins where the model already was on that text. What "splits into" means, exactly:

- byte-level BPE: the new token's **bytes** segmented by the base's merges (the base's word encoder,
  :meth:`BPEModel.encode_word`), with no pre-tokenization and no text decoding: a new token may be part of a UTF-8
  character (CJK text makes such tokens), and a special token is segmented as its UTF-8 spelling;
- SentencePiece: the piece's text segmented by the base model as ``sentencepiece`` itself does, with no
  normalization (``▁`` is a literal character of the piece, no dummy prefix is added, no charsmap rule applied):
  user-defined symbols first, then merges by score; characters the base lacks become its byte pieces
  (``byte_fallback``) or its unknown piece.

Arrays in, arrays out: numpy or torch, the result in the library, dtype and device of the input (torch is imported
only when a torch tensor is given). Means are taken in float32 (float64 for float64 input) and rounded to the
input's dtype once.

A `transformers` model, its input and output embeddings (a tied pair is one tensor, so the set holds it once)::

    extended = AutoTokenizer.from_pretrained("gpt2-extended")  # the folder hf-bpe extend wrote
    model.resize_token_embeddings(len(extended), mean_resizing=False)
    for weight in {model.get_input_embeddings().weight, model.get_output_embeddings().weight}:
        new_rows = hf_bpe.new_token_embeddings("gpt2-base", extended, weight)
        weight.data[len(extended) - len(new_rows):len(extended)] = new_rows

>>> import numpy as np, hf_bpe
>>> corpus = ["low lower lowest newer wider"] * 8
>>> base = hf_bpe.train(corpus, vocab_size=262, show_progress=False)
>>> extended = hf_bpe.train(corpus, vocab_size=265, show_progress=False)  # the same merges, and 3 more
>>> rows = new_token_embeddings(base, extended, np.arange(262 * 2, dtype=np.float32).reshape(262, 2))
>>> rows.shape, rows.dtype
((3, 2), dtype('float32'))
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import excerpt
from ..formats.sentencepiece_model import SentencePieceModel
from ..model.bpe import BPEModel
from .fast_model import fast_tokenizer_model

__all__ = ["as_tokenizer_model", "base_splits", "check_extension", "new_token_embeddings", "token_text"]

TokenizerModel = BPEModel | SentencePieceModel

# Elements gathered at once when averaging (rows x split length x width): bounds the temporary to ~64 MB of float32
# whatever the vocabulary and the width (a 4096-wide model extended by 100,000 tokens would need gigabytes at once).
_GATHER_ELEMENTS = 1 << 24

_ACCEPTED = ("an hf_bpe.BPEModel, a SentencePieceModel, an HFBPETokenizer, an HFSentencePieceTokenizer, a "
             "transformers fast tokenizer of a byte-level BPE, or the path of a tokenizer folder (or of a "
             "SentencePiece .model file)")


def as_tokenizer_model(tokenizer: Any, what: str) -> TokenizerModel:
    """Return the model behind ``tokenizer``: a ``BPEModel`` or a ``SentencePieceModel``.

    Args:
        tokenizer: a ``BPEModel``, a ``SentencePieceModel``, an ``HFBPETokenizer`` / ``HFSentencePieceTokenizer``
            (their model; tokens added with ``add_tokens`` are not part of it), a transformers fast tokenizer of a
            byte-level BPE (what ``AutoTokenizer`` gives for an hf_bpe folder: its ``tokenizer.json``, added
            tokens included), or a path: a SentencePiece
            ``.model`` file, a folder holding a SentencePiece ``tokenizer.model``, or a byte-level folder
            (:meth:`BPEModel.load`: hf_bpe's, GPT-2 files, a ``tokenizer.json``).
        what: the argument's name, for messages.

    Raises:
        TypeError: for anything else.
        FileNotFoundError: for a path that does not exist.
        ValueError: for files that do not hold a tokenizer (the loaders' messages).
    """
    if isinstance(tokenizer, BPEModel | SentencePieceModel):
        return tokenizer
    # Either class exists only once its module (and transformers) was imported: a tokenizer of it implies that.
    hf = sys.modules.get("hf_bpe.integrations.hf_tokenizer")
    if hf is not None and isinstance(tokenizer, hf.HFBPETokenizer):
        return tokenizer.bpe_model
    sp = sys.modules.get("hf_bpe.integrations.sentencepiece_tokenizer")
    if sp is not None and isinstance(tokenizer, sp.HFSentencePieceTokenizer):
        return tokenizer.sentencepiece_model
    fast = fast_tokenizer_model(tokenizer)  # PreTrainedTokenizerFast and its subclasses
    if fast is not None:
        return fast
    if isinstance(tokenizer, str | os.PathLike):
        path = Path(tokenizer)
        if path.is_file():
            if path.suffix == ".model":
                return SentencePieceModel.load(path)
            raise ValueError(f"{what} {os.fspath(tokenizer)!r} is a file but not a SentencePiece .model; pass a "
                             "tokenizer folder, or load other files first (hf_bpe.tools.convert.load_any)")
        if not path.is_dir():
            raise FileNotFoundError(f"{what} {os.fspath(tokenizer)!r} does not exist; expected {_ACCEPTED}")
        sentencepiece_file = path / "tokenizer.model"
        if sentencepiece_file.is_file():
            try:
                return SentencePieceModel.read(sentencepiece_file.read_bytes(), os.fspath(sentencepiece_file))
            except ValueError:
                pass  # Llama 3's original folder has a tiktoken file named tokenizer.model: byte-level after all
        return BPEModel.load(path)
    raise TypeError(f"{what} must be {_ACCEPTED}; got {type(tokenizer).__name__} {excerpt(tokenizer)}")


def _size(model: TokenizerModel) -> int:
    return len(model.pieces) if isinstance(model, SentencePieceModel) else model.vocab_size


def check_extension(base: TokenizerModel, extended: TokenizerModel) -> None:
    """Raise unless ``extended`` keeps every id of ``base`` with the same token and adds ids only after them.

    Byte-level: every id below the base's size has the same bytes and the same kind (regular or special) in
    both, and every id from there to the extended's size is used. SentencePiece: the first pieces of ``extended``
    are the base's pieces (text and type; scores may differ).

    Raises:
        TypeError: the two are of different kinds.
        ValueError: naming the first id that differs, with what each tokenizer has there.
    """
    if type(base) is not type(extended):
        raise TypeError(f"base is a {type(base).__name__} but extended is a {type(extended).__name__}; pass the "
                        "base tokenizer and the tokenizer extended from it (both byte-level, or both SentencePiece)")
    n_base, n_extended = _size(base), _size(extended)
    if n_extended < n_base:
        raise ValueError(f"extended has {n_extended:,} ids, fewer than the base's {n_base:,}: it is not an extension "
                         "of base (an extension keeps every base id and appends new ones); are they swapped?")
    if isinstance(base, SentencePieceModel):
        assert isinstance(extended, SentencePieceModel)
        for index, (old, new) in enumerate(zip(base.pieces, extended.pieces)):
            if (old.piece, old.type) != (new.piece, new.type):
                raise ValueError(f"extended is not an extension of base: id {index} is {excerpt(old.piece)} (type "
                                 f"{old.type}) in base but {excerpt(new.piece)} (type {new.type}) in extended; an "
                                 "extension keeps every base piece at its id")
        return
    assert isinstance(extended, BPEModel)
    # 1. Every base id has its token in extended (regular tokens by bytes, special tokens by text).
    for table, other in ((base.vocab, extended.vocab), (base.special_tokens, extended.special_tokens)):
        for token, index in table.items():
            if other.get(token) != index:  # type: ignore[call-overload]
                _differs(base, extended, index)
    # 2. No id below the base's size that base leaves unused is taken in extended.
    if sum(i < n_base for i in extended.vocab.values()) != len(base.vocab) or \
            sum(i < n_base for i in extended.special_tokens.values()) != len(base.special_tokens):
        used = {*base.vocab.values(), *base.special_tokens.values()}
        taken = sorted(i for i in (*extended.vocab.values(), *extended.special_tokens.values())
                       if i < n_base and i not in used)
        _differs(base, extended, taken[0])
    # 3. The new ids are contiguous: each gets a row.
    used = {*extended.vocab.values(), *extended.special_tokens.values()}
    if len(used) - _used(base) != n_extended - n_base:
        hole = next(i for i in range(n_base, n_extended) if i not in used)
        raise ValueError(f"extended has no token with id {hole} (its new ids run {n_base}..{n_extended - 1}); the "
                         "new ids of an extension must be contiguous, so that each embedding row belongs to a token")


def _used(model: BPEModel) -> int:
    """The number of distinct ids in use (a special token may share its id with the regular token it spells)."""
    return len({*model.vocab.values(), *model.special_tokens.values()})


def _differs(base: BPEModel, extended: BPEModel, index: int) -> None:
    def show(model: BPEModel) -> str:
        try:
            token = model.id_to_bytes(index)
        except ValueError:
            return "unused"
        kind = "special " if index in set(model.special_tokens.values()) else ""
        return f"the {kind}token {excerpt(token)}"

    raise ValueError(f"extended is not an extension of base: id {index} is {show(base)} in base but {show(extended)} "
                     "in extended; an extension keeps every base id with its bytes (pass the tokenizer that "
                     "hf_bpe.extend made from this base)")


def _raw_sentencepiece(model: SentencePieceModel) -> Any:
    """A ``sentencepiece`` processor of ``model`` that segments text as it is: no normalization at all."""
    import sentencepiece

    # An empty charsmap is the identity; no dummy prefix, spaces kept (and not escaped: a piece's text is already
    # what the model sees).
    normalizer = dict(model.normalizer, name="identity", precompiled_charsmap=b"", add_dummy_prefix=False,
                      remove_extra_whitespaces=False, escape_whitespaces=False)
    processor = sentencepiece.SentencePieceProcessor()
    processor.LoadFromSerializedProto(SentencePieceModel(model.pieces, model.trainer, normalizer).to_bytes())
    return processor


def base_splits(base: Any, extended: Any) -> list[list[int]]:
    """Return, for each new id of ``extended`` in order, the base ids the base tokenizer splits that token into.

    Args:
        base, extended: tokenizers as :func:`new_token_embeddings` takes them.

    Raises:
        TypeError, ValueError: see :func:`new_token_embeddings`.

    >>> import hf_bpe
    >>> corpus = ["low lower lowest"] * 8
    >>> base = hf_bpe.train(corpus, vocab_size=258, show_progress=False)  # merges: l o, lo w
    >>> extended = hf_bpe.train(corpus, vocab_size=260, show_progress=False)  # and: ' ' low, ' low' e
    >>> [[base.id_to_bytes(i) for i in split] for split in base_splits(base, extended)]
    [[b' ', b'low'], [b' ', b'low', b'e']]
    """
    base_model, extended_model = as_tokenizer_model(base, "base"), as_tokenizer_model(extended, "extended")
    check_extension(base_model, extended_model)
    new_ids = range(_size(base_model), _size(extended_model))
    if isinstance(base_model, SentencePieceModel):
        assert isinstance(extended_model, SentencePieceModel)
        texts = [extended_model.pieces[i].piece for i in new_ids]
        splits: list[list[int]] = _raw_sentencepiece(base_model).encode(texts) if texts else []
    else:
        assert isinstance(extended_model, BPEModel)
        splits = [base_model.encode_word(extended_model.id_to_bytes(i)) for i in new_ids]
    for index, split in zip(new_ids, splits):
        if not split:  # only a byte-level base without some byte tokens drops bytes
            raise ValueError(f"the base tokenizer splits the new token {index} "
                             f"({excerpt(token_text(extended_model, index))}) into no tokens at all (its vocabulary "
                             "lacks the token's bytes), so it has no base rows to average")
    return splits


def token_text(model: TokenizerModel, index: int) -> str:
    """Return a token as readable text: a SentencePiece piece as it is; byte-level bytes as UTF-8, each byte that
    is not part of a UTF-8 character as ``\\xNN`` (``"\\xe4\\xb8"``: two bytes of a CJK character).

    >>> token_text(BPEModel.bytes_only(), 0xe4)
    '\\\\xe4'
    """
    if isinstance(model, SentencePieceModel):
        return model.pieces[index].piece
    return model.id_to_bytes(index).decode("utf-8", "backslashreplace")


def new_token_embeddings(base: Any, extended: Any, embeddings: Any) -> Any:
    """Return embedding rows for the tokens ``extended`` adds to ``base``: each the mean of the base rows of the
    tokens the base splits the new token into (see the module's docstring for what "splits" means exactly).

    Args:
        base: the base tokenizer (:func:`as_tokenizer_model`: a ``BPEModel``, a ``SentencePieceModel``,
            ``HFBPETokenizer`` / ``HFSentencePieceTokenizer``, or a folder / ``.model`` path).
        extended: the extended tokenizer, of the same kind: every base id kept, new ids appended.
        embeddings: a 2-D floating-point numpy array or torch tensor with a row for every base id (more rows are
            fine: a model whose matrix is padded, or one already resized; only the base's rows are read), e.g.
            ``model.get_input_embeddings().weight``.

    Returns:
        The rows of ids ``len(base) .. len(extended) - 1``, in order, shape ``(len(extended) - len(base), width)``:
        a numpy array, or a torch tensor (not requiring grad) on the input's device, of the input's dtype. After
        ``model.resize_token_embeddings(len(extended))`` they go to ``weight[len(extended) - len(rows):len(extended)]``
        (the module's docstring has the lines).

    Raises:
        TypeError: tokenizers of an unknown or of different kinds; embeddings that are not a floating-point numpy
            array or torch tensor.
        ValueError: ``extended`` is not an extension of ``base`` (the first differing id is named); embeddings not
            2-D, or with fewer rows than the base has ids.

    >>> import numpy as np, hf_bpe
    >>> corpus = ["low lower lowest"] * 8
    >>> base = hf_bpe.train(corpus, vocab_size=258, show_progress=False)  # merges: l o, lo w
    >>> extended = hf_bpe.train(corpus, vocab_size=260, show_progress=False)  # and: ' ' low, ' low' e
    >>> table = np.zeros((258, 1)); table[base.encode_word(b" ")] = 2.0; table[base.encode_word(b"low")] = 4.0
    >>> new_token_embeddings(base, extended, table)  # b" low": b" " + b"low"; b" lowe": b" " + b"low" + b"e"
    array([[3.],
           [2.]])
    """
    base_model = as_tokenizer_model(base, "base")
    library = _array_library(embeddings)
    shape = tuple(embeddings.shape)
    if len(shape) != 2:
        raise ValueError(f"embeddings must be 2-D (one row per token id), got shape {shape}")
    if shape[0] < _size(base_model):
        raise ValueError(f"embeddings has {shape[0]:,} rows but the base tokenizer has {_size(base_model):,} ids; "
                         "pass the model's embedding matrix, with a row for every base id (e.g. "
                         "model.get_input_embeddings().weight)")
    splits = base_splits(base_model, extended)
    return _means_torch(embeddings, splits) if library == "torch" else _means_numpy(embeddings, splits)


def _array_library(embeddings: Any) -> str:
    torch = sys.modules.get("torch")  # a torch tensor implies torch was imported: never import it here
    if torch is not None and isinstance(embeddings, torch.Tensor):
        if not (embeddings.is_floating_point()):
            raise TypeError(f"embeddings must be floating-point, got a torch tensor of dtype {embeddings.dtype}")
        return "torch"
    import numpy as np

    if isinstance(embeddings, np.ndarray):
        if not np.issubdtype(embeddings.dtype, np.floating):
            raise TypeError(f"embeddings must be floating-point, got a numpy array of dtype {embeddings.dtype}")
        return "numpy"
    raise TypeError(f"embeddings must be a numpy array or a torch tensor, got {type(embeddings).__name__}; convert "
                    "it (numpy.asarray(...)) or pass the model's weight tensor")


def _groups(splits: Sequence[list[int]]) -> dict[int, tuple[list[int], list[list[int]]]]:
    """Rows grouped by split length: length -> (positions in the output, the splits), so that each group is one
    gather of shape (rows, length, width) and one mean over its middle axis."""
    groups: dict[int, tuple[list[int], list[list[int]]]] = {}
    for position, split in enumerate(splits):
        rows, members = groups.setdefault(len(split), ([], []))
        rows.append(position)
        members.append(split)
    return groups


def _chunks(groups: dict[int, tuple[list[int], list[list[int]]]], width: int):
    for length, (rows, members) in sorted(groups.items()):
        step = max(1, _GATHER_ELEMENTS // max(1, length * width))
        for start in range(0, len(rows), step):
            yield rows[start:start + step], members[start:start + step]


def _means_numpy(embeddings: Any, splits: Sequence[list[int]]) -> Any:
    import numpy as np

    width = embeddings.shape[1]
    accumulate = np.promote_types(embeddings.dtype, np.float32)
    out = np.empty((len(splits), width), dtype=embeddings.dtype)
    for rows, members in _chunks(_groups(splits), width):
        gathered = embeddings[np.asarray(members, dtype=np.int64)]  # (rows, length, width)
        out[np.asarray(rows, dtype=np.int64)] = gathered.mean(axis=1, dtype=accumulate).astype(embeddings.dtype)
    return out


def _means_torch(embeddings: Any, splits: Sequence[list[int]]) -> Any:
    import torch

    source = embeddings.detach()
    width = source.shape[1]
    accumulate = torch.promote_types(source.dtype, torch.float32)
    out = torch.empty((len(splits), width), dtype=source.dtype, device=source.device)
    with torch.no_grad():
        for rows, members in _chunks(_groups(splits), width):
            index = torch.tensor(members, dtype=torch.long, device=source.device)
            out[torch.tensor(rows, dtype=torch.long, device=source.device)] = \
                source[index].to(accumulate).mean(dim=1).to(source.dtype)
    return out
