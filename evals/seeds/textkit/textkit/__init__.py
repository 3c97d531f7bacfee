"""textkit: small, dependency-free text utilities."""

from textkit.case import (
    split_words,
    to_camel_case,
    to_kebab_case,
    to_pascal_case,
    to_snake_case,
    to_title_case,
)
from textkit.distance import closest_match, hamming, levenshtein, similarity
from textkit.slug import slugify, truncate
from textkit.wrap import center, indent, wrap

__all__ = [
    "center",
    "closest_match",
    "hamming",
    "indent",
    "levenshtein",
    "similarity",
    "slugify",
    "split_words",
    "to_camel_case",
    "to_kebab_case",
    "to_pascal_case",
    "to_snake_case",
    "to_title_case",
    "truncate",
    "wrap",
]
