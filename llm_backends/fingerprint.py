"""Digests of what determines a local engine's answers: weights, tokenizer, chat template.

Weights loaded from a folder are named by the SHA-256 of their files' bytes, memoised on disk
by (absolute path, size, modification time) under `<cache_root>/file_digests/`, so a 500 MB
checkpoint is read once, not at every start, and two different checkpoints saved under the
same folder name in two places get different digests (a retrained file in place changes its
size or modification time). Weights held only in memory are named by a digest of the state
dict (names, dtypes, shapes and bytes of every tensor).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import torch

from llm_backends.paths import cache_root

WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.gguf", "config.json", "generation_config.json")
"""The files of a checkpoint folder whose bytes determine the model (tokenizer files are digested apart)."""
CHUNK_BYTES = 1 << 24


def sha256_file(path: Path) -> str:
    """SHA-256 hex digest of a file's bytes, read in 16 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    """`sha256_file(path)`, memoised on disk by (absolute path, size, mtime_ns)."""
    path = path.resolve()
    stat = path.stat()
    stamp = {"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    memo = cache_root() / "file_digests" / f"{hashlib.sha256(str(path).encode()).hexdigest()[:32]}.json"
    try:
        saved = json.loads(memo.read_text())
        if {k: saved.get(k) for k in stamp} == stamp:
            return saved["sha256"]
    except (OSError, ValueError, KeyError, AttributeError):
        pass
    digest = sha256_file(path)
    memo.parent.mkdir(parents=True, exist_ok=True)
    staging = memo.with_name(f"{memo.name}.{os.getpid()}.{threading.get_ident()}")  # threads of one process race too
    staging.write_text(json.dumps({**stamp, "sha256": digest}))
    staging.replace(memo)
    return digest


def folder_digest(folder: Path) -> str:
    """SHA-256 over (file name, file digest) of a checkpoint folder's weight and config files."""
    files = sorted({p for pattern in WEIGHT_PATTERNS for p in folder.glob(pattern) if p.is_file()})
    if not files:
        raise ValueError(f"{folder}: no weight files ({', '.join(WEIGHT_PATTERNS)}) to fingerprint")
    listing = [[p.name, file_digest(p)] for p in files]
    return hashlib.sha256(json.dumps(listing).encode()).hexdigest()


def state_dict_digest(model: torch.nn.Module) -> str:
    """SHA-256 over the name, dtype, shape and bytes of every tensor in `model.state_dict()`."""
    digest = hashlib.sha256()
    for name, tensor in model.state_dict().items():
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}\n".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def tokenizer_digest(tokenizer: Any) -> str:
    """SHA-256 over the tokenizer's full definition (vocabulary, merges, added tokens) and chat template."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    definition = backend.to_str() if backend is not None else json.dumps(sorted(tokenizer.get_vocab().items()))
    payload = json.dumps([definition, tokenizer.chat_template, tokenizer.special_tokens_map], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
