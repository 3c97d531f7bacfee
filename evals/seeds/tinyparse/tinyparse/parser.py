"""Recursive-descent parser producing tuple-based syntax trees.

Grammar, loosest binding first::

    expr       := additive [("<" | "<=" | ">" | ">=" | "==" | "!=") additive]
    additive   := term (("+" | "-") term)*          left-associative
    term       := unary (("*" | "/" | "%") unary)*   left-associative
    unary      := "-" unary | power
    power      := primary ["^" unary]                right-associative
    primary    := NUM | NAME | NAME "(" [expr ("," expr)*] ")" | "(" expr ")"

Nodes: ``("num", value)``, ``("var", name)``, ``("neg", operand)``,
``("bin", op, left, right)`` and ``("call", name, [args])``.
"""

from tinyparse.tokens import ParseError, tokenize

COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


class _Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.index = 0

    def peek(self):
        return self.tokens[self.index]

    def advance(self):
        token = self.tokens[self.index]
        self.index += 1
        return token

    def accept_op(self, *ops):
        token = self.peek()
        if token.kind == "OP" and token.text in ops:
            self.index += 1
            return token.text
        return None

    def expect(self, kind):
        token = self.peek()
        if token.kind != kind:
            raise ParseError(f"expected {kind}, found {token.kind}", token.pos)
        return self.advance()

    def expr(self):
        left = self.additive()
        op = self.accept_op(*COMPARISONS)
        if op is not None:
            left = ("bin", op, left, self.additive())
        return left

    def additive(self):
        node = self.term()
        while (op := self.accept_op("+", "-")) is not None:
            node = ("bin", op, node, self.term())
        return node

    def term(self):
        node = self.unary()
        while (op := self.accept_op("*", "/", "%")) is not None:
            node = ("bin", op, node, self.unary())
        return node

    def unary(self):
        if self.accept_op("-") is not None:
            return ("neg", self.unary())
        return self.power()

    def power(self):
        base = self.primary()
        if self.accept_op("^") is not None:
            return ("bin", "^", base, self.unary())
        return base

    def primary(self):
        token = self.advance()
        if token.kind == "NUM":
            value = float(token.text) if "." in token.text else int(token.text)
            return ("num", value)
        if token.kind == "NAME":
            if self.peek().kind == "LPAREN":
                self.advance()
                return ("call", token.text, self.arguments())
            return ("var", token.text)
        if token.kind == "LPAREN":
            node = self.expr()
            self.expect("RPAREN")
            return node
        raise ParseError(f"unexpected {token.kind} {token.text!r}", token.pos)

    def arguments(self):
        args = []
        if self.peek().kind == "RPAREN":
            self.advance()
            return args
        args.append(self.expr())
        while self.peek().kind == "COMMA":
            self.advance()
            args.append(self.expr())
        self.expect("RPAREN")
        return args


def parse(text):
    """Parse ``text`` into a syntax tree; raise ParseError on bad input."""
    parser = _Parser(tokenize(text))
    node = parser.expr()
    parser.expect("END")
    return node
