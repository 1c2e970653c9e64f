"""The message a model gets when the egress check refuses a call (``egress_refusal``).

Separate from the search (app.core.permissions.egress) because this is wording for the model,
not detection: it changes for different reasons (what the model should do next) and needs
nothing of the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from app.core.permissions.secret_formats import KIND_LABELS, SecretHit

__all__ = ["egress_refusal"]

_MAX_LISTED: Final = 5


def _describe(hit: SecretHit) -> str:
    if hit.kind == "learnt":
        what = f"a value from {hit.source} ({hit.masked})"
    else:
        what = f"{KIND_LABELS.get(hit.kind, hit.kind)} ({hit.masked}, a well-known token format)"
    if hit.encoding == "base64":
        return f"{what}, base64-encoded"
    if hit.encoding:
        return f"{what}, {hit.encoding}"
    return what


def egress_refusal(hits: Sequence[SecretHit]) -> str:
    """The message the model gets when a call is refused for the secrets in its input."""
    if not hits:
        raise ValueError("egress_refusal needs at least one hit")
    described = list(dict.fromkeys(_describe(hit) for hit in hits))
    listed = "; ".join(described[:_MAX_LISTED])
    if len(described) > _MAX_LISTED:
        listed += f"; and {len(described) - _MAX_LISTED} more"
    verb = "appears" if len(described) == 1 else "appear"
    return (
        "Refused: this call would send a secret out of the machine: "
        f"{listed} {verb} in its input. "
        "Do not send secrets, or anything derived from them (encoded, split or partial), to "
        "websites, searches, commands or tools; leave them out of the call. If the user really "
        "wants this, tell them and ask them to do it themselves.")
