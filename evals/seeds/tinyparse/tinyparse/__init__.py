"""tinyparse: tokenize, parse, evaluate and format small arithmetic expressions."""

from tinyparse.evaluator import EvalError, calculate, evaluate, variables
from tinyparse.formatter import format_expr
from tinyparse.parser import parse
from tinyparse.tokens import ParseError, Token, tokenize

__all__ = [
    "EvalError",
    "ParseError",
    "Token",
    "calculate",
    "evaluate",
    "format_expr",
    "parse",
    "tokenize",
    "variables",
]
