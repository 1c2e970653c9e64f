"""The bundle's smaller ICU data (packaging/icu_data.py): what is left out, and Qt still working
with it (collation, casing, locales, time zones) in a process that loads only the slim data."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.helpers import ROOT

sys.path.insert(0, str(ROOT / "packaging"))
from icu_data import dropped, slim_icu_data

QT_LIB = Path(__import__("PySide6").__file__).parent / "Qt" / "lib"


def test_names_in_other_languages_and_legacy_charsets_are_left_out() -> None:
    for item in ("curr/de.res", "lang/ja.res", "zone/fr.res", "unit/es.res", "region/it.res",
                 "translit/root.res", "rbnf/en.res", "brkitr/cjdict.dict", "gb18030.cnv",
                 "coll/zh.res", "coll/de_.res", "de.res", "zh_Hant_TW.res"):
        assert dropped(item), item


def test_what_qt_reads_stays() -> None:
    for item in ("root.res", "en.res", "en_GB.res", "pool.res", "res_index.res",
                 "coll/root.res", "coll/ucadata.icu", "coll/en.res", "coll/res_index.res",
                 "cnvalias.icu", "nfkc.nrm", "uts46.nrm", "zoneinfo64.res", "metaZones.res",
                 "likelySubtags.res", "supplementalData.res", "brkitr/root.res",
                 "brkitr/line.brk", "unames.icu", "icuver.res"):
        assert not dropped(item), item


_QT_WITH_SLIM_DATA = """
from PySide6.QtCore import QCollator, QLocale, QTimeZone, QByteArray
names = ["zebra", "Äpfel", "apple", "Zoo"]
collator = QCollator(QLocale("de_DE"))
print(sorted(names, key=collator.sortKey) == ["Äpfel", "apple", "zebra", "Zoo"])
print(QLocale("tr_TR").toUpper("i") == "İ")
print(QTimeZone(QByteArray(b"Europe/Berlin")).isValid())
print(QLocale("ja_JP").toString(1234567) != "")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bundle's Linux ICU")
def test_qt_works_with_the_slim_data(tmp_path: Path) -> None:
    libraries = sorted(QT_LIB.glob("libicudata.so.*"))
    if not libraries or not all(shutil.which(t) for t in ("icupkg", "genccode", "cc")):
        pytest.skip("no ICU in the Qt wheel here, or no ICU tools: the build ships it whole")
    slim = slim_icu_data(libraries[0], tmp_path / "icu")
    assert slim is not None
    assert slim.stat().st_size < libraries[0].stat().st_size / 5
    proc = subprocess.run([sys.executable, "-c", _QT_WITH_SLIM_DATA], capture_output=True,
                          text=True, timeout=60, env={"LD_PRELOAD": str(slim),
                                                      "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True"] * 4, proc.stdout + proc.stderr
