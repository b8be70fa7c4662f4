"""Text handling below the judges and the gate: words, numbers, names, sentences, claim matching.

``words`` is the small, dependency-free toolkit the offline judge reads text with; ``matching``
decides when two claims are the same claim re-worded and whether a quote occurs in a context.
"""
