"""`copal import --from compass`: the public COMPASS scenario layout into worlds.

The layout is a folder holding `policies/<Org>.json` (`{"allowlist": {name: description},
"denylist": {name: description}}`), `contexts/<Org>.txt` and optionally
`system_prompts/<Org>.txt` and `system_prompts/explicit_refusal_prompts/<Org>.txt`. Each policies
file becomes one world: id = a slug of <Org>, name = <Org>, context = the context text,
`worlds.system_prompt` = the system prompt text (kept verbatim, including any `{context}`
placeholder the public prompts end with), `worlds.explicit_refusal_prompt` = the organisation's
explicit-refusal prompt, kept the same way (a whole system prompt, which the explicit-refusal
variant sends instead of the base one; see compass_variants), policies = the
allowlist entries (kind allow) then the denylist entries (kind deny) in file order, policy id =
the entry's name and policy text = its description. Every policy prompt shows the id beside
the text (`- id (kind): text`), so the name stays visible without being copied into the text.

The layout has no industry, use case or risk tier; the world gets the explicit value
"unspecified" for the first two and the smallest valid tier, "low", which the world schema
forces. Other folders of the layout (payloads/, queries/) are not read.

The organisation's explicit-refusal prompt is stored in `worlds.explicit_refusal_prompt`. A
world stored without one (imported before copal read that folder) gets it from a re-import of
the same folder; any other difference is an error.

Like the COPAL importer (`importer.py`): every file is read and checked before the first write,
the whole call is one transaction, a world identical to the stored one is skipped and a world id
that exists with other content is an error. Every problem is an `ImportFailure` naming the file
and the field.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from copal_tui.domain.schema import Id, WorldFile
from copal_tui.interchange.errors import ImportFailure
from copal_tui.interchange.loader import read_text
from copal_tui.interchange.strict import loads_json
from store.artifacts import compass, reads, writes
from store.db import Database, write

UNSPECIFIED = "unspecified"
# `risk_tier` is an enum in the world schema (so an exported world re-imports): the smallest
# value stands in for "not stated by the layout".
UNSPECIFIED_RISK_TIER = "low"
LISTS = (("allowlist", "allow"), ("denylist", "deny"))

_ID = TypeAdapter(Id)


@dataclass(frozen=True)
class CompassWorld:
    """One organisation of the layout, checked and ready to write."""

    path: Path  # its policies file: the file errors about the world as a whole name
    world: dict[str, str]
    policies: list[dict[str, str]]
    system_prompt: str | None
    explicit_refusal_prompt: str | None = None


def import_compass(db: Database, folders: list[Path]) -> Counter[str]:
    """Import COMPASS scenario folders; returns how many worlds and policies were written."""
    worlds: list[CompassWorld] = []
    seen: dict[str, Path] = {}
    for folder in folders:
        for w in load_folder(folder):
            first = seen.setdefault(w.world["id"], w.path)
            if first != w.path:
                raise ImportFailure(w.path, f"world id {w.world['id']!r} is also the id of "
                                            f"{first}", field="id")
            worlds.append(w)
    written: Counter[str] = Counter()
    with write(db):
        for w in worlds:
            if _stored_is_identical(db, w):
                stored = reads.world(db, w.world["id"])
                if w.explicit_refusal_prompt and stored is not None and \
                        stored.explicit_refusal_prompt is None:
                    _set_explicit_refusal_prompt(db, w.world["id"], w.explicit_refusal_prompt)
                    written["explicit-refusal prompt"] += 1
                continue
            writes.insert_world(db, w.world, source_path=str(w.path))
            compass.set_system_prompt(db, w.world["id"], w.system_prompt)
            written["world"] += 1
            writes.insert_policies(db, w.world["id"], w.policies)
            written["policy"] += len(w.policies)
            if w.explicit_refusal_prompt:
                _set_explicit_refusal_prompt(db, w.world["id"], w.explicit_refusal_prompt)
                written["explicit-refusal prompt"] += 1
    return written


def _set_explicit_refusal_prompt(db: Database, world_id: str, text: str) -> None:
    db.execute("UPDATE worlds SET explicit_refusal_prompt = ? WHERE id = ?", (text, world_id))


def load_folder(folder: Path) -> list[CompassWorld]:
    """Every organisation of one scenario folder, sorted by file name."""
    if not folder.exists():
        raise ImportFailure(folder, "no such folder")
    if not folder.is_dir():
        raise ImportFailure(folder, "not a folder: the COMPASS layout is a folder holding "
                                    "policies/, contexts/ and optionally system_prompts/")
    policies_dir = folder / "policies"
    if not policies_dir.is_dir():
        raise ImportFailure(folder, "no policies/ folder (expected policies/<Org>.json)")
    # Dot files are editor and OS droppings (e.g. macOS `._Org.json`), not organisations.
    files = sorted(p for p in policies_dir.glob("*.json")
                   if p.is_file() and not p.name.startswith("."))
    if not files:
        raise ImportFailure(policies_dir, "no <Org>.json files")
    return [load_org(folder, p) for p in files]


def load_org(folder: Path, policies_path: Path) -> CompassWorld:
    org = policies_path.stem
    world_id = slug(org)
    if not world_id:
        raise ImportFailure(policies_path, f"cannot make a world id from the file name {org!r} "
                                           "(no letters or digits)", field="id")
    policies = _policies(policies_path)
    context_path = folder / "contexts" / f"{org}.txt"
    if not context_path.is_file():
        raise ImportFailure(context_path, f"missing context file for {policies_path.name} "
                                          f"(expected contexts/{org}.txt)")
    context = read_text(context_path).strip()
    prompt = _optional_text(folder / "system_prompts" / f"{org}.txt")
    refusal = _optional_text(folder / "system_prompts" / "explicit_refusal_prompts" / f"{org}.txt")
    world = {"id": world_id, "name": org, "industry": UNSPECIFIED, "use_case": UNSPECIFIED,
             "risk_tier": UNSPECIFIED_RISK_TIER, "context": context}
    try:
        # The world schema of `copal import`, so a COMPASS world is also a valid COPAL world
        # (and exports as records that import again).
        WorldFile.model_validate({**world, "policies": policies})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err["loc"])
        raise ImportFailure(policies_path, str(err["msg"]).removeprefix("Value error, "),
                            field=field) from None
    return CompassWorld(policies_path, world, policies, prompt, refusal)


def _optional_text(path: Path) -> str | None:
    return read_text(path).strip() if path.is_file() else None


def slug(name: str) -> str:
    """World id of an organisation name: ASCII lower case, runs of other characters -> `-`.

    `AutoViaMotors` -> `autoviamotors`, `Lumen Telecom` -> `lumen-telecom`, `Café_Nord` ->
    `cafe-nord` (like the sample world ids; CamelCase is not split).
    """
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:200].rstrip("-")


def _policies(path: Path) -> list[dict[str, str]]:
    text = read_text(path)
    try:
        # A policy name given twice is an error, not a policy quietly dropped (strict.py).
        doc = loads_json(text, path)
    except json.JSONDecodeError as exc:
        raise ImportFailure(path, f"bad JSON: {exc.msg} (column {exc.colno})",
                            line=exc.lineno) from None
    if not isinstance(doc, dict):
        raise ImportFailure(path, 'a policies file must be a JSON object '
                                  '{"allowlist": {...}, "denylist": {...}}')
    for key in doc:
        if key not in dict(LISTS):
            raise ImportFailure(path, "unknown field (a policies file has only allowlist and "
                                      "denylist)", field=key)
    out: list[dict[str, str]] = []
    kinds: dict[str, str] = {}
    for key, kind in LISTS:
        if key not in doc:
            raise ImportFailure(path, "missing field", field=key)
        entries = doc[key]
        if not isinstance(entries, dict):
            raise ImportFailure(path, "must be an object of {name: description}", field=key)
        if not entries:
            raise ImportFailure(path, "is empty: a COMPASS world needs at least one allowlist "
                                      "and one denylist policy", field=key)
        for name, description in entries.items():
            where = f"{key}.{name}"
            if name in kinds:
                raise ImportFailure(path, f"policy name {name!r} is in both the allowlist and "
                                          "the denylist", field=where)
            try:
                _ID.validate_python(name)
            except ValidationError:
                raise ImportFailure(path, f"{name!r} is not a usable policy id (1-200 letters, "
                                          "digits and _ . : / @ + -, starting with a letter or "
                                          "digit)", field=where) from None
            if not isinstance(description, str):
                raise ImportFailure(path, f"the description must be a string, not "
                                          f"{_json_type(description)}", field=where)
            if not description.strip():
                raise ImportFailure(path, "the description is empty", field=where)
            kinds[name] = kind
            out.append({"id": name, "kind": kind, "text": description.strip()})
    return out


def _stored_is_identical(db: Database, w: CompassWorld) -> bool:
    """True when the world is stored with exactly this content; an error when it differs.
    The explicit-refusal prompt counts too, except that a world stored without one matches:
    the caller adds it."""
    stored = reads.world(db, w.world["id"])
    if stored is None:
        return False
    stored_policies = [asdict(p) for p in reads.policies(db, w.world["id"])]
    differs = next((what for what, same in (
        *((k, getattr(stored, k) == v) for k, v in w.world.items()),
        ("system prompt", stored.system_prompt == w.system_prompt),
        ("policies", stored_policies == w.policies),
        ("explicit-refusal prompt", stored.explicit_refusal_prompt
         in (None, w.explicit_refusal_prompt)),
    ) if not same), None)
    if differs is None:
        return True
    raise ImportFailure(w.path, f"world {w.world['id']!r} already exists with other content "
                                f"({differs} differs)", field="id")


def _json_type(value: object) -> str:
    return {dict: "an object", list: "a list", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)
