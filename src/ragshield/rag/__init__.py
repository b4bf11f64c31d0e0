"""The RAG parts below the guards: chunking, embedding, indexing, retrieval and prompting.

The pipeline that composes them with the guards is `ragshield.pipeline`.
"""
