"""The one thing pyproject.toml cannot say: the top-level `resources/` folder ships inside the
package as `vak_desktop.resources` (every file under it, at any depth), so the wheel, an editable
install and the PyInstaller bundle all find it through `vak_desktop.shipped`. The rest of the
project's metadata is in pyproject.toml.
"""

from setuptools import find_namespace_packages, find_packages, setup

# resources/ and each folder under it (chat_templates, icons, ...) as data-only packages
RESOURCES = ["vak_desktop.resources"] + [
    f"vak_desktop.resources.{name}" for name in find_namespace_packages(where="resources")
]

setup(
    packages=[*find_packages(include=["vak_desktop", "vak_desktop.*"]), *RESOURCES],
    package_dir={"vak_desktop.resources": "resources"},
    package_data={"vak_desktop.resources": ["**/*"]},
)
