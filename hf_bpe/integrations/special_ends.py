"""BOS/EOS around each sequence, as ``add_bos_token``/``add_eos_token`` ask: the rule GPT-2's and Llama's fast
tokenizers follow (pairs: around both sequences, in turn), shared by hf_bpe's tokenizer classes.

>>> class Ends(SpecialEndsMixin):
...     add_bos_token, add_eos_token, bos_token_id, eos_token_id = True, True, 1, 2
>>> Ends().build_inputs_with_special_tokens([7], [8]), Ends().get_special_tokens_mask([7], [8])
([1, 7, 2, 1, 8, 2], [1, 0, 1, 1, 0, 1])
"""

from __future__ import annotations

from typing import Any

__all__ = ["SpecialEndsMixin"]


class SpecialEndsMixin:
    """``build_inputs_with_special_tokens`` and ``get_special_tokens_mask`` for a tokenizer with ``add_bos_token``,
    ``add_eos_token``, ``bos_token_id`` and ``eos_token_id``."""

    add_bos_token: bool
    add_eos_token: bool
    bos_token_id: Any
    eos_token_id: Any

    def build_inputs_with_special_tokens(self, token_ids_0: list[int],
                                         token_ids_1: list[int] | None = None) -> list[int]:
        """Add bos/eos around each sequence when ``add_bos_token``/``add_eos_token`` say so."""
        bos = [self.bos_token_id] if self.add_bos_token else []
        eos = [self.eos_token_id] if self.add_eos_token else []
        ids = bos + token_ids_0 + eos
        return ids if token_ids_1 is None else ids + bos + token_ids_1 + eos

    def get_special_tokens_mask(self, token_ids_0: list[int], token_ids_1: list[int] | None = None,
                                already_has_special_tokens: bool = False) -> list[int]:
        """Mark the ids :meth:`build_inputs_with_special_tokens` adds (1) and the sequences' own (0)."""
        if already_has_special_tokens:
            return super().get_special_tokens_mask(  # type: ignore[misc]
                token_ids_0, token_ids_1, already_has_special_tokens=True)
        bos = [1] if self.add_bos_token else []
        eos = [1] if self.add_eos_token else []
        mask = bos + [0] * len(token_ids_0) + eos
        return mask if token_ids_1 is None else mask + bos + [0] * len(token_ids_1) + eos
