"""Before Qt: a Linux desktop without the xcb libraries gets the packages to install, by name,
for its distribution, instead of Qt's abort."""

from __future__ import annotations

from pathlib import Path

import pytest

from vak_desktop.ui.shell import platform_check
from vak_desktop.ui.shell.platform_check import (
    XCB_LIBRARIES,
    _family,
    debian_packages,
    display_problem,
)

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="the check runs on Linux only")


@pytest.mark.parametrize(
    ("os_release", "family"),
    [
        ('ID=debian\nVERSION_ID="12"\n', 0),
        ("ID=ubuntu\nID_LIKE=debian\n", 0),
        ('ID="fedora"\n', 1),
        ('ID="rocky"\nID_LIKE="rhel centos fedora"\n', 1),
        ("ID=manjaro\nID_LIKE=arch\n", 2),
        ("", 0),
    ],
)
def test_the_distribution_family_is_read_from_os_release(os_release: str, family: int) -> None:
    assert _family(os_release) == family


def test_offscreen_wayland_and_other_systems_are_not_checked() -> None:
    assert display_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert display_problem({"WAYLAND_DISPLAY": "wayland-0"}) is None


def test_no_display_at_all_is_said_with_what_to_do() -> None:
    problem = display_problem({})
    assert problem is not None and "DISPLAY" in problem and "QT_QPA_PLATFORM=offscreen" in problem


def test_each_missing_library_is_named_with_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = {"libxcb-cursor.so.0", "libxcb-icccm.so.4"}

    def loads(library: str) -> str | None:
        if library.endswith("libqxcb.so") or library in missing:
            return f"{sorted(missing)[0]}: cannot open shared object file"
        return None

    monkeypatch.setattr(platform_check, "_loads", loads)
    problem = display_problem({"DISPLAY": ":0"})
    assert problem is not None
    release = Path("/etc/os-release")
    family = _family(release.read_text() if release.is_file() else "")
    for name in missing:
        assert name in problem
        assert XCB_LIBRARIES[name][family] in problem.splitlines()[-1]
    assert ("apt-get", "dnf", "pacman")[family] in problem


def test_the_real_plugin_check_agrees_with_the_loader() -> None:
    missing, error = platform_check.missing_libraries()
    if error is None:  # the plugin loads: nothing is reported missing
        assert missing == []
    assert set(missing) <= set(XCB_LIBRARIES)


def test_the_deb_depends_on_every_library_the_plugin_needs() -> None:
    packages = debian_packages()
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxkbcommon-x11-0"} <= set(packages)
    assert packages == sorted(set(packages))
