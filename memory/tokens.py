"""Token lengths (L in UGC) by the tokenizer bundled with all-MiniLM-L6-v2: no download, no model.

Only the `tokenizers` library loads (milliseconds), not torch. The packaged tokenizer.json pads
and truncates to 128 for the model; lengths must be the text's own, so both are switched off.
"""

from __future__ import annotations

from collections.abc import Sequence


class TokenCounter:
    def __init__(self):
        self._tok = None

    def _load(self):
        if self._tok is None:
            from tokenizers import Tokenizer

            from sage_npu.memory.embeddings import minilm_model_dir

            tok = Tokenizer.from_file(str(minilm_model_dir() / "tokenizer.json"))
            tok.no_padding()
            tok.no_truncation()
            self._tok = tok
        return self._tok

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self._load().encode_batch(list(texts), add_special_tokens=False)]

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of `text` (cut at a token boundary) with at most max_tokens tokens."""
        enc = self._load().encode(text, add_special_tokens=False)
        if len(enc.ids) <= max_tokens:
            return text
        end = enc.offsets[max_tokens - 1][1]
        return text[:end]
