"""The issue-12 eval: replay months of memory traffic through the real stack and score retrieval.

See `bench/eval/__main__.py` for how to run it and `bench/data/README.md` for the dataset.
"""
