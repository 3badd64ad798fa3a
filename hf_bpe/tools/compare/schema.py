"""What ``report.json`` holds: its schema version, the peers, how memory is measured.

The report's layout (``schema_version`` 1)::
    schema_version: 1
    versions: {hf_bpe, python, tokenizers, sentencepiece, ...}     # None: not installed
    options: {vocab_size, min_frequency, special_tokens, pattern, against, heldout_fraction, heldout_seed, workers,
              algorithm: "bpe" | "unigram", num_threads: int | None}    # num_threads: unigram only
    corpus: {source: [str], fingerprint: {order, sha256, documents, bytes},
             documents, bytes, characters, train: {documents, bytes, characters}, heldout: {...},
             subsets: [{name, documents, bytes, characters}]}     # held-out documents of each file
    memory_measure: str                                            # how peak memory was measured
    tokenizers: {NAME: {status, version, path, vocab_size, configuration, warnings: [str], error,
                        training: {seconds, peak_rss_bytes, baseline_rss_bytes} | None}}
        # NAME in hf_bpe, tokenizers, sentencepiece; status: trained | loaded | not requested | not installed
        # | failed | timed out (still training after peer_timeout seconds)
    heldout: {NAME: {all: METRICS, subsets: {subset name: METRICS}}}
        # METRICS: {documents, tokens, bytes, characters, tokens_per_byte, tokens_per_char, roundtrip_documents,
        #           roundtrip_rate, byte_fallback_tokens, byte_fallback_rate, unknown_tokens, unknown_rate}
        # byte fallback: SentencePiece <0xNN> pieces; for byte-level BPE, tokens that are not valid UTF-8
        # alone (a character split across tokens).
    vs_tokenizers: {status, error,
                    merges: {identical, hf_bpe, peer, first_difference: None | {rank, hf_bpe: {pair, count},
                             peer: {pair, count}}, reason},
                    vocab: {identical, hf_bpe, peer, differences, examples: [{token, hf_bpe, peer}]},
                    encode: {equal, total, rate, first_mismatch: None | {subset, document, position, hf_bpe,
                             peer}}}
    vs_sentencepiece: {status, error,
                       vocab_overlap: {convention, hf_bpe, sentencepiece, shared, jaccard, hf_bpe_share,
                                       sentencepiece_share},
                       segmentation: {equal, total, rate, boundary_f1},
                       newline_byte_fallback: {tokens, share_of_byte_fallback, newline_is_a_piece}}
    vs_sentencepiece_exact: {status, error, pieces: {identical, total, first_difference: None | {id, hf_bpe,
                             sentencepiece}}, scores_identical, types_identical, encode: {equal, total, rate},
                             seconds}          # only when sentencepiece is compared
    # algorithm "unigram": vs_tokenizers and vs_sentencepiece are {status: "not requested", error} (byte-level BPE
    # sections); vs_sentencepiece_exact compares the two trained tokenizer.model files (seconds None) and adds
    # encode_hf_bpe: {equal, total, rate} (hf_bpe's own UnigramModel vs sentencepiece's ids); and
    vs_tokenizers_unigram: {status, error, vocab_overlap: {convention, hf_bpe, tokenizers, shared, jaccard,
                            hf_bpe_share, tokenizers_share}, segmentation: {equal, total, rate, boundary_f1},
                            newline_byte_fallback: None}
    notes: [str]
    files: {json, markdown, chart (None when matplotlib is not installed), models: {NAME: path}}

Rates are ``None`` when their total is 0. Pairs are written in the byte-level alphabet, as in ``merges.txt``.
"""

from __future__ import annotations

__all__ = ["ALGORITHMS", "MEMORY_MEASURE", "NAMES", "PEERS", "REPORT_SCHEMA_VERSION"]

REPORT_SCHEMA_VERSION = 1
PEERS = ("tokenizers", "sentencepiece")
ALGORITHMS = ("bpe", "unigram")
NAMES = ("hf_bpe", *PEERS)
MEMORY_MEASURE = (
    "peak resident set size (ru_maxrss) of a fresh Python child process that imports only the trainer's library, "
    "the maximum over that process and its worker processes; baseline = the same after imports and loading the "
    "training split, before training"
)
