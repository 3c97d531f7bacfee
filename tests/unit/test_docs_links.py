"""Every relative link in the README, CONTRIBUTING, BENCHMARKS and the docs pages leads somewhere: the file exists
and, when the link names a heading (`page.md#anchor`), the heading is in that page (GitHub's anchor rule); and the
README links every docs page. A page moved or a heading renamed breaks the build, not a newcomer's first click.

    python -m pytest -q tests/unit/test_docs_links.py
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "BENCHMARKS.md", ROOT / "evals/realworld/README.md"]
    + list((ROOT / "docs").glob("*.md"))
)

FENCE = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The page without code blocks and inline code, where a bracket is code, not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped (letters, digits, spaces, - and _ kept), spaces -> -,
    a repeated id numbered -1, -2, ..."""
    seen: dict[str, int] = {}
    ids = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", plain.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def broken_links(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    problems = []
    for target in LINK.findall(prose(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...: not checked here
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"{target}: no such file {shown(dest)}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            problems.append(f"{target}: no heading #{anchor} in {shown(dest)}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page: Path):
    assert broken_links(page) == [], f"broken links in {page.relative_to(ROOT)}"


def test_the_check_sees_a_broken_link_and_anchor(tmp_path: Path):
    (tmp_path / "other.md").write_text("# The `other` page: notes\n\n## Same\n\n## Same\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md) [ok](other.md#the-other-page-notes) [ok](other.md#same-1) ![img](missing.png)\n"
        "[bad](other.md#nowhere) `[code](not-a-link.md)` [web](https://example.com/x.md)\n"
        "```\n[fenced](fenced.md)\n```\n1. a list\n   ```bash\n   [indented](fenced.md)\n   ```\n",
        encoding="utf-8",
    )
    assert [p.split(":")[0] for p in broken_links(page)] == ["missing.png", "other.md#nowhere"]


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {Path(t.partition("#")[0]).as_posix() for t in LINK.findall(prose(readme))}
    missing = [f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")) if f"docs/{p.name}" not in linked]
    assert missing == [], "docs pages the README does not link"
