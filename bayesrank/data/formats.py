"""Names of the pairwise input formats (``bayesrank.data.readers``). No imports, so the command-line
parsers can offer them as ``--format`` choices without loading pandas."""

FORMATS = ("canonical", "battles", "arena_counts", "onehot", "llmfao", "alpaca_eval", "tennis", "scores")
