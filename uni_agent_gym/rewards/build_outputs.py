"""Build outputs: the compiled files an agent's build leaves in the repository, which its patch leaves out.

An agent that runs the repository's own build or tests before it finishes (`go test -c`, `make`, `cargo build`,
`mvn package`) leaves what they compile beside the sources. Where the repository's rules do not ignore those files
(a release tarball has no `.gitignore`), they once went into the patch: gin's 19 MB `gin.test` made a correct fix
`patch_rejected`. So the capture (`capture.py`) leaves out, besides what the start's rules ignore and the files the
image itself holds untracked, a new file whose first bytes say it is compiled code or a library archive: an ELF or
Mach-O binary (executables, object files, shared objects), a Java class file, an `ar` archive (`.a`, Rust's
`.rlib`), a Java archive (a zip named `.jar`, `.war`, `.ear`). Gold patches are source: none adds such a file, so
no correct fix needs one. What is read is the file's content, not its name or mode (a `.o` of text stays).

Leaving a file out opens no reward hack. The tests run in a fresh sandbox of the task that gets only the patch
(docs/rewards.md, "Grade the patch, not the sandbox"): a file left out does not exist there, exactly as if the agent
had never made it. A real change hidden as a "binary" that the build or the tests then load (a correct `add` compiled
into an object the Makefile links; `tests/test_build_outputs.py` tries it) is missing when they run, so the build or
the tests fail; a file whose absence would help the agent it could have deleted itself. Tracked files always count.
The classification reads bytes the agent wrote, but only to leave a file out: it decides nothing in the agent's favour.
"""

from __future__ import annotations

import stat

HEAD_BYTES = 32  # how much of a file tells what it is (ELF's type field ends at byte 18)
MAX_CLASSIFIED = 50_000  # new files read to tell build outputs apart; more are left as the agent's (and its budget's)

_ELF_TYPES = {1: "an ELF object file", 2: "an ELF executable", 3: "an ELF executable or shared library", 4: "an ELF core dump"}
_MACH_O = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")
_JAVA_ARCHIVES = (".jar", ".war", ".ear")


def output_kind(path: str, head: bytes) -> str | None:
    """What compiled file or library a file at `path` starting with `head` is (the reason it is left out), or None
    for anything a fix may add (source, text, scripts, data, images)."""
    if head.startswith(b"\x7fELF"):
        big_endian = head[5:6] == b"\x02"
        e_type = int.from_bytes(head[16:18], "big" if big_endian else "little") if len(head) >= 18 else 0
        return f"compiled code ({_ELF_TYPES.get(e_type, 'an ELF file')})"
    if head.startswith(b"!<arch>\n"):
        return "a static library (an ar archive)"
    if head[:4] in _MACH_O:
        return "compiled code (a Mach-O binary)"
    if head.startswith(b"\xca\xfe\xba\xbe"):
        return "compiled code (a Java class file or a Mach-O universal binary)"
    if head.startswith(b"PK\x03\x04") and path.lower().endswith(_JAVA_ARCHIVES):
        return "a Java archive"
    return None


def regular_output_kind(path: str, mode: int, head: bytes) -> str | None:
    """`output_kind` of a regular file; None for a directory, link or anything else (those are never left out here)."""
    return output_kind(path, head) if stat.S_ISREG(mode) else None
