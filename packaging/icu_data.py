"""A smaller ICU data library for the Linux bundle (PyInstaller spec, Linux only).

Qt links ICU, whose data library (libicudata, ~30 MiB) carries what Qt never reads in Tebiki:
the names of currencies, languages, regions, units and time zones in every language (Qt has
its own CLDR tables for QLocale), transliteration and number spell-out rules, the legacy
charset converters (Qt decodes UTF-8/16/32 and Latin-1 itself; Tebiki decodes files in
Python), the dictionaries of Thai/Khmer/CJK word breaking (Qt's text layout breaks lines with
its own Unicode tables), and the collation tailorings and main locale data of languages other
than English (a collator for them falls back to the root order). Casing, normalisation and the
Unicode properties stay (they are in libicuuc or kept below).

``slim_icu_data`` rebuilds the library from the bundle's own data with those items removed,
using ICU's tools (``icupkg``, ``genccode``: Debian/Ubuntu's icu-devtools) and a C compiler.
When one is missing the full library is shipped and the build says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

# Folders of the data package dropped whole (what their items hold is said above).
DROPPED_FOLDERS = ("curr/", "lang/", "region/", "unit/", "zone/", "translit/", "rbnf/")
# Locale data kept in the folders that are otherwise thinned.
KEPT_LOCALES = ("root", "en", "res_index", "pool")
_LOCALE_RES = re.compile(r"^(?P<locale>[a-z]{2,3}(?:_[A-Za-z0-9]*)*)\.res$")


def dropped(item: str) -> bool:
    """Whether the data item ``item`` ("coll/de.res", as ``icupkg -l`` lists it) is left
    out."""
    path = item
    if path.startswith(DROPPED_FOLDERS) or path.endswith((".cnv", ".dict")):
        return True
    folder, _, name = path.rpartition("/")
    if folder not in ("", "coll"):
        return False
    match = _LOCALE_RES.match(name)
    if match is None:
        return False
    locale = match["locale"]
    return not (locale in KEPT_LOCALES or locale.startswith("en_"))


def _tools() -> dict[str, str] | None:
    # icu-devtools puts icupkg in /usr/sbin, which a non-root PATH often lacks.
    search = os.pathsep.join((os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"))
    found = {name: shutil.which(name, path=search)
             for name in ("icupkg", "genccode", "cc", "readelf")}
    if not all(found.values()):
        return None
    return {name: str(path) for name, path in found.items()}


def _data_symbol(library: Path, readelf: str) -> tuple[str, bytes]:
    """The name of the library's data symbol (``icudt73_dat``) and its bytes."""
    symbols = subprocess.run([readelf, "-sW", "--dyn-syms", str(library)], check=True,
                             capture_output=True, text=True).stdout
    found = re.search(r"([0-9a-f]+)\s+(0x[0-9a-f]+|\d+)\s+OBJECT\s+GLOBAL\s+\S+\s+\d+\s+"
                      r"(icudt\d+_dat)\b", symbols)
    if found is None:
        raise ValueError(f"{library.name} has no icudtNN_dat symbol")
    address, size, name = int(found[1], 16), int(found[2], 0), found[3]
    sections = subprocess.run([readelf, "-SW", str(library)], check=True,
                              capture_output=True, text=True).stdout
    for line in sections.splitlines():
        section = re.search(r"\]\s+\S+\s+\S+\s+([0-9a-f]{16})\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if section is None:
            continue
        start, offset, length = (int(section[i], 16) for i in (1, 2, 3))
        if start <= address < start + length:
            with library.open("rb") as file:
                file.seek(offset + address - start)
                return name, file.read(size)
    raise ValueError(f"{library.name}: the section of {name} was not found")


def slim_icu_data(library: Path, work: Path) -> Path | None:
    """A copy of ``library`` (libicudata.so.NN) with the items ``dropped`` names removed, built
    in ``work``; None (with a note) when the tools are missing or the library is not one."""
    tools = _tools()
    if tools is None:
        print("note: icupkg, genccode or cc not found; shipping the full ICU data (~30 MiB)")
        return None
    work.mkdir(parents=True, exist_ok=True)
    symbol, data = _data_symbol(library, tools["readelf"])
    entry = symbol.removesuffix("_dat")  # icudt73
    # icupkg reads a package only under its own name (icudt73l.dat)
    (work / "full").mkdir(exist_ok=True)
    full, slim = work / "full" / f"{entry}l.dat", work / f"{entry}l.dat"
    full.write_bytes(data)
    items = subprocess.run([tools["icupkg"], "-l", str(full)], check=True,
                           capture_output=True, text=True).stdout.split()
    removed = [item for item in items if dropped(item)]
    listing = work / "removed.txt"
    listing.write_text("".join(f"{item}\n" for item in removed))
    slim.unlink(missing_ok=True)
    # --ignore-deps: the word-break rules name the dictionaries; ICU breaks without them
    subprocess.run([tools["icupkg"], "--ignore-deps", "-r", str(listing), str(full), str(slim)],
                   check=True,
                   capture_output=True)
    subprocess.run([tools["genccode"], "-a", "gcc", "-e", entry, "-d", str(work), str(slim)],
                   check=True, capture_output=True)
    assembly = next(work.glob(f"{entry}l_dat.S"))
    out = work / library.name
    subprocess.run([tools["cc"], "-shared", "-nostdlib", f"-Wl,-soname,{library.name}",
                    "-Wl,-z,noexecstack", "-o", str(out), str(assembly)], check=True,
                   capture_output=True)
    print(f"icu_data_mib: {len(data) / 2**20:.1f} -> {slim.stat().st_size / 2**20:.1f} "
          f"({len(removed)} of {len(items)} items left out)")
    return out
