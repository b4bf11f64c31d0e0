"""Vector stores behind the retrieval seam (`ragshield.rag.store`), one module per store."""
