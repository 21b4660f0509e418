"""The little of Kustomize that deploy/kubernetes/kustomization.yaml uses, so a test can render it
without the kustomize binary: the resources list, the namespace and common labels (metadata only,
as `labels:` without includeSelectors or includeTemplates). Anything else is refused, so the
kustomization cannot come to use a feature this renderer would silently skip."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

HANDLED = {"apiVersion", "kind", "namespace", "labels", "resources"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass",
                  "PriorityClass", "CustomResourceDefinition"}


class NotHandled(Exception):
    """The kustomization uses a feature this renderer does not implement."""


def render(folder: Path) -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    unknown = set(kustomization) - HANDLED
    if unknown:
        raise NotHandled(f"kustomization fields this renderer does not implement: {sorted(unknown)}")
    labels = _label_pairs(kustomization.get("labels", []))
    objects = [obj for name in kustomization["resources"] for obj in _documents(folder / name)]
    for obj in objects:
        metadata = obj.setdefault("metadata", {})
        if kustomization.get("namespace") and obj["kind"] not in CLUSTER_SCOPED:
            metadata["namespace"] = kustomization["namespace"]
        metadata["labels"] = {**metadata.get("labels", {}), **labels}
    return objects


def _label_pairs(entries: list[dict[str, Any]]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for entry in entries:
        if set(entry) - {"pairs"}:
            raise NotHandled(f"labels options this renderer does not implement: {sorted(set(entry) - {'pairs'})}")
        pairs.update(entry["pairs"])
    return pairs


def _documents(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        raise NotHandled(f"{path.name}: a folder resource (a base) is not implemented")
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]
