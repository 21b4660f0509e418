"""Install npm from the npm registry at a pinned version, checked against its published digest
(the Containerfile's build stage: Debian's npm package pulls hundreds of node-* packages).

`python3 fetch-npm.py VERSION sha512-DIGEST DEST`: DEST/bin/npm-cli.js, linked as /usr/local/bin/npm."""
from __future__ import annotations

import base64
import hashlib
import io
import os
import sys
import tarfile
import urllib.request
from pathlib import Path

REGISTRY = "https://registry.npmjs.org/npm/-/npm-{version}.tgz"


def fetch(version: str, integrity: str) -> bytes:
    with urllib.request.urlopen(REGISTRY.format(version=version), timeout=120) as answer:
        body: bytes = answer.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(body).digest()).decode()
    if digest != integrity:
        raise SystemExit(f"npm {version}: digest {digest} is not the pinned {integrity}")
    return body


def unpack(body: bytes, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as archive:
        for member in archive.getmembers():
            if not member.name.startswith("package/") or not (member.isfile() or member.isdir()):
                continue
            member.name = member.name.removeprefix("package/")
            archive.extract(member, dest, filter="data")


def main(argv: list[str]) -> int:
    version, integrity, dest = argv[0], argv[1], Path(argv[2])
    unpack(fetch(version, integrity), dest)
    os.symlink(dest / "bin" / "npm-cli.js", "/usr/local/bin/npm")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
