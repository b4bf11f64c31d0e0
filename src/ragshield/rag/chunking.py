"""Chunkers: `Document` -> `Chunk`s.

Two strategies from the papers: one record per chunk (TGTB's ChatDoctor and Enron set-up,
RAGFort) and a recursive character splitter (TGTB's WikiText set-up, 1500 characters with
100 characters of overlap).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragshield.errors import ConfigError
from ragshield.types import Chunk, Document


class Chunker(Protocol):
    @property
    def name(self) -> str: ...

    def split(self, documents: Iterable[Document]) -> Iterator[Chunk]: ...


@dataclass(frozen=True)
class RecordChunker:
    """One chunk per document; chunk id = document id."""

    name: str = "record"

    def split(self, documents: Iterable[Document]) -> Iterator[Chunk]:
        for document in documents:
            if document.text.strip():
                yield Chunk(id=document.id, doc_id=document.id, text=document.text, metadata=document.metadata)


@dataclass(frozen=True)
class RecursiveCharacterChunker:
    """Split on paragraph, line, sentence, then word boundaries into pieces of at most
    `chunk_size` characters, consecutive pieces sharing up to `overlap` characters.

    Chunk ids are `<doc id>#<position>`.
    """

    chunk_size: int = 1500
    overlap: int = 100
    separators: Sequence[str] = ("\n\n", "\n", ". ", " ", "")
    name: str = "recursive"

    def __post_init__(self) -> None:
        if self.chunk_size <= 0 or not 0 <= self.overlap < self.chunk_size:
            raise ConfigError("chunk_size must be > 0 and 0 <= overlap < chunk_size")

    def split(self, documents: Iterable[Document]) -> Iterator[Chunk]:
        for document in documents:
            for position, text in enumerate(self.split_text(document.text)):
                yield Chunk(
                    id=f"{document.id}#{position}",
                    doc_id=document.id,
                    text=text,
                    position=position,
                    metadata=document.metadata,
                )

    def split_text(self, text: str) -> list[str]:
        pieces = self._atoms(text, list(self.separators))
        return self._merge(pieces)

    def _atoms(self, text: str, separators: list[str]) -> list[str]:
        """Cut text into atoms no longer than chunk_size, keeping separators attached."""
        if len(text) <= self.chunk_size:
            return [text] if text else []
        separator, rest = separators[0], separators[1:]
        if separator == "":
            return [text[i : i + self.chunk_size] for i in range(0, len(text), self.chunk_size)]
        parts = text.split(separator)
        atoms: list[str] = []
        for index, part in enumerate(parts):
            piece = part + (separator if index < len(parts) - 1 else "")
            if len(piece) <= self.chunk_size:
                if piece:
                    atoms.append(piece)
            else:
                atoms.extend(self._atoms(piece, rest))
        return atoms

    def _merge(self, atoms: list[str]) -> list[str]:
        chunks: list[str] = []
        current: list[str] = []
        length = 0
        for atom in atoms:
            if current and length + len(atom) > self.chunk_size:
                chunks.append("".join(current).strip())
                # carry trailing atoms as overlap while they fit
                carried: list[str] = []
                carried_length = 0
                for previous in reversed(current):
                    if carried_length + len(previous) > self.overlap:
                        break
                    carried.insert(0, previous)
                    carried_length += len(previous)
                current, length = carried, carried_length
            current.append(atom)
            length += len(atom)
        if current and "".join(current).strip():
            chunks.append("".join(current).strip())
        return [chunk for chunk in chunks if chunk]


def make_chunker(name: str, *, chunk_size: int = 1500, overlap: int = 100) -> Chunker:
    """`record` (one record per chunk) or `recursive` (chunk_size / overlap in characters)."""
    if name == "record":
        return RecordChunker()
    if name == "recursive":
        return RecursiveCharacterChunker(chunk_size=chunk_size, overlap=overlap)
    raise ConfigError(f"unknown chunker {name!r}; valid names: record, recursive")
