"""Release containment: guards that judge what an answer releases, whoever asks."""
