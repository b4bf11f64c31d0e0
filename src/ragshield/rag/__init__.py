"""The RAG flow: chunking, embedding, indexing, retrieval, prompting and the pipeline."""
