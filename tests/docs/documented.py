"""What the README and the pages under docs/ show: their fenced code blocks, and the commands and numbers in them.

The conventions (also in docs/architecture.md, "These pages"):

- every line of a `sh`/`bash`/`shell` block is a command (a trailing `\\`
  continues it; a line that is only a comment is not one), and every `$ `
  line of a `console` block, or of an unlabelled block, is one; the lines
  after a `$ ` line are its shown output;
- `exit N` in a command's trailing comment or in its shown output is the
  exit status expected (0 otherwise);
- a decimal number in that comment or output must appear in what the
  command prints, at the precision shown; in a `python` block, the same for
  the trailing comment of a line that calls `print(`;
- `<!-- docs-test: WORDS (reason) -->` on the line before a block marks it:
  `slow`, `unseeded` (numbers not checked) or `skip`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELL = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)[^`]*$")
MARK = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<words>[a-z ]*?)\s*(?:\((?P<reason>.*)\))?\s*-->\s*$")
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
EXIT = re.compile(r"\bexit (?:status )?(\d+)\b")
COMMAND_LIKE = re.compile(r"^\s*(?:dpaudit|python3?|make|pip|PYTHONPATH=\S*)\s")


def pages() -> list[Path]:
    """Return the README and every Markdown page of the site, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text and its docs-test marks."""

    page: str
    line: int
    lang: str
    text: str
    marks: frozenset[str] = frozenset()
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Command:
    """One shell command of a block, with the exit status and the numbers the page shows for it."""

    text: str
    comment: str = ""
    shown: str = ""
    status: int = 0
    numbers: tuple[str, ...] = field(default=())


def blocks(path: Path) -> list[Block]:
    """Return the fenced code blocks of the Markdown file `path`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(previous)
        body, j = [], i + 1
        while j < len(lines) and not (lines[j].strip().startswith(fence[0] * len(fence)) and lines[j].strip().strip(fence[0]) == ""):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        found.append(Block(
            page=str(path.relative_to(ROOT)), line=i + 1, lang=opening["info"].lower(), text="\n".join(body),
            marks=frozenset(mark["words"].split()) if mark else frozenset(), reason=(mark["reason"] or "") if mark else "",
        ))
        i = j + 1
    return found


def split_comment(line: str) -> tuple[str, str]:
    """Return (command, trailing comment) of a shell line; a `#` inside quotes or a word is not a comment."""
    quote = None
    for k, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k].rstrip(), line[k + 1:].strip()
    return line.rstrip(), ""


def _command(text: str, comment: str, shown: str, check_numbers: bool) -> Command:
    said = f"{comment}\n{shown}"
    status = EXIT.search(said)
    return Command(text=text, comment=comment, shown=shown, status=int(status[1]) if status else 0,
                   numbers=tuple(NUMBER.findall(said)) if check_numbers else ())


def is_console(block: Block) -> bool:
    """Return True for a block of `$ ` commands and their output (`console`, or unlabelled with `$ ` lines)."""
    has_prompt = any(line.startswith("$ ") for line in block.text.splitlines())
    return block.lang == "console" or (block.lang in SHELL | {""} and has_prompt)


def commands(block: Block) -> list[Command]:
    """Return the shell commands of `block` (none for a block that is neither shell nor console)."""
    check = "unseeded" not in block.marks
    if is_console(block):
        found: list[tuple[str, str, list[str]]] = []
        for line in block.text.splitlines():
            if line.startswith("$ "):
                text, comment = split_comment(line[2:])
                found.append((text, comment, []))
            elif found:
                found[-1][2].append(line)
        return [_command(text, comment, "\n".join(shown), check) for text, comment, shown in found]
    if block.lang not in SHELL:
        return []
    found_lines: list[Command] = []
    pending = ""
    for line in block.text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        text, comment = split_comment(line)
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        found_lines.append(_command(pending + text, comment, "", check))
        pending = ""
    return found_lines


def printed_numbers(block: Block) -> tuple[str, ...]:
    """Return the numbers a Python block says it prints: those in the trailing comments of its `print(` lines."""
    if "unseeded" in block.marks:
        return ()
    numbers: list[str] = []
    for line in block.text.splitlines():
        if "print(" in line and "#" in line:
            numbers += NUMBER.findall(line.split("#", 1)[1])
    return tuple(numbers)


def shows(number: str, output: str) -> bool:
    """Return True when `output` holds a number that rounds to `number` at its precision (or is written more finely)."""
    decimals = len(number.split(".")[1])
    target = float(number)
    for token in re.findall(r"\d+(?:,\d{3})*\.\d+(?:[eE][-+]?\d+)?", output):
        written = token.split(".")[1].split("e")[0].split("E")[0]
        if len(written) >= decimals and abs(float(token.replace(",", "")) - target) <= 0.5 * 10 ** -decimals + 1e-12:
            return True
    return False
