"""Reading a few values from a git config file without running git.

``git_metadata`` needs ``core.hooksPath``, ``core.worktree`` and the include paths of every
config it finds, on every cache miss and before any git is trusted (the git on PATH may be the
project's own, or too old for git_safety's overrides), so it parses the file itself, as git's
config.c does: sections ``[name]``, ``[name "sub"]`` and ``[name.sub]``, a key after ``]`` on
the same line, values with quotes, escapes, ``#``/``;`` comments and backslash continuations,
names case-insensitive. Where a line is not valid git stops reading the file and refuses it;
here the rest of the line is skipped and reading goes on, which can only find more.
"""

from __future__ import annotations

from pathlib import Path

from app.core.safe_read import read_project_file

__all__ = ["MAX_CONFIG_BYTES", "config_values"]

MAX_CONFIG_BYTES = 1 << 22  # a bigger "config" is read up to here
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}


def config_values(path: Path, wanted: frozenset[str]) -> list[tuple[str, str]]:
    """(key, value) for each entry of ``path`` whose lower-cased ``section.key`` (subsections
    left out, so ``includeif.path`` stands for every ``includeIf.<cond>.path``) is in
    ``wanted``, in file order; [] when the file cannot be read."""
    try:  # without blocking: a project's config may be a FIFO or a device
        raw = read_project_file(path, max_bytes=MAX_CONFIG_BYTES, too_large="truncate")
    except OSError:
        return []
    return _Parser(raw.decode("utf-8", "surrogateescape"), wanted).entries()


class _Parser:
    def __init__(self, text: str, wanted: frozenset[str]) -> None:
        self.text = text
        self.pos = 0
        self.wanted = wanted
        self.section = ""
        self.subsection = ""

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def at_blank(self) -> bool:
        """A space or tab next (not the end: ``"" in " \t"`` holds, and a loop on it would
        never end on a file that stops there)."""
        return self.pos < len(self.text) and self.text[self.pos] in " \t"

    def entries(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        while self.pos < len(self.text):
            char = self.peek()
            if char in " \t\r\n":
                self.pos += 1
            elif char in "#;":
                self.skip_line()
            elif char == "[":
                self.pos += 1
                if not self.header():
                    self.skip_line()
            elif char.isalpha():
                entry = self.entry()
                if entry is not None:
                    out.append(entry)
            else:
                self.skip_line()
        return out

    def skip_line(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end + 1

    def header(self) -> bool:
        start = self.pos
        while self.peek() and (self.peek().isalnum() or self.peek() in "-."):
            self.pos += 1
        name = self.text[start:self.pos]
        subsection = ""
        if self.at_blank():
            while self.at_blank():
                self.pos += 1
            if self.peek() != '"':
                return False
            self.pos += 1
            chars: list[str] = []
            while self.peek() and self.peek() not in '"\n':
                if self.peek() == "\\":
                    self.pos += 1
                chars.append(self.peek())
                self.pos += 1
            if self.peek() != '"':
                return False
            self.pos += 1
            subsection = "".join(chars)
        elif "." in name:  # the old [section.subsection] form
            name, _, subsection = name.partition(".")
        if self.peek() != "]" or not name:
            return False
        self.pos += 1
        self.section, self.subsection = name.lower(), subsection
        return True

    def entry(self) -> tuple[str, str] | None:
        start = self.pos
        while self.peek() and (self.peek().isalnum() or self.peek() == "-"):
            self.pos += 1
        key = self.text[start:self.pos].lower()
        while self.at_blank():
            self.pos += 1
        value = ""
        if self.peek() == "=":
            self.pos += 1
            value = self.value()
        elif self.peek() not in ("\n", "\r", "", "#", ";"):
            self.skip_line()
            return None
        else:
            self.skip_line()
        name = f"{self.section}.{key}"
        if name not in self.wanted:
            return None
        full = f"{self.section}.{self.subsection}.{key}" if self.subsection else name
        return full, value

    def value(self) -> str:
        out: list[str] = []
        pending_space = ""
        quoted = False
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == "\n":  # (inside quotes git refuses the file; take what was read)
                break
            if not quoted and char in " \t":
                if out:
                    pending_space += char
                continue
            if not quoted and char in "#;":
                self.skip_line()
                break
            if pending_space:
                out.append(pending_space)
                pending_space = ""
            if char == "\\":
                following = self.peek()
                self.pos += 1
                if following == "\n":
                    continue
                if following == "\r" and self.text[self.pos:self.pos + 1] == "\n":
                    self.pos += 1
                    continue
                out.append(_ESCAPES.get(following, following))
            elif char == '"':
                quoted = not quoted
            elif char != "\r":
                out.append(char)
        return "".join(out)
