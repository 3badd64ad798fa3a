"""The ``tokenizer.json`` HFBPETokenizer saves: the model's, with the tokenizer's current added tokens and, for
``add_bos_token``/``add_eos_token``, the ``TemplateProcessing`` post-processor that ``GPT2TokenizerFast`` saves for
them (so the fast loaders add the same tokens); and reading the flags back.

>>> template = template_processing(("<s>", 0), None)
>>> template["single"], template_flags(None)
([{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}], (False, False))
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

__all__ = ["saved_tokenizer_json", "template_flags", "template_processing"]


def template_processing(bos: tuple[str, int] | None, eos: tuple[str, int] | None) -> dict[str, Any] | None:
    """Return GPT2TokenizerFast's post-processor for a BOS and/or EOS ``(token, id)`` around each sequence (pairs:
    around both, in turn); None when neither is added."""
    if bos is None and eos is None:
        return None

    def sequence(name: str, type_id: int) -> list[dict[str, Any]]:
        items = [{"SpecialToken": {"id": bos[0], "type_id": type_id}}] if bos else []
        items.append({"Sequence": {"id": name, "type_id": type_id}})
        return items + ([{"SpecialToken": {"id": eos[0], "type_id": type_id}}] if eos else [])

    specials = {token: {"id": token, "ids": [token_id], "tokens": [token]}
                for token, token_id in (end for end in (bos, eos) if end is not None)}
    return {"type": "TemplateProcessing", "single": sequence("A", 0), "pair": sequence("A", 0) + sequence("B", 1),
            "special_tokens": specials}


def template_flags(tokenizer_file: str | os.PathLike[str] | None) -> tuple[bool, bool]:
    """Return ``(add_bos_token, add_eos_token)`` as a ``tokenizer.json``'s ``TemplateProcessing`` post-processor
    applies them (a special token before / after the single sequence); ``(False, False)`` for any other."""
    if tokenizer_file is None or not os.path.isfile(tokenizer_file):
        return False, False
    try:
        with open(tokenizer_file, encoding="utf-8") as handle:
            post = json.load(handle).get("post_processor")
    except (OSError, ValueError, AttributeError, RecursionError):
        return False, False  # the model loader reports a broken tokenizer.json
    if not isinstance(post, dict) or post.get("type") != "TemplateProcessing" or not post.get("single"):
        return False, False
    single = post["single"]
    return "SpecialToken" in single[0], "SpecialToken" in single[-1]


def saved_tokenizer_json(text: str, added_tokens: Mapping[int, Any], template: dict[str, Any] | None) -> str:
    """Return the model's ``tokenizer.json`` text with ``added_tokens`` (id -> ``AddedToken``: the model writes its
    own specials, tokens added since or with other flags go in here) and ``template`` as its post-processor; the
    text unchanged when there is nothing to change."""
    data = json.loads(text)
    wanted = [
        {"id": idx, "content": token.content, "single_word": token.single_word, "lstrip": token.lstrip,
         "rstrip": token.rstrip, "normalized": token.normalized, "special": token.special}
        for idx, token in sorted(added_tokens.items())
    ]
    if data.get("added_tokens") == wanted and template is None:
        return text
    data["added_tokens"] = wanted
    if template is not None:
        data["post_processor"] = template
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
