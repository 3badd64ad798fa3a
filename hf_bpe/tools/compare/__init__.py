"""Cross-validate hf_bpe against `tokenizers` and SentencePiece on one corpus, in one command.

:func:`compare` splits a corpus into a training split and a held-out split (deterministically, by a hash of each
document's index and a seed), trains hf_bpe, `tokenizers`' ``BpeTrainer`` and SentencePiece BPE on the same
training split (or loads already-trained models), and writes ``report.json``, ``report.md`` and ``report.png``.

Peers and their configuration
-----------------------------
- ``tokenizers``: ``BPE()`` model, ``ByteLevel(add_prefix_space=False)`` pre-tokenizer (for a pattern other than
  ``gpt2``: ``Split(pattern, "isolated")`` then ``ByteLevel(use_regex=False)``), ``BpeTrainer(vocab_size,
  min_frequency, special_tokens, initial_alphabet=ByteLevel.alphabet())``: the configuration hf_bpe reproduces
  merge for merge, so its merges, ids and encodings must be *equal*.
- ``sentencepiece``: ``model_type=bpe, byte_fallback=True, normalization_rule_name=identity,
  input_sentence_size=0, character_coverage=1.0``, plus ``add_dummy_prefix=False, remove_extra_whitespaces=False``
  so that it sees exactly the text hf_bpe sees, ``user_defined_symbols`` = the special tokens, and
  ``max_sentence_length`` raised to the longest document. A different algorithm (character base, no
  pre-tokenizer regex, ``▁`` as space), so it is compared by *metrics*.

Unigram (``algorithm="unigram"``, CLI ``--algorithm unigram``)
--------------------------------------------------------------
The same peers, other roles: hf_bpe's ``train_unigram(...)`` and ``sentencepiece``'s
``spm_train --model_type=unigram`` train on the same options (spm_train's defaults with every sentence kept,
``num_threads`` as given, default 16) and must be *identical*: pieces, float32 score bits, types and the ids of
every held-out document (by sentencepiece with each model, and by hf_bpe's own ``UnigramModel``);
`tokenizers`' ``UnigramTrainer`` (a port, set up as its ``SentencePieceUnigramTokenizer``) is compared by
*metrics*. A flag rather than new peer names: ``--against`` and ``--model`` keep naming libraries.

Each trainer runs in a fresh, isolated Python child process (``python -I``: nothing in the working directory is
imported) that imports only its own library and reads the training split from the same temporary file into a list
first (one still running after ``peer_timeout`` seconds, default 3600, is killed and reported as timed out). The
report gives the wall time of the training call alone, and the peak resident set size (``ru_maxrss``) of that child
(the largest of the child and its worker processes), next to its baseline (after imports and loading the split,
before training).

The report's schema is in :mod:`hf_bpe.tools.compare.schema`. The modules: ``split`` (training and held-out
splits), ``child`` (one trainer in one process), ``evaluated`` (each tokenizer seen by the metrics), ``merges``
(merge comparison and the 32-bit overflow explanation), ``metrics``, ``run`` (:func:`compare`), ``markdown`` and
``chart`` (the report files; the chart needs matplotlib, the optional extra ``plot``). The peers' configuration is :mod:`hf_bpe.tools.peers`.

>>> [i for i in range(20) if is_heldout(i, fraction=0.25, seed=0)]
[1, 4, 5, 18]
"""

from __future__ import annotations

from .chart import render_chart
from .markdown import render_markdown, summary
from .merges import compare_merges
from .run import compare
from .schema import PEERS, REPORT_SCHEMA_VERSION
from .split import is_heldout

__all__ = [
    "PEERS",
    "REPORT_SCHEMA_VERSION",
    "compare",
    "compare_merges",
    "is_heldout",
    "render_chart",
    "render_markdown",
    "summary",
]
